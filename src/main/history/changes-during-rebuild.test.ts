import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createObjectStore } from './object-store'
import { changesSince } from './queries'
import { changesSinceInCommits } from './changes-in-commits'
import { IndexFile } from './index-file'
import { gitCli, indexDirIn, tempDataDir, userWrite } from './test-helpers'
import type { VersionedMemory } from './types'
import { openVersionedMemory } from './versioned-memory'

// `changesSince` (the review's "the person edited this file" check, asked before each of
// Claude's writes) while the side index is found damaged and rebuilt: answered from the
// commits instead of refused, so that Claude's write is neither refused for the rebuild
// (review on) nor committed without its flags (review off).

let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_700_000_000_000
const now = () => (clock += 60_000)

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

const claude = (toolUseId: string) =>
  ({ actor: 'claude', conversationId: 'conv-1', toolUseId }) as const

const open = (): Promise<VersionedMemory> =>
  openVersionedMemory({ dataDir, now, watch: false, maintenance: false })

/** The commits git lists for `paths` (relative, followed as one) since `since` ms, newest first. */
function gitSince(since: number, ...paths: string[]): string[] {
  const after = since > 0 ? [`--since=${Math.floor(since / 1000)}`] : []
  const out = gitCli(dataDir, 'log', '--format=%H', ...after, 'main', '--', ...paths).trim()
  return out ? out.split('\n') : []
}

// Long names, so that the one damaged below lies before the newest bytes open checks: it is
// found when the names are first read, by this very query.
const long = `${'p'.repeat(100)}/${'p'.repeat(70)}`
const file = (k: number) => `${long}-${String(k).padStart(2, '0')}.md`

describe('changes since a moment, while the side index is rebuilt', () => {
  it('are answered from the commits, as the index answers them and as git lists them', async () => {
    let memory = await open()
    for (let k = 0; k < 100; k++) {
      await memory.execute(
        { command: 'create', path: `/memories/${file(k)}`, file_text: `v1 of ${k}\n` },
        claude(`toolu_c${k}`),
      )
    }
    const windowStart = clock + 30_000
    await userWrite(memory, `/memories/${file(3)}`, 'v2 of 3, the person’s\n')
    await memory.execute(
      { command: 'rename', old_path: `/memories/${file(3)}`, new_path: '/memories/kept.md' },
      claude('toolu_mv'),
    )
    await memory.execute(
      { command: 'str_replace', path: '/memories/kept.md', old_str: 'v2', new_str: 'v3' },
      claude('toolu_e'),
    )
    await memory.execute(
      { command: 'str_replace', path: `/memories/${file(50)}`, old_str: 'v1', new_str: 'v2' },
      claude('toolu_e50'),
    )
    const answers = async () =>
      Promise.all([
        memory.changesSince('/memories/kept.md', windowStart),
        memory.changesSince('/memories', windowStart),
        memory.changesSince(`/memories/${file(50)}`, 0),
        memory.changesSince('/memories/none.md', 0),
      ])
    const fromIndex = await answers()
    // Git's second opinion: the renamed file's two names, the folder, one file since ever.
    expect(fromIndex.map((list) => list.map((c) => c.oid))).toEqual([
      gitSince(windowStart, 'kept.md', file(3)),
      gitSince(windowStart),
      gitSince(0, file(50)),
      [],
    ])
    expect(fromIndex[0]?.map((c) => c.actor)).toEqual(['claude', 'claude', 'user'])
    await memory.close()

    // `…-03.md` becomes `…-0X.md` in the index's names: a name no file ever had.
    const namesFile = path.join(indexDirIn(dataDir), 'names')
    const names = await readFile(namesFile)
    const at = names.indexOf(Buffer.from(file(3)))
    expect(names.length - at).toBeGreaterThan(16384)
    names[at + long.length + 2] = 'X'.charCodeAt(0)
    await writeFile(namesFile, names)

    memory = await open()
    // The first query reads the names, meets the damage, and answers from the commits.
    expect(await answers()).toEqual(fromIndex)
    // Every later one too, until the rebuild is in; then from the index again.
    expect(await answers()).toEqual(fromIndex)
    await memory.maintain()
    expect(await answers()).toEqual(fromIndex)
    await memory.close()
  })

  it('reads the same as the index over a history with its clock set back', async () => {
    const memory = await open()
    for (let k = 0; k < 5; k++) {
      await memory.execute(
        { command: 'create', path: `/memories/n${k}.md`, file_text: `${k}\n` },
        claude(`toolu_${k}`),
      )
      // Every other commit dated an hour before the one under it.
      clock += k % 2 === 0 ? -3_600_000 : 3_600_000
    }
    const head = memory.head()
    await memory.close()
    const store = createObjectStore(path.join(dataDir, 'history.git'))
    const index = IndexFile.open(indexDirIn(dataDir))
    try {
      for (const since of [0, clock - 3 * 3_600_000, clock - 3_600_000, clock]) {
        for (const where of ['/memories', '/memories/n2.md', '/memories/n4.md']) {
          expect(await changesSinceInCommits(store, head, where, since)).toEqual(
            changesSince(index, where, since),
          )
        }
      }
    } finally {
      index.close()
    }
  })
})
