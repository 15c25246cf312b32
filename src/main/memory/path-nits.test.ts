import fs from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { parseMemoryPath } from './path-rules'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// Small holes a review found in the path rules (hunt9, defect 10).

let box: Sandbox | null = null
afterEach(async () => {
  await box?.cleanup()
  box = null
})

describe('path rules', () => {
  it('refuses "/memories//" (an empty segment), as it refuses "/memories///"', () => {
    expect(parseMemoryPath('/memories//')).toMatchObject({
      ok: false,
      message: 'The path /memories// is not allowed: it contains an empty segment (//).',
    })
    expect(parseMemoryPath('/memories/a//')).toMatchObject({ ok: false })
    expect(parseMemoryPath('/memories/')).toMatchObject({ ok: true, relative: '' })
    expect(parseMemoryPath('/memories/a/')).toMatchObject({ ok: true, relative: 'a' })
  })

  it.each([
    ['\u3164', 'Hangul filler'],
    ['\u115F', 'Hangul choseong filler'],
    ['\u2800', 'braille blank'],
    ['\u0301', 'a lone combining accent'],
    ['\u00A0', 'no-break space'],
    ['\u3000', 'ideographic space'],
  ])('refuses a name that shows as nothing: %j (%s)', (name) => {
    const result = parseMemoryPath(`/memories/${name}`)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.message).toContain('at least one visible character')
  })

  it.each(['é', 'a\u0301', '日記', '😀', '١٢', 'a\u00A0b', '-'])(
    'accepts the visible name %j',
    (name) => {
      expect(parseMemoryPath(`/memories/${name}`).ok).toBe(true)
    },
  )

  it('refuses only what can be a Windows short name (a base of at most 8 characters)', () => {
    expect(parseMemoryPath('/memories/GIT~1').ok).toBe(false)
    expect(parseMemoryPath('/memories/DRAFT~2.md').ok).toBe(false)
    expect(parseMemoryPath('/memories/meeting-notes~2.md').ok).toBe(true)
  })
})

describe('create of a folder path', () => {
  it('is refused instead of making a file named like the folder', async () => {
    box = await makeSandbox()
    const result = await box.run({ command: 'create', path: '/memories/dir/', file_text: 'x' })
    expect(result.isError).toBe(true)
    expect(text(result)).toBe(
      'Error: /memories/dir/ is a directory path (it ends with /); create needs a file path such as /memories/notes.md.',
    )
    expect(fs.readdirSync(box.root)).toEqual([])
  })
})

