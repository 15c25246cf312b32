import path from 'node:path'
import { atomicWrite, DIR_MODE, type AtomicWriteOptions } from './atomic-write'
import { makeFolders } from './disk'
import type { Logger } from './logger'

/**
 * Writes `value` as JSON to `file` atomically (`atomicWrite`: temp file, fsync, rename),
 * creating its folder 0700; the file is 0600. A crash leaves either the old file or the new
 * one, never half of it. A trailing newline for people who open the file.
 */
export async function writeJsonAtomic(
  file: string,
  value: unknown,
  logger?: Logger,
  options: Pick<AtomicWriteOptions, 'beforeCommit' | 'beforeRename'> = {},
): Promise<void> {
  makeFolders(path.dirname(file), DIR_MODE)
  await atomicWrite(file, `${JSON.stringify(value, null, 2)}\n`, { ...options, logger })
}
