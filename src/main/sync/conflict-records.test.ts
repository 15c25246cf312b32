/**
 * Conflict records read from another machine's merge commit and from the saved state: a size
 * the state refuses is dropped where it is read, and one bad record never takes the others
 * with it (review11 N5). A real data folder; the store reads what is on disk.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { viewConflict, withLaterConflict } from './conflicts'
import { conflictsOfMessage } from './engine'
import { createSyncStore, type ConflictRecord } from './store'

const SINCE = 'a'.repeat(40)
const dirs: string[] = []
afterEach(async () => {
  await Promise.all(
    dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 10 })),
  )
})

/** A data folder of its own, removed after the test. */
async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-records-'))
  dirs.push(dir)
  return dir
}

describe('a conflict record from another machine’s merge', () => {
  it('keeps the conflict but not a marker size the saved state would refuse', async () => {
    const message =
      'Merge\n\nConflict: %2Fmemories%2Fx.md\nConflict-Markers: 2000000 %2Fmemories%2Fx.md\n'
    const [record] = conflictsOfMessage(message, SINCE)
    expect(record).toEqual({ path: '/memories/x.md', kind: 'text', since: SINCE })
  })

  it('drops any hostile size where it is read, and the largest it keeps builds nothing', async () => {
    const trailer = (size: string) =>
      `Merge\n\nConflict: %2Fmemories%2Fx.md\nConflict-Markers: ${size} %2Fmemories%2Fx.md\n`
    for (const size of ['0', '-7', '6', '1000001', '9999999', '1000000000', 'NaN', 'abc', '7e3']) {
      expect(conflictsOfMessage(trailer(size), SINCE), size).toEqual([
        { path: '/memories/x.md', kind: 'text', since: SINCE },
      ])
    }
    // The largest size kept: only blocks of that size are the conflict's, found by reading
    // the file's lines, never by building a marker of that length.
    const [largest] = conflictsOfMessage(trailer('1000000'), SINCE)
    expect(largest).toMatchObject({ markerSize: 1_000_000 })
    const text = '<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n'
    expect(await viewConflict(largest as ConflictRecord, 'a', async () => text)).toBeNull()
  })

  it('survives a restart next to the person’s own conflicts', async () => {
    const mine = { path: '/memories/prefs.md', kind: 'text', since: SINCE, markerSize: 7 } as const
    const learned = conflictsOfMessage(
      'Merge\n\nConflict: %2Fmemories%2Fx.md\nConflict-Markers: 2000000 %2Fmemories%2Fx.md\n',
      SINCE,
    )
    const reopened = await savedAndReopened([mine, ...learned])
    expect(reopened.map((c) => c.path)).toEqual(['/memories/prefs.md', '/memories/x.md'])
  })

  it('drops only the record the saved state refuses, not the others', async () => {
    const dir = await dataDir()
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

// Merge #1 made on the laptop (7-markers), merge #2 over its open block on the desktop
// (8-markers), each putting its own side first (review11-fixsync2 R1).
const LAPTOP = '1'.repeat(32)
const DESKTOP = 'd'.repeat(32)
const CROSSED = [
  '<<<<<<< laptop\nA: laptop\n=======\nA: desktop\n>>>>>>> desktop\n',
  'x\n',
  '<<<<<<<< desktop\nB: desktop\n========\nB: laptop\n>>>>>>>> laptop\n',
].join('')
// Merge #1 (on the laptop) and merge #2 (on the desktop) of `prefs.md`.
const first: ConflictRecord = {
  path: '/memories/prefs.md',
  kind: 'text',
  since: SINCE,
  mergedOn: LAPTOP,
  markerSize: 7,
}
const second: ConflictRecord = { ...first, since: 'b'.repeat(40), mergedOn: DESKTOP, markerSize: 8 }

/** The blocks (ours, theirs) `machine` is shown of `record`, the file reading `text`. */
async function sidesIn(text: string, record: ConflictRecord, machine: 'laptop' | 'desktop') {
  const id = machine === 'laptop' ? LAPTOP : DESKTOP
  return (await viewConflict(record, machine, async () => text, id))?.blocks.map((b) => [
    b.ours,
    b.theirs,
  ])
}

/** The blocks of the lines named `lines` as `machine` should see them: its own side first. */
function ownSideFirst(machine: 'laptop' | 'desktop', lines: ReadonlyArray<string>): string[][] {
  const other = machine === 'laptop' ? 'desktop' : 'laptop'
  return lines.map((line) => [`${line}: ${machine}\n`, `${line}: ${other}\n`])
}

/** Each machine sees each block of `record` (the file reading `text`) its own side first. */
async function expectOwnSidesFirst(
  text: string,
  record: ConflictRecord,
  lines: ReadonlyArray<string>,
): Promise<void> {
  expect(await sidesIn(text, record, 'laptop')).toEqual(ownSideFirst('laptop', lines))
  expect(await sidesIn(text, record, 'desktop')).toEqual(ownSideFirst('desktop', lines))
}

/** `records` saved as the sync state, read back by a store opened again. */
async function savedAndReopened(records: ConflictRecord[]): Promise<ReadonlyArray<ConflictRecord>> {
  const dir = await dataDir()
  const store = createSyncStore(dir, createRecordingLogger())
  await store.saveState({ ...(await store.state()), conflicts: records })
  return (await createSyncStore(dir, createRecordingLogger()).state()).conflicts
}

describe('a conflict whose later merge was made on the other machine', () => {
  it('keeps who made each merge, in whichever order the merges are learnt, across a restart', async () => {
    // Learnt oldest first (a sync), or newest first (read back from history after a kill).
    const records = [withLaterConflict(first, second), withLaterConflict(second, first)]
    const reopened = await savedAndReopened(records)
    expect(reopened).toEqual(records)
    for (const record of reopened) await expectOwnSidesFirst(CROSSED, record, ['A', 'B'])
  })

  it('reads a record an older build saved (sizes, no later machines) by the markers’ names', async () => {
    const dir = await dataDir()
    await mkdir(path.join(dir, 'sync'), { recursive: true })
    const older = { ...first, markerSizes: [8] }
    const state = { remoteUrl: null, lastRemote: null, lastSyncedAt: null, conflicts: [older] }
    await writeFile(path.join(dir, 'sync', 'state.json'), JSON.stringify(state))
    const [record] = (await createSyncStore(dir, createRecordingLogger()).state()).conflicts
    expect(record).toEqual(older)
    expect(await sidesIn(CROSSED, record!, 'desktop')).toEqual(ownSideFirst('desktop', ['A', 'B']))
  })
})

// Merge #2's block settled, merge #3 made on the laptop takes 8-markers again (review12-sync D1).
const AGAIN = [
  '<<<<<<< laptop\nA: laptop\n=======\nA: desktop\n>>>>>>> desktop\n',
  'x\n',
  '<<<<<<<< laptop\nC: laptop\n========\nC: desktop\n>>>>>>>> desktop\n',
].join('')

describe('a marker size that comes back in a later merge', () => {
  const third: ConflictRecord = { ...first, since: 'c'.repeat(40), mergedOn: LAPTOP, markerSize: 8 }
  // Where each merge sits along `main`, oldest first.
  const position = (oid: string) => [first.since, second.since, third.since].indexOf(oid)
  it('takes the newest merge’s machine, learnt oldest first or newest first, across a restart', async () => {
    const add = (records: ConflictRecord[]) =>
      records.reduce((kept, later) => withLaterConflict(kept, later, position))
    const records = [add([first, second, third]), add([third, second, first])]
    const reopened = await savedAndReopened(records)
    expect(reopened).toEqual(records)
    for (const record of reopened) await expectOwnSidesFirst(AGAIN, record, ['A', 'C'])
  })

  it('lets a merge recorded after an older build’s record (no commit per size) win', async () => {
    const older: ConflictRecord = {
      ...first,
      markerSizes: [8],
      laterMerges: [{ size: 8, mergedOn: DESKTOP }],
    }
    const record = withLaterConflict(older, third, position)
    expect(await sidesIn(AGAIN, record, 'laptop')).toEqual(ownSideFirst('laptop', ['A', 'C']))
  })
})

describe('a later merge an older build recorded without marker sizes (review12-sync D5)', () => {
  const m1 = `Merge\n\nConflict: %2Fmemories%2Fprefs.md\nConflict-Markers: 7 %2Fmemories%2Fprefs.md\nMerged-On: ${LAPTOP}\n`
  // Made on the desktop by a build that wrote `Merged-On:` but no `Conflict-Markers:`.
  const m2 = `Merge\n\nConflict: %2Fmemories%2Fprefs.md\nMerged-On: ${DESKTOP}\n`
  it('lets the markers’ names decide each block, learnt in either order', async () => {
    const [first] = conflictsOfMessage(m1, SINCE)
    const [second] = conflictsOfMessage(m2, 'b'.repeat(40))
    for (const record of [withLaterConflict(first!, second!), withLaterConflict(second!, first!)]) {
      await expectOwnSidesFirst(CROSSED, record, ['A', 'B'])
    }
  })
})

// hunt13-followups D1: the desktop's merge (B) and the tablet's (C) did not know of each
// other, and both took markers of 8; the desktop's record then learns the tablet's.
const APART = [
  '<<<<<<< laptop\nA: laptop\n=======\nA: desktop\n>>>>>>> desktop\n',
  'x\n',
  '<<<<<<<< desktop\nB: desktop\n========\nB: laptop\n>>>>>>>> laptop\n',
  'y\n',
  '<<<<<<<< tablet\nC: tablet\n========\nC: laptop\n>>>>>>>> laptop\n',
].join('')

describe('one marker size taken by two merges that did not know of each other', () => {
  const TABLET = 'e'.repeat(32)
  const first: ConflictRecord = {
    path: '/memories/prefs.md',
    kind: 'text',
    since: SINCE,
    mergedOn: LAPTOP,
    markerSize: 7,
  }
  const onDesktop: ConflictRecord = {
    ...first,
    since: 'b'.repeat(40),
    mergedOn: DESKTOP,
    markerSize: 8,
  }
  const onTablet: ConflictRecord = {
    ...first,
    since: 'c'.repeat(40),
    mergedOn: TABLET,
    markerSize: 8,
  }
  const position = (oid: string) => [first.since, onDesktop.since, onTablet.since].indexOf(oid)
  // The desktop's and the tablet's merges each descend from the first, not from each other.
  const onOneLine = (a: string, b: string) => a === first.since || b === first.since || a === b

  it('orients each block by its markers’ names, and keeps that across a restart', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-records-'))
    dirs.push(dir)
    const add = (records: ConflictRecord[]) =>
      records.reduce((kept, later) => withLaterConflict(kept, later, position, onOneLine))
    const records = [add([first, onDesktop, onTablet]), add([onTablet, onDesktop, first])]
    const store = createSyncStore(dir, createRecordingLogger())
    await store.saveState({ ...(await store.state()), conflicts: records })
    const reopened = (await createSyncStore(dir, createRecordingLogger()).state()).conflicts
    expect(reopened).toEqual(records)
    const sides = async (record: ConflictRecord, machine: string, id: string) =>
      (await viewConflict(record, machine, async () => APART, id))?.blocks.map((b) => [
        b.ours,
        b.theirs,
      ])
    for (const record of reopened) {
      expect(await sides(record, 'desktop', DESKTOP)).toEqual([
        ['A: desktop\n', 'A: laptop\n'],
        ['B: desktop\n', 'B: laptop\n'],
        // Neither side is the desktop's: as the tablet's merge wrote it.
        ['C: tablet\n', 'C: laptop\n'],
      ])
      expect(await sides(record, 'tablet', TABLET)).toEqual([
        ['A: laptop\n', 'A: desktop\n'],
        ['B: desktop\n', 'B: laptop\n'],
        ['C: tablet\n', 'C: laptop\n'],
      ])
    }
  })
})
