import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// Stop 32: the check of a new name against case twins listed its folder on every create
// (19–56 ms in a flat folder of 10,000 under load). The names are now kept between commands
// while the folder's times do not move (folder-names.ts); what another program adds, removes or
// renames there moves them, and must still be met.

let box: Sandbox
let listings: string[]
let restoreDisk: (() => void) | null = null
// Set by a test: folder times reported in whole seconds, as ext4 with 128-byte inodes, ext3 or
// FAT stamp them (a second change in the same second leaves them as the first left them).
let wholeSeconds = false
// Set by a test: run at the next fsync, as another program acting while Cairn's write flushes.
let atFsync: (() => void) | null = null

beforeEach(async () => {
  box = await makeSandbox()
  for (let i = 0; i < 50; i++) await box.write(`flat/note-${i}.md`, `note ${i}\n`)
  // A folder last changed an hour ago, as a memory folder between two sessions.
  const hourAgo = new Date(Date.now() - 3_600_000)
  fs.utimesSync(path.join(box.root, 'flat'), hourAgo, hourAgo)
  // Its change time cannot be put back: it too must be over 2 s old for a listing to be kept.
  await new Promise((resolve) => setTimeout(resolve, 2_100))
  listings = []
  wholeSeconds = false
  atFsync = null
  restoreDisk = setDisk({
    ...nodeDisk,
    fsync(fd) {
      const act = atFsync
      atFsync = null
      act?.()
      return nodeDisk.fsync(fd)
    },
    fstatSync(fd) {
      const stats = nodeDisk.fstatSync(fd)
      if (!wholeSeconds) return stats
      return Object.assign(stats, {
        mtimeMs: Math.floor(stats.mtimeMs / 1000) * 1000,
        ctimeMs: Math.floor(stats.ctimeMs / 1000) * 1000,
      })
    },
    readdirSync(dir) {
      const entries = nodeDisk.readdirSync(dir)
      if (entries.some((entry) => entry.name === 'note-0.md')) listings.push('flat')
      return entries
    },
  })
}, 60_000)
afterEach(async () => {
  restoreDisk?.()
  restoreDisk = null
  await box.cleanup()
})

const create = (name: string) =>
  box.run({ command: 'create', path: `/memories/flat/${name}`, file_text: 'x\n' })
const editFirst = () =>
  box.run({ command: 'str_replace', path: '/memories/flat/first.md', old_str: 'x', new_str: 'y' })

