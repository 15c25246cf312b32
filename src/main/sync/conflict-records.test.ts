/**
 * Conflict records read from another machine's merge commit and from the saved state: a size
 * the state refuses is dropped where it is read, and one bad record never takes the others
 * with it (review11 N5). A real data folder; the store reads what is on disk.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { conflictsOfMessage } from './engine'
import { createSyncStore } from './store'

const SINCE = 'a'.repeat(40)
const dirs: string[] = []
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

describe('a conflict record from another machine’s merge', () => {
  it('keeps the conflict but not a marker size the saved state would refuse', async () => {
    const message =
      'Merge\n\nConflict: %2Fmemories%2Fx.md\nConflict-Markers: 2000000 %2Fmemories%2Fx.md\n'
    const [record] = conflictsOfMessage(message, SINCE)
    expect(record).toEqual({ path: '/memories/x.md', kind: 'text', since: SINCE })
  })

  it('survives a restart next to the person’s own conflicts', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-records-'))
    dirs.push(dir)
    const mine = { path: '/memories/prefs.md', kind: 'text', since: SINCE, markerSize: 7 } as const
    const learned = conflictsOfMessage(
      'Merge\n\nConflict: %2Fmemories%2Fx.md\nConflict-Markers: 2000000 %2Fmemories%2Fx.md\n',
      SINCE,
    )
    const store = createSyncStore(dir, createRecordingLogger())
    await store.saveState({ ...(await store.state()), conflicts: [mine, ...learned] })

    const reopened = createSyncStore(dir, createRecordingLogger())
    expect((await reopened.state()).conflicts.map((c) => c.path)).toEqual([
      '/memories/prefs.md',
      '/memories/x.md',
    ])
  })

  it('drops only the record the saved state refuses, not the others', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-records-'))
    dirs.push(dir)
    const store = createSyncStore(dir, createRecordingLogger())
    const mine = { path: '/memories/prefs.md', kind: 'text', since: SINCE, markerSize: 7 } as const
    await store.saveState({ ...(await store.state()), conflicts: [mine] })
    // A record written by hand (or by a build that kept any size) that the schema refuses.
    const file = path.join(dir, 'sync', 'state.json')
    const saved = JSON.parse(await readFile(file, 'utf8'))
    saved.conflicts.push({ ...mine, path: '/memories/x.md', markerSize: 2_000_000 })
    await writeFile(file, JSON.stringify(saved))

    const reopened = createSyncStore(dir, createRecordingLogger())
    expect((await reopened.state()).conflicts).toEqual([mine])
  })
})
