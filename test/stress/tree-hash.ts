/** A fingerprint of a folder tree, for tests that must prove nothing in it changed. */

import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

/** Hash of every entry under `dir`: names, types, modes, link targets and file contents. */
export function treeHash(dir: string): string {
  const hash = createHash('sha256')
  const walk = (current: string, rel: string): void => {
    for (const name of fs.readdirSync(current).sort()) {
      const full = path.join(current, name)
      const stats = fs.lstatSync(full)
      const link = stats.isSymbolicLink() ? fs.readlinkSync(full) : ''
      hash.update(`${rel}/${name}:${stats.mode}:${link}\n`)
      if (stats.isDirectory()) walk(full, `${rel}/${name}`)
      else if (stats.isFile()) hash.update(fs.readFileSync(full))
    }
  }
  walk(dir, '')
  return hash.digest('hex')
}
