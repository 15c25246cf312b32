import { describe, expect, it } from 'vitest'
import { isAddressableName, MAX_DEPTH, MAX_PATH_LENGTH, parseMemoryPath } from './path-rules'

describe('parseMemoryPath', () => {
  it('accepts the root, with or without a trailing slash', () => {
    expect(parseMemoryPath('/memories')).toEqual({ ok: true, virtual: '/memories', relative: '' })
    expect(parseMemoryPath('/memories/')).toEqual({ ok: true, virtual: '/memories', relative: '' })
  })

  it('accepts nested paths and drops one trailing slash', () => {
    expect(parseMemoryPath('/memories/projects/cairn.md')).toEqual({
      ok: true,
      virtual: '/memories/projects/cairn.md',
      relative: 'projects/cairn.md',
    })
    expect(parseMemoryPath('/memories/notes/')).toMatchObject({ ok: true, relative: 'notes' })
  })

  it('accepts ordinary names with spaces, dashes, unicode and inner dots', () => {
    for (const name of ['my notes.md', 'a-b_c.v2.txt', 'café.md', '日本語.md', '100% sure.md']) {
      expect(parseMemoryPath(`/memories/${name}`)).toMatchObject({ ok: true, relative: name })
    }
  })

  it('normalizes to NFC before checking', () => {
    const decomposed = '/memories/cafe\u0301.md'
    expect(parseMemoryPath(decomposed)).toMatchObject({
      ok: true,
      virtual: '/memories/caf\u00e9.md',
    })
  })

  it.each([
    ['', 'empty'],
    ['memories/a.md', 'relative'],
    ['/memoriesX/a.md', 'prefix look-alike'],
    ['/memories-old', 'prefix look-alike'],
    ['/etc/passwd', 'absolute non-memory'],
    ['/Memories/a.md', 'wrong case root'],
    ['/memories//a.md', 'empty segment'],
    ['/memories/a//b', 'empty segment'],
    ['/memories/./a', 'dot segment'],
    ['/memories/../a', 'dotdot segment'],
    ['/memories/a/../../x', 'dotdot segment'],
    ['/memories\\..\\x', 'backslash'],
    ['/memories/a\\b', 'backslash'],
    ['/memories/%2e%2e/x', 'percent-encoded'],
    ['/memories/a%2Fb', 'percent-encoded'],
    ['/memories/a\u0000b', 'NUL'],
    ['/memories/a\nb', 'newline'],
    ['/memories/a\u007fb', 'DEL'],
    ['/memories/a\u200bb', 'zero-width space'],
    ['/memories/a\u202eb', 'bidi override'],
    ['/memories/a\u2028b', 'line separator'],
    ['/memories/\ud800x', 'lone surrogate'],
    ['/memories/a:b', 'colon'],
    ['/memories/C:', 'drive letter'],
    ['/memories/a<b', 'windows-invalid'],
    ['/memories/a|b', 'windows-invalid'],
    ['/memories/a?b', 'windows-invalid'],
    ['/memories/a*b', 'windows-invalid'],
    ['/memories/a"b', 'windows-invalid'],
    ['/memories/CON', 'reserved name'],
    ['/memories/nul.txt', 'reserved name with extension'],
    ['/memories/com1', 'reserved name'],
    ['/memories/LPT9.md', 'reserved name'],
    ['/memories/a/aux', 'reserved name deeper'],
    ['/memories/name.', 'trailing dot'],
    ['/memories/name ', 'trailing space'],
    ['/memories/ name', 'leading space'],
    ['/memories/.hidden', 'hidden'],
    ['/memories/.git/config', 'dot git'],
    ['/memories/a/.GIT/x', 'dot git in caps'],
    ['/memories/GIT~1/config', 'windows short name'],
    ['/memories/node_modules/x', 'node_modules'],
    ['/memories/' + 'a'.repeat(129), 'segment too long'],
    [
      '/memories/' +
        Array(MAX_DEPTH + 1)
          .fill('d')
          .join('/'),
      'too deep',
    ],
    ['/memories/' + 'abcdefgh/'.repeat(60) + 'x', 'path too long'],
  ])('rejects %j (%s)', (input) => {
    const result = parseMemoryPath(input)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.message.length).toBeGreaterThan(10)
  })

  it('rejects a path one character over the length limit but accepts one at it', () => {
    const at = '/memories/' + 'x'.repeat(MAX_PATH_LENGTH - '/memories/'.length)
    expect(at.length).toBe(MAX_PATH_LENGTH)
    // The one-segment form breaks the segment limit first, so split into folders.
    const split = (p: string) => p.replace(/(x{100})/g, '$1/').replace(/\/$/, 'y')
    expect(parseMemoryPath(split(at).slice(0, MAX_PATH_LENGTH)).ok).toBe(true)
    expect(parseMemoryPath(split(at).slice(0, MAX_PATH_LENGTH) + 'z').ok).toBe(false)
  })

  it('never echoes control characters in its message', () => {
    const result = parseMemoryPath('/memories/\u001b[31mred')
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.message.includes(String.fromCharCode(27))).toBe(false)
  })

  it('accepts exactly MAX_DEPTH segments', () => {
    const deep = '/memories/' + Array(MAX_DEPTH).fill('d').join('/')
    expect(parseMemoryPath(deep).ok).toBe(true)
  })
})

describe('isAddressableName', () => {
  it('tells names a memory path can reach from those it cannot', () => {
    expect(isAddressableName('notes.md')).toBe(true)
    expect(isAddressableName('.hidden')).toBe(false)
    expect(isAddressableName('node_modules')).toBe(false)
    expect(isAddressableName('a\nb')).toBe(false)
    expect(isAddressableName('cafe\u0301')).toBe(false)
  })
})
