/**
 * Test helpers over a git repository's one pack: its objects as git's `verify-pack` lists
 * them (the second opinion on where each record lies), and a byte of a file damaged in place.
 */
import { chmodSync, closeSync, openSync, readdirSync, readSync, writeSync } from 'node:fs'
import path from 'node:path'
import { gitIn } from '../test-helpers'

/** One object of a pack as `git verify-pack -v` lists it. */
export interface ListedRecord {
  readonly oid: string
  readonly type: string
  readonly inPack: number
  readonly offset: number
  readonly delta: boolean
}

/** Every object of the one pack in `gitdir` (a work tree's `.git` in `work`), and its path. */
export function listPack(work: string, gitdir: string): { pack: string; records: ListedRecord[] } {
  const packDir = path.join(gitdir, 'objects', 'pack')
  const idx = readdirSync(packDir).find((name) => name.endsWith('.idx'))!
  const records = gitIn(work, 'verify-pack', '-v', path.join(packDir, idx))
    .split('\n')
    .filter((line) => /^[0-9a-f]{40} /.test(line))
    .map((line) => {
      const [oid, type, , inPack, offset, depth] = line.split(/\s+/) as string[]
      return { oid, type, inPack: Number(inPack), offset: Number(offset), delta: !!depth }
    }) as ListedRecord[]
  return { pack: path.join(packDir, idx.replace(/\.idx$/, '.pack')), records }
}

/** Flips one bit of the byte at `at` in `file`, in place. */
export function flipByte(file: string, at: number): void {
  chmodSync(file, 0o644)
  const fd = openSync(file, 'r+')
  try {
    const byte = Buffer.alloc(1)
    readSync(fd, byte, 0, 1, at)
    byte[0] = byte[0]! ^ 0x40
    writeSync(fd, byte, 0, 1, at)
  } finally {
    closeSync(fd)
  }
}
