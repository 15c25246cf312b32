import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// Issue #3, left by the #3 acceptance check: Linux keeps `notes.md` and `Notes.md` apart, so
// Claude's create of one beside the other made two files that macOS and Windows (disks that
// ignore case) hold as one name: a copy or sync of the memory folder there would clash.

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
  await box.write('Notes.md', 'Flat white, no sugar.\n')
  await box.write('Projects/plan.md', 'plan\n')
})
afterEach(() => box.cleanup())

const create = (relative: string, text = 'x\n') =>
  box.run({ command: 'create', path: `/memories/${relative}`, file_text: text })
const rename = (from: string, to: string) =>
  box.run({ command: 'rename', old_path: `/memories/${from}`, new_path: `/memories/${to}` })

describe('a name that differs only in letter case', () => {
  it('refuses a create beside it, naming the file in /memories terms', async () => {
    const before = await snapshot(box.base)
    const result = await create('notes.md')
    expect(result.isError).toBe(true)
    expect(result.errorCode).toBe('conflict')
    expect(text(result)).toBe(
      'Error: Cannot create /memories/notes.md: /memories holds the file /memories/Notes.md, a name that differs only in letter case. macOS and Windows treat the two as one name, so a second file would clash when the memory folder is copied or synced there. Use /memories/Notes.md itself, or another name. Nothing was changed.',
    )
    expect(text(result)).not.toContain(box.root)
    expect(await snapshot(box.base)).toEqual(before)
  })

  it('refuses a create under a folder that differs only in case', async () => {
    const before = await snapshot(box.base)
    const result = await create('projects/new.md')
    expect(result.isError).toBe(true)
    expect(text(result)).toContain(
      'Error: Cannot create /memories/projects/new.md: /memories holds the folder /memories/Projects,',
    )
    expect(await snapshot(box.base)).toEqual(before)
  })

  it('refuses a rename onto it, and a rename of a file into a case twin of its folder', async () => {
    await box.write('other.md', 'other\n')
    const before = await snapshot(box.base)
    const onto = await rename('other.md', 'NOTES.md')
    expect(onto.isError).toBe(true)
    expect(text(onto)).toMatch(
      /^Error: Cannot rename to \/memories\/NOTES\.md: \/memories holds the file \/memories\/Notes\.md, a name that differs only in letter case\./,
    )
    const into = await rename('other.md', 'PROJECTS/other.md')
    expect(into.isError).toBe(true)
    expect(text(into)).toContain('/memories holds the folder /memories/Projects')
    expect(await snapshot(box.base)).toEqual(before)
  })

  it('lets a rename change the case of the entry itself', async () => {
    const file = await rename('Notes.md', 'notes.md')
    expect(text(file)).toBe('Successfully renamed /memories/Notes.md to /memories/notes.md')
    const folder = await rename('Projects', 'projects')
    expect(folder.isError).toBe(false)
    expect(await box.read('notes.md')).toBe('Flat white, no sugar.\n')
    expect(await box.read('projects/plan.md')).toBe('plan\n')
  })

  it('refuses a case change of one twin onto the other, and leaves existing twins readable', async () => {
    await box.write('notes.md', 'lower\n')
    const view = await box.run({ command: 'view', path: '/memories/notes.md' })
    expect(text(view)).toContain('lower')
    const edit = await box.run({
      command: 'str_replace',
      path: '/memories/Notes.md',
      old_str: 'Flat',
      new_str: 'Hot',
    })
    expect(edit.isError).toBe(false)
    const overwrite = await create('notes.md', 'replaced\n')
    expect(overwrite.isError).toBe(false)
    const before = await snapshot(box.base)
    const swap = await rename('Notes.md', 'NOTES.md')
    expect(swap.isError).toBe(true)
    expect(text(swap)).toContain('holds the file /memories/notes.md,')
    expect(await snapshot(box.base)).toEqual(before)
  })

  it('still creates names without letters, and names with no twin', async () => {
    for (const name of ['2026-01.md', 'Ideas.md', 'über.md']) {
      const result = await create(name)
      expect(result.isError, name).toBe(false)
    }
  })
})
