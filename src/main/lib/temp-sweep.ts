/**
 * Removes the temp files interrupted atomic writes left in Cairn's own folders. A kill during
 * a save leaves `.cairn-tmp-…` holding the whole text (a conversation, the API key), which no
 * later write ever removes. The memory folder and the history sweep their own.
 */

import path from 'node:path'
import { disk } from './disk'
import { TEMP_FILE_PREFIX } from './folders'
import type { Logger } from './logger'

/**
 * Removes every regular file named `TEMP_FILE_PREFIX…` directly in `folders` (missing folders
 * are skipped); returns how many. Only for start-up, with the data folder's lock held: no
 * other Cairn writes there then, so each one is a dead instance's. Best effort: what cannot be
 * removed is logged and left.
 */
export function removeStrayTempFiles(folders: ReadonlyArray<string>, logger: Logger): number {
  let removed = 0
  for (const folder of folders) {
    let names: string[]
    try {
      names = disk.readdirSync(folder).map((dirent) => dirent.name)
    } catch {
      // Not made yet (no conversation, sync never used): nothing to remove.
      continue
    }
    for (const name of names) {
      if (!name.startsWith(TEMP_FILE_PREFIX)) continue
      const file = path.join(folder, name)
      try {
        if (!disk.lstatSync(file).isFile()) continue
        disk.unlinkSync(file)
        removed++
      } catch (error) {
        logger.warn('Could not remove a temp file an interrupted save left', error)
      }
    }
  }
  return removed
}
