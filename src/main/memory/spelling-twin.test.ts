import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// Issue #3, left by the last acceptance probe: a name put in the folder outside Cairn in
// decomposed Unicode (`café.md` as macOS writes it: `e` + U+0301) was left out of listings
// (D18), and Claude's `create` of the composed `café.md` then made a second file that looks
// exactly the same, in the folder, the Memory tab and git alike.

const NFC = 'caf\u00e9.md'
const NFD = 'cafe\u0301.md'

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
})
afterEach(() => box.cleanup())

describe('a name the folder holds in another Unicode spelling', () => {
  beforeEach(async () => {
    await box.write(NFD, 'Flat white, no sugar.\n')
    await box.write('keep.md', 'keep\n')
  })

  it('refuses a create that would make a look-alike twin, naming the clash', async () => {
    const before = await snapshot(box.base)
    const result = await box.run({ command: 'create', path: `/memories/${NFC}`, file_text: 'x\n' })
    expect(result.isError).toBe(true)
    expect(result.errorCode).toBe('conflict')
    expect(text(result)).toBe(
      `Error: Cannot create /memories/${NFC}: /memories holds the file /memories/${NFD}, the same name written with other Unicode characters (such as an accent stored apart from its letter, as macOS writes names), put there outside Cairn. Memory paths use the composed spelling, which cannot name that file, and a second file there would look exactly like it. Ask the person to rename it outside Cairn (in their file manager), or use another name. Nothing was changed.`,
    )
    expect(await snapshot(box.base)).toBe(before)
    expect(await fs.readdir(box.root)).toHaveLength(2)
  })

  it('refuses a create given the decomposed spelling too (paths are composed first)', async () => {
    const result = await box.run({ command: 'create', path: `/memories/${NFD}`, file_text: 'x\n' })
    expect(result.errorCode).toBe('conflict')
    expect(await fs.readdir(box.root)).toHaveLength(2)
  })

  it('refuses a rename onto the composed spelling', async () => {
    const before = await snapshot(box.base)
    const result = await box.run({
      command: 'rename',
      old_path: '/memories/keep.md',
      new_path: `/memories/${NFC}`,
    })
    expect(result.errorCode).toBe('conflict')
    expect(text(result)).toMatch(/^Error: Cannot rename to \/memories\/café\.md: \/memories holds/)
    expect(await snapshot(box.base)).toBe(before)
  })

  it.each([
    ['view', { command: 'view', path: `/memories/${NFC}` }],
    [
      'str_replace',
      { command: 'str_replace', path: `/memories/${NFC}`, old_str: 'Flat', new_str: 'Hot' },
    ],
    ['insert', { command: 'insert', path: `/memories/${NFC}`, insert_line: 0, insert_text: 'x' }],
    ['delete', { command: 'delete', path: `/memories/${NFC}` }],
    ['rename', { command: 'rename', old_path: `/memories/${NFC}`, new_path: '/memories/b.md' }],
  ])('answers %s with why the file cannot be reached, not "does not exist"', async (_, input) => {
    const before = await snapshot(box.base)
    const result = await box.run(input)
    expect(result.isError).toBe(true)
    expect(result.errorCode).toBe('not-found')
    expect(text(result)).toBe(
      `Error: The path /memories/${NFC} cannot be reached: /memories holds the file /memories/${NFD}, the same name written with other Unicode characters (such as an accent stored apart from its letter, as macOS writes names), put there outside Cairn. Memory paths use the composed spelling, which cannot name that file. Ask the person to rename it outside Cairn (in their file manager). Nothing was changed.`,
    )
    expect(await snapshot(box.base)).toBe(before)
  })

  it('finds a folder in another spelling along the path', async () => {
    await box.write('Cafe\u0301/menu.md', 'menu\n')
    const before = await snapshot(box.base)
    const result = await box.run({
      command: 'create',
      path: '/memories/Caf\u00e9/notes.md',
      file_text: 'x\n',
    })
    expect(result.errorCode).toBe('conflict')
    expect(text(result)).toContain('/memories holds the folder /memories/Cafe\u0301,')
    expect(await snapshot(box.base)).toBe(before)
  })

  it('finds a name whose only other spelling is a compatibility singleton (KELVIN SIGN)', async () => {
    await box.write('\u212Aey.md', 'k\n')
    const result = await box.run({ command: 'create', path: '/memories/Key.md', file_text: 'x\n' })
    expect(result.errorCode).toBe('conflict')
  })

  it('uses the composed file when both spellings are there', async () => {
    await box.write(NFC, 'composed\n')
    const result = await box.run({ command: 'create', path: `/memories/${NFC}`, file_text: 'y\n' })
    expect(result.isError).toBe(false)
    expect(await box.read(NFC)).toBe('y\n')
    expect(await box.read(NFD)).toBe('Flat white, no sugar.\n')
  })

  it('keeps the official answer for a path that is simply missing', async () => {
    const result = await box.run({ command: 'view', path: '/memories/caf\u00e9s.md' })
    expect(text(result)).toBe(
      'The path /memories/caf\u00e9s.md does not exist. Please provide a valid path.',
    )
    const created = await box.run({
      command: 'create',
      path: '/memories/t\u00e9.md',
      file_text: 'x\n',
    })
    expect(created.isError).toBe(false)
    expect(await fs.readFile(path.join(box.root, 't\u00e9.md'), 'utf8')).toBe('x\n')
  })
})
