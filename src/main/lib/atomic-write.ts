/**
 * Writes that never leave half a file: a hidden temp file in the same folder, fsync, rename
 * over the target, fsync the folder. Every domain that keeps files (settings, conversations)
 * writes through `atomicWrite`; the memory folder uses the same write inside folders held
 * open by their handle (`writeFileAtomically`, lib/folders.ts).
 */

import type { Stats } from 'node:fs'
import path from 'node:path'
import { disk, isCode } from './disk'
import { Folder, writeFileAtomically } from './folders'
import { consoleLogger, type Logger } from './logger'

export { DIR_MODE, FILE_MODE, TEMP_FILE_PREFIX } from './folders'

export interface AtomicWriteOptions {
  /**
   * Runs while the temp file is flushed (e.g. the secret scan); if it throws, nothing is
   * renamed and the error is the write's.
   */
  readonly beforeCommit?: () => Promise<void>
  /** Runs after the flush, just before the rename, given the temp file's stat (`WriteOptions`). */
  readonly beforeRename?: (temp: Stats) => Promise<void>
  /** Told when the folder could not be flushed after the rename (default: the console). */
  readonly logger?: Logger
}

/**
 * Writes `data` to `real` atomically. The temp file (`TEMP_FILE_PREFIX`…, opened O_EXCL and
 * O_NOFOLLOW, mode 0600) never survives a failure. The folder must exist.
 */
export async function atomicWrite(
  real: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const folder = openOwnFolder(path.dirname(real))
  try {
    await writeFileAtomically(folder, path.basename(real), data, {
      beforeCommit: options.beforeCommit,
      beforeRename: options.beforeRename,
      logger: options.logger ?? consoleLogger,
    })
  } finally {
    folder.close()
  }
}

// Cairn's own folder (never a memory path, whose links are never followed): one reached
// through a link (a data folder whose real path the caller did not take) is followed, as
// every folder above it already is, rather than failing the save with ENOTDIR.
function openOwnFolder(dir: string): Folder {
  try {
    return Folder.openRoot(dir)
  } catch (error) {
    if (!isCode(error, 'ENOTDIR') && !isCode(error, 'ELOOP')) throw error
    return Folder.openRoot(disk.realpathSync(dir))
  }
}
