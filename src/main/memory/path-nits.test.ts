import fs from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { parseMemoryPath } from './path-rules'
import { makeSandbox, text, type Sandbox } from './test-support'

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