describe('the names a case-twin check listed', () => {
  it('are listed once for creates and edits in a folder nothing else changed', async () => {
    expect((await create('first.md')).isError).toBe(false)
    expect(listings).toEqual(['flat'])
    // Where the file system stamps whole seconds (or ms), each create after a write of Cairn's
    // there lists it again: its times cannot tell a change in the rest of the write's second.
    const times = fs.statSync(path.join(box.root, 'flat'))
    const fine = !Number.isInteger(times.mtimeMs) || !Number.isInteger(times.ctimeMs)
    const after = (creates: number) => Array<string>(fine ? 1 : 1 + creates).fill('flat')
    for (const name of ['Second.md', 'third.md']) expect((await create(name)).isError).toBe(false)
    expect((await editFirst()).isError).toBe(false)
    expect((await create('fourth.md')).isError).toBe(false)
    expect(listings).toEqual(after(3))
    // A name Cairn made is a twin as any other.
    const twin = await create('SECOND.md')
    expect(text(twin)).toContain('/memories/flat holds the file /memories/flat/Second.md,')
    expect(listings).toEqual(after(4))
  })

  it('meet a Notes.md another program added since, and forget one it removed', async () => {
    expect((await create('first.md')).isError).toBe(false)
    await box.write('flat/Notes.md', 'from elsewhere\n')
    const before = await snapshot(box.base)
    const refused = await create('notes.md')
    expect(refused.isError).toBe(true)
    expect(refused.errorCode).toBe('conflict')
    expect(text(refused)).toContain('/memories/flat holds the file /memories/flat/Notes.md,')
    expect(await snapshot(box.base)).toEqual(before)
    fs.renameSync(path.join(box.root, 'flat/Notes.md'), path.join(box.root, 'flat/Other.md'))
    expect((await create('notes.md')).isError).toBe(false)
    expect(text(await create('OTHER.md'))).toContain('holds the file /memories/flat/Other.md,')
    fs.unlinkSync(path.join(box.root, 'flat/Other.md'))
    expect((await create('other.md')).isError).toBe(false)
    expect(
      fs.readdirSync(path.join(box.root, 'flat')).filter((n) => /^(notes|other)\.md$/i.test(n)),
    ).toEqual(expect.arrayContaining(['notes.md', 'other.md']))
  })

  it("meet a twin added outside in the second of Cairn's own create, times in whole seconds", async () => {
    wholeSeconds = true
    const folder = path.join(box.root, 'flat')
    const second = () => Math.floor(fs.statSync(folder).mtimeMs / 1000)
    let sameSecond = 0
    // Tried again when the second ended between the two creates (rarely).
    for (let attempt = 0; attempt < 5 && sameSecond === 0; attempt++) {
      expect((await create(`first-${attempt}.md`)).isError).toBe(false)
      const written = second()
      await box.write(`flat/Notes-${attempt}.md`, 'from elsewhere\n')
      if (second() !== written) continue
      sameSecond++
      // The folder's times are as Cairn's create left them: only a listing tells.
      const refused = await create(`notes-${attempt}.md`)
      expect(text(refused)).toContain(`holds the file /memories/flat/Notes-${attempt}.md,`)
    }
    expect(sameSecond).toBe(1)
  }, 60_000)

  it('meet a twin added outside in the second of a kept listing, its mtime put back', async () => {
    wholeSeconds = true
    const folder = path.join(box.root, 'flat')
    const hourAgo = new Date(Date.now() - 3_600_000)
    const second = () => Math.floor(fs.statSync(folder).ctimeMs / 1000)
    let sameSecond = 0
    for (let attempt = 0; attempt < 5 && sameSecond === 0; attempt++) {
      // As rsync leaves a folder it copied into: its mtime set back to the source's.
      await box.write(`flat/Plan-${attempt}.md`, 'from elsewhere\n')
      fs.utimesSync(folder, hourAgo, hourAgo)
      const changed = second()
      // A refused create lists the folder and writes nothing.
      expect(text(await create(`plan-${attempt}.md`))).toContain(`/flat/Plan-${attempt}.md,`)
      await box.write(`flat/Notes-${attempt}.md`, 'from elsewhere\n')
      fs.utimesSync(folder, hourAgo, hourAgo)
      if (second() !== changed) continue
      sameSecond++
      const refused = await create(`notes-${attempt}.md`)
      expect(text(refused)).toContain(`holds the file /memories/flat/Notes-${attempt}.md,`)
    }
    expect(sameSecond).toBe(1)
  }, 60_000)

  it("meet a Notes.md another program added while Cairn's write flushed, before its rename", async () => {
    expect((await create('first.md')).isError).toBe(false)
    // Between the listing Cairn keeps and the rename of an edit's temp file: the write's fsync.
    atFsync = () => fs.writeFileSync(path.join(box.root, 'flat/Notes.md'), 'from elsewhere\n')
    expect((await editFirst()).isError).toBe(false)
    expect(atFsync).toBeNull()
    const before = await snapshot(box.base)
    const refused = await create('notes.md')
    expect(refused.errorCode).toBe('conflict')
    expect(text(refused)).toContain('/memories/flat holds the file /memories/flat/Notes.md,')
    expect(await snapshot(box.base)).toEqual(before)
  })

  it('meet a twin added outside after a listing was kept, in the same second', async () => {
    expect((await create('first.md')).isError).toBe(false)
    expect((await create('second.md')).isError).toBe(false)
    // Its times put back as they were: only the entries tell the folder changed.
    const folder = path.join(box.root, 'flat')
    const stats = fs.statSync(folder)
    await box.write('flat/THIRD.md', 'from elsewhere\n')
    fs.utimesSync(folder, stats.atime, stats.mtime)
    // The change time cannot be put back: it alone tells.
    expect(text(await create('third.md'))).toContain('holds the file /memories/flat/THIRD.md,')
  })
})
