import { open as openFile, readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { crc32 } from './objects/crc32'
import { gitCli, indexDirIn, tempDataDir } from './test-helpers'
import type { VersionedMemory } from './types'
import { openVersionedMemory } from './versioned-memory'

// A side index whose record names itself (or a later entry) as its first parent: a damaged or
// crafted `cairn-index/commits`. Open checks the newest record only and the idle check the
// rest later; until then a walk down first parents (blame, a version's file list) went round
// for ever on the main process. It is damage: the read says the index is rebuilt, and the
// rebuild from the commits answers as git does.

let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const now = () => (clock += 1000)

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

const claude = (toolUseId: string) =>
  ({ actor: 'claude', conversationId: 'conv-1', toolUseId }) as const

async function open(): Promise<VersionedMemory> {
  return openVersionedMemory({ dataDir, now, watch: false, maintenance: false })
}

/**
 * Writes `parent` as the first parent's position of the record at `position`, and the record's
 * checksum to match (a crafted file: nothing but its structure tells).
 */
async function nameParent(position: number, parent: number): Promise<void> {
  const dir = indexDirIn(dataDir)
  const commits = await readFile(path.join(dir, 'commits'))
  const at = position * 64
  const record = commits.subarray(at, at + 64)
  record.writeUInt32LE(parent, 20)
  const details = (await readFile(path.join(dir, 'details'))).subarray(
    record.readDoubleLE(32),
    record.readDoubleLE(32) + record.readUInt32LE(40),
  )
  const first = record.readUInt32LE(44)
  const ids = (await readFile(path.join(dir, 'files'))).subarray(
    first * 4,
    (first + record.readUInt32LE(48)) * 4,
  )
  record.writeUInt32LE(crc32(ids, crc32(details, crc32(record.subarray(0, 60)))) >>> 0, 60)
  const file = await openFile(path.join(dir, 'commits'), 'r+')
  await file.write(record, 0, 64, at)
  await file.close()
}

/** Line -> commit, as `git blame` gives them for `file` at main. */
function gitBlame(file: string): string[] {
  return gitCli(dataDir, 'blame', '--porcelain', 'main', '--', file)
    .split('\n')
    .filter((line) => /^[0-9a-f]{40} \d+ \d+/.test(line))
    .map((line) => `${line.split(' ')[2]} ${line.split(' ')[0]}`)
}

describe('a side index record naming itself as its parent', () => {
  for (const [what, parent] of [
    ['itself', 3],
    ['a later entry', 4],
  ] as const) {
    it(`is damage: reads say the index is rebuilt, then answer as git does (${what})`, async () => {
      let memory = await open()
      await memory.execute(
        { command: 'create', path: '/memories/a.md', file_text: 'kept\n' },
        claude('toolu_a'),
      )
      await memory.execute(
        { command: 'create', path: '/memories/notes.md', file_text: 'one\n' },
        claude('toolu_n0'),
      )
      for (let k = 1; k <= 4; k++) {
        await memory.execute(
          { command: 'insert', path: '/memories/notes.md', insert_line: k, insert_text: `${k}\n` },
          claude(`toolu_n${k}`),
        )
      }
      const head = memory.head() as string
      await memory.close()
      await nameParent(3, parent)

      memory = await open()
      // Blame walks down notes.md's versions; a version's file list walks down to a.md.
      await expect(memory.blame('/memories/notes.md')).rejects.toMatchObject({
        code: 'index-rebuilding',
      })
      await expect(memory.listAt(head)).rejects.toMatchObject({ code: 'index-rebuilding' })
      await memory.maintain()
      expect(
        (await memory.blame('/memories/notes.md')).map((l) => `${l.line} ${l.commit.oid}`),
      ).toEqual(gitBlame('notes.md'))
      expect((await memory.listAt(head)).map((entry) => entry.path)).toEqual(
        expect.arrayContaining(['/memories/a.md', '/memories/notes.md']),
      )
      await memory.close()
    })
  }
})