describe('a path ending in / names a folder', () => {
  it('rename to it is refused instead of making a file named like the folder', async () => {
    box = await makeSandbox()
    await box.write('a.md', 'one\n')
    const before = await snapshot(box.root)
    const result = await box.run({
      command: 'rename',
      old_path: '/memories/a.md',
      new_path: '/memories/newdir/',
    })
    expect(result).toMatchObject({ isError: true, errorCode: 'invalid-path', mutation: null })
    expect(text(result)).toBe(
      "Error: /memories/newdir/ is a directory path (it ends with /), but /memories/a.md is a file; rename needs the file's full new path, such as /memories/newdir/a.md to move it into that folder, or /memories/newdir to give it that name.",
    )
    expect(await snapshot(box.root)).toBe(before)
    // The path the error suggests works.
    const moved = await box.run({
      command: 'rename',
      old_path: '/memories/a.md',
      new_path: '/memories/newdir/a.md',
    })
    expect(text(moved)).toBe('Successfully renamed /memories/a.md to /memories/newdir/a.md')
    expect(await box.read('newdir/a.md')).toBe('one\n')
  })

  // The listing shows folders as `/memories/drafts/`, so Claude naturally writes both paths that way.
  it.each([
    ['/memories/drafts', '/memories/archive/'],
    ['/memories/drafts/', '/memories/archive/'],
  ])(
    'a folder renamed from %s to %s is renamed to archive, not refused or nested',
    async (old_path, new_path) => {
      box = await makeSandbox()
      await box.write('drafts/n.md', 'n\n')
      await box.write('drafts/sub/m.md', 'm\n')
      const result = await box.run({ command: 'rename', old_path, new_path })
      expect(result).toMatchObject({ isError: false })
      expect(text(result)).toBe('Successfully renamed /memories/drafts to /memories/archive')
      expect(fs.readdirSync(box.root).sort()).toEqual(['archive'])
      expect(await box.read('archive/n.md')).toBe('n\n')
      expect(await box.read('archive/sub/m.md')).toBe('m\n')
    },
  )

  it('a folder renamed to a new folder path ending in / creates the parents it needs', async () => {
    box = await makeSandbox()
    await box.write('a/drafts/n.md', 'n\n')
    const result = await box.run({
      command: 'rename',
      old_path: '/memories/a/drafts/',
      new_path: '/memories/b/archive/',
    })
    expect(text(result)).toBe('Successfully renamed /memories/a/drafts to /memories/b/archive')
    expect(await box.read('b/archive/n.md')).toBe('n\n')
    expect(fs.readdirSync(`${box.root}/a`)).toEqual([])
  })

  it('a folder renamed to an existing folder path ending in / is refused as existing, not nested', async () => {
    box = await makeSandbox()
    await box.write('drafts/n.md', 'n\n')
    await box.write('archive/old.md', 'o\n')
    const before = await snapshot(box.root)
    const result = await box.run({
      command: 'rename',
      old_path: '/memories/drafts',
      new_path: '/memories/archive/',
    })
    expect(result).toMatchObject({ isError: true, errorCode: 'exists', mutation: null })
    expect(text(result)).toBe('Error: The destination /memories/archive already exists')
    expect(await snapshot(box.root)).toBe(before)
  })

  it('a missing source renamed to a path ending in / is reported as missing first', async () => {
    box = await makeSandbox()
    const result = await box.run({
      command: 'rename',
      old_path: '/memories/gone.md',
      new_path: '/memories/x/',
    })
    expect(result).toMatchObject({ isError: true, errorCode: 'not-found', mutation: null })
    expect(text(result)).toBe('Error: The path /memories/gone.md does not exist')
    expect(fs.readdirSync(box.root)).toEqual([])
  })

  it('a file named with a trailing / is refused by every command that takes a path', async () => {
    box = await makeSandbox()
    await box.write('f.md', 'one\n')
    const before = await snapshot(box.root)
    for (const input of [
      { command: 'view', path: '/memories/f.md/' },
      { command: 'str_replace', path: '/memories/f.md/', old_str: 'one', new_str: 'two' },
      { command: 'insert', path: '/memories/f.md/', insert_line: 0, insert_text: 'zero' },
      { command: 'delete', path: '/memories/f.md/' },
      { command: 'rename', old_path: '/memories/f.md/', new_path: '/memories/g.md' },
    ]) {
      const result = await box.run(input)
      expect(result, input.command).toMatchObject({ isError: true, errorCode: 'conflict' })
      expect(text(result)).toBe(
        'Error: /memories/f.md/ ends with /, but /memories/f.md is a file, not a directory.',
      )
    }
    expect(await snapshot(box.root)).toBe(before)
  })

  it('a folder named with a trailing / still works for view, rename and delete', async () => {
    box = await makeSandbox()
    await box.write('dir/x.md', 'x\n')
    expect(text(await box.run({ command: 'view', path: '/memories/dir/' }))).toContain(
      '/memories/dir/x.md',
    )
    expect(
      text(
        await box.run({ command: 'rename', old_path: '/memories/dir/', new_path: '/memories/d2' }),
      ),
    ).toBe('Successfully renamed /memories/dir to /memories/d2')
    expect(text(await box.run({ command: 'delete', path: '/memories/d2/' }))).toBe(
      'Successfully deleted /memories/d2',
    )
  })
})
