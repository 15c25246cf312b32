import type { Stats } from 'node:fs'
import { lstat } from 'node:fs/promises'
import path from 'node:path'

/**
 * `lstat` of `root/relative`, or null when it is missing or any folder on the way is not a
 * real folder (a symlink could lead out of the folder `root`).
 */
export async function lstatInside(root: string, relative: string): Promise<Stats | null> {
  let current = root
  const segments = relative === '' ? [] : relative.split('/')
  for (const [i, segment] of segments.entries()) {
    current = path.join(current, segment)
    const stats = await lstatOrNull(current)
    if (!stats || i === segments.length - 1) return stats
    if (!stats.isDirectory()) return null
  }
  return lstatOrNull(root)
}

/** `lstat` of `file`, or null when it (or a folder on the way) does not exist. */
export async function lstatOrNull(file: string): Promise<Stats | null> {
  try {
    return await lstat(file)
  } catch (error) {
    if (isMissing(error)) return null
    throw error
  }
}

/** True for the errors that mean "nothing is there": ENOENT, or ENOTDIR on the way. */
export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR'
}
