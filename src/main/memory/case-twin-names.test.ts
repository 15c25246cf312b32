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

beforeEach(async () => {
  box = await makeSandbox()
  for (let i = 0; i < 50; i++) await box.write(`flat/note-${i}.md`, `note ${i}\n`)
  // A folder last changed an hour ago, as a memory folder between two sessions.
  const hourAgo = new Date(Date.now() - 3_600_000)
  fs.utimesSync(path.join(box.root, 'flat'), hourAgo, hourAgo)
  listings = []
  restoreDisk = setDisk({
    ...nodeDisk,
    readdirSync(dir) {
      const entries = nodeDisk.readdirSync(dir)
      if (entries.some((entry) => entry.name === 'note-0.md')) listings.push('flat')
      return entries
    },
  })
})
afterEach(async () => {
  restoreDisk?.()
  restoreDisk = null
  await box.cleanup()
})

const create = (name: string) =>
  box.run({ command: 'create', path: `/memories/flat/${name}`, file_text: 'x\n' })

describe('the names a case-twin check listed', () => {
  it('are listed once for creates and edits in a folder nothing else changed', async () => {
    expect((await create('first.md')).isError).toBe(false)
    expect(listings).toEqual(['flat'])
    for (const name of ['Second.md', 'third.md']) expect((await create(name)).isError).toBe(false)
    const edit = await box.run({
      command: 'str_replace',
      path: '/memories/flat/first.md',
      old_str: 'x',
      new_str: 'y',
    })
    expect(edit.isError).toBe(false)
    expect((await create('fourth.md')).isError).toBe(false)
    expect(listings).toEqual(['flat'])
    // A name Cairn made is a twin as any other.
    const twin = await create('SECOND.md')
    expect(text(twin)).toContain('/memories/flat holds the file /memories/flat/Second.md,')
    expect(listings).toEqual(['flat'])
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
