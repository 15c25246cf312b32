import { randomBytes } from 'node:crypto'
import { mkdir, open, rename, rm } from 'node:fs/promises'
import path from 'node:path'

/**
 * Writes `data` to `file` atomically: a temp file in the same folder, flushed to disk, then
 * renamed over the target. A crash leaves either the old file or the new one, never half of it.
 */
export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  options: { mode?: number } = {},
): Promise<void> {
  const dir = path.dirname(file)
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const temp = path.join(dir, `.${path.basename(file)}.tmp-${randomBytes(6).toString('hex')}`)
  const handle = await open(temp, 'w', options.mode ?? 0o600)
  try {
    try {
      await handle.writeFile(data)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(temp, file)
  } catch (error) {
    // A full disk fails the write: no half-written temp file (maybe holding the key) stays.
    await rm(temp, { force: true })
    throw error
  }
}

/** `JSON.stringify` + `writeFileAtomic`, with a trailing newline for people who open the file. */
export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`)
}

/** True for temp files `writeFileAtomic` leaves behind when interrupted. */
export function isAtomicTempFile(name: string): boolean {
  return name.startsWith('.') && /\.tmp-[0-9a-f]{12}$/.test(name)
}
