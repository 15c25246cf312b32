/**
 * The disk side of the handler. Commands reach the memory folder through `ctx.tree` (a
 * `FolderTree`: every folder opened by its handle, never through a symlink, see
 * lib/folders.ts); this module keeps the path-based atomic write that other domains use for
 * their own files (settings), and the modes.
 */

import path from 'node:path'
import { Folder, writeFileAtomically } from '../lib/folders'

export { DIR_MODE, FILE_MODE } from '../lib/folders'
export { isCode } from '../lib/disk'

/**
 * Writes `data` to the file at `real` atomically (temp file, fsync, rename, fsync the folder),
 * as `writeFileAtomically` does inside an open folder. The folder must exist.
 */
export async function atomicWrite(
  real: string,
  data: string | Uint8Array,
  beforeCommit?: () => Promise<void>,
): Promise<void> {
  const folder = Folder.openRoot(path.dirname(real))
  try {
    await writeFileAtomically(folder, path.basename(real), data, beforeCommit)
  } finally {
    folder.close()
  }
}
