import { existsSync, statSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import path from 'node:path'

export const root = path.resolve(__dirname, '../..')

/** The newest modification time of any file below `dir`. */
async function newest(dir: string): Promise<number> {
  let latest = 0
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) {
      latest = Math.max(latest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs)
    }
  }
  return latest
}

/**
 * The path of a built file (`out/...`), after making sure it exists and is not older than the
 * sources it is built from: a test of a stale bundle would test yesterday's code.
 */
export async function builtFile(relative: string, sources: ReadonlyArray<string>): Promise<string> {
  const file = path.join(root, relative)
  if (!existsSync(file)) {
    throw new Error(`${relative} is missing: run \`npm run build\` before this test.`)
  }
  let latest = 0
  for (const source of sources) latest = Math.max(latest, await newest(path.join(root, source)))
  if (statSync(file).mtimeMs < latest) {
    throw new Error(`${relative} is older than its sources: run \`npm run build\` first.`)
  }
  return file
}
