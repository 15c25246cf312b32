import { execFileSync } from 'node:child_process'
import { lstatSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory } from './index'
import { StatCache, statCacheOf } from './stat-cache'
import { fsck, gitCli, tempDataDir } from './test-helpers'

// Open takes a file as unchanged by its stat data alone (size, mtime, ctime, inode) when the
// stat cache recorded them the last time the file was read, and reads only the rest: a reopen
// of 3,000 files read none. An edit made while Cairn was closed must still be found and saved
// as an outside change, whatever the editor did to the stat data: each edit here keeps the
// file's size, and most put its mtime back. The stat cache is asked first whether it still
// vouches for the file (so the test shows the edit was read because the stat told, not because
// nothing was known), and git itself is the second opinion on what was committed.

let dataDir: string
let cleanup: () => Promise<void>
const memories = () => path.join(dataDir, 'memories')
const gitdir = () => path.join(dataDir, 'history.git')

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

const open = () => openVersionedMemory({ dataDir, watch: false, logger: createRecordingLogger() })

/** Files written `ageMs` ago (by their mtime), then opened and closed once: all committed. */
async function seed(ageMs: number): Promise<void> {
  await mkdir(path.join(memories(), 'notes'), { recursive: true })
  const when = new Date(Date.now() - ageMs)
  for (const name of ['notes/a.md', 'notes/b.md', 'c.md']) {
    const file = path.join(memories(), name)
    await writeFile(file, `the first text of ${name}\n`)
    utimesSync(file, when, when)
  }
  const memory = await open()
  await memory.close()
}

/** The blob id the saved stat cache gives `relative` as it is on disk now; undefined: read it. */
function vouchedFor(relative: string): string | undefined {
  return StatCache.load(statCacheOf(gitdir())).lookup(
    relative,
    lstatSync(path.join(memories(), relative)),
  )
}

const touch = (...args: string[]) => execFileSync('touch', args)

/** Same size, other bytes: the edit no size can tell. */
const SAME_SIZE = 'THE FIRST TEXT OF notes/a.md\n'

async function expectFoundAtOpen(): Promise<void> {
  const memory = await open()
  try {
    const newest = (await memory.log({ offset: 0, limit: 1 })).entries[0]!
    expect(newest).toMatchObject({
      actor: 'system',
      command: 'outside',
      paths: ['/memories/notes/a.md'],
    })
    expect(memory.recovery?.kind).toBe('outside-changes')
  } finally {
    await memory.close()
  }
  // git's word: main holds the edit, as an outside change, and nothing else moved.
  expect(gitCli(dataDir, 'show', 'main:notes/a.md')).toBe(SAME_SIZE)
  expect(gitCli(dataDir, 'log', '-1', '--format=%B', 'main')).toMatch(
    /^Changes made outside Cairn while it was closed\n/,
  )
  expect(gitCli(dataDir, 'diff', '--name-only', 'main~1', 'main').trim()).toBe('notes/a.md')
  expect(gitCli(dataDir, '--work-tree', memories(), 'status', '--porcelain')).toBe('')
  fsck(dataDir)
}

describe('an edit made while Cairn was closed, whatever it did to the stat data', () => {
  it('is found when the mtime was put back exactly (touch -r): the ctime moved', async () => {
    await seed(10_000)
    const file = path.join(memories(), 'notes/a.md')
    const reference = path.join(dataDir, 'reference')
    writeFileSync(reference, '')
    touch('-r', file, reference)
    expect(vouchedFor('notes/a.md')).toMatch(/^[0-9a-f]{40}$/)
    writeFileSync(file, SAME_SIZE)
    touch('-r', reference, file)
    expect(lstatSync(file).mtimeMs).toBe(lstatSync(reference).mtimeMs)
    expect(vouchedFor('notes/a.md')).toBeUndefined()
    await expectFoundAtOpen()
  })

  it('is found when the mtime was set back years (touch -d)', async () => {
    await seed(10_000)
    const file = path.join(memories(), 'notes/a.md')
    writeFileSync(file, SAME_SIZE)
    touch('-d', '2001-02-03 04:05:06', file)
    expect(vouchedFor('notes/a.md')).toBeUndefined()
    await expectFoundAtOpen()
  })

  it('is found when the file was replaced by a rename, its mtime copied first', async () => {
    await seed(10_000)
    const file = path.join(memories(), 'notes/a.md')
    // An editor's safe save: a new file beside it, given the old one's times, moved over it.
    const beside = path.join(dataDir, 'a.md.new')
    writeFileSync(beside, SAME_SIZE)
    touch('-r', file, beside)
    execFileSync('mv', [beside, file])
    expect(vouchedFor('notes/a.md')).toBeUndefined()
    await expectFoundAtOpen()
  })

  it('is found when made in the same second as the read that recorded the file (racily clean)', async () => {
    // Written just now: the open reads each file in the same second as its mtime, so the
    // cache cannot vouch for what an edit in that second could leave with the same stat data.
    await seed(0)
    const file = path.join(memories(), 'notes/a.md')
    const recordedAt = lstatSync(file)
    expect(vouchedFor('notes/a.md')).toBeUndefined()
    writeFileSync(file, SAME_SIZE)
    utimesSync(file, recordedAt.atime, recordedAt.mtime)
    expect(lstatSync(file).mtimeMs).toBe(recordedAt.mtimeMs)
    await expectFoundAtOpen()
  })

  it('is found when the stat cache is damaged (every file read)', async () => {
    await seed(10_000)
    const file = path.join(memories(), 'notes/a.md')
    const before = lstatSync(file)
    const saved = statCacheOf(gitdir())
    const bytes = readFileSync(saved)
    bytes[bytes.length - 7]! ^= 0x40
    writeFileSync(saved, bytes)
    writeFileSync(file, SAME_SIZE)
    utimesSync(file, before.atime, before.mtime)
    expect(vouchedFor('notes/a.md')).toBeUndefined()
    await expectFoundAtOpen()
  })

  it('leaves an untouched folder unread at the next open', async () => {
    await seed(10_000)
    for (const name of ['notes/a.md', 'notes/b.md', 'c.md']) {
      expect(vouchedFor(name)).toBe(gitCli(dataDir, 'rev-parse', `main:${name}`).trim())
    }
    const memory = await open()
    try {
      expect(memory.recovery).toBeNull()
    } finally {
      await memory.close()
    }
    expect(gitCli(dataDir, 'rev-list', '--count', 'main').trim()).toBe('1')
  })
})
