import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// Issue #3, left by the last acceptance probe: half of a surrogate pair in `file_text` was
// written as U+FFFD (three bytes Claude never sent). UTF-8 cannot hold it, so every string
// field refuses it, and nothing changes.

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
  await box.write('a.md', 'alpha\nbeta\n')
})
afterEach(() => box.cleanup())

const HIGH = '\uD83D' // the first half of 😀, alone
const LOW = '\uDE00' // the second half, alone

const cases: ReadonlyArray<[string, string, Record<string, unknown>]> = [
  ['file_text', 'create', { path: '/memories/b.md', file_text: `ok ${HIGH}` }],
  ['file_text', 'create', { path: '/memories/a.md', file_text: `ok ${LOW} end` }],
  ['new_str', 'str_replace', { path: '/memories/a.md', old_str: 'alpha', new_str: `ok ${HIGH}` }],
  ['old_str', 'str_replace', { path: '/memories/a.md', old_str: `ok ${HIGH}`, new_str: 'y' }],
  ['insert_text', 'insert', { path: '/memories/a.md', insert_line: 1, insert_text: `ok ${LOW}` }],
  ['path', 'view', { path: `/memories/ok ${HIGH}.md` }],
  ['path', 'delete', { path: `/memories/ok ${LOW}` }],
  ['old_path', 'rename', { old_path: `/memories/ok ${HIGH}`, new_path: '/memories/c.md' }],
  ['new_path', 'rename', { old_path: '/memories/a.md', new_path: `/memories/ok ${LOW}` }],
]

describe('a lone surrogate in any string field', () => {
  it.each(cases)('is refused in `%s` of %s, and nothing changes', async (field, command, rest) => {
    const before = await snapshot(box.base)
    const result = await box.run({ command, ...rest })
    expect(result.isError).toBe(true)
    expect(result.errorCode).toBe('invalid-input')
    const at = String(rest[field]).search(/[\uD800-\uDFFF]/) + 1
    expect(text(result)).toBe(
      `Error: Invalid \`${field}\` parameter for \`${command}\`: it contains a lone surrogate (half of a UTF-16 surrogate pair) at character ${at}, which cannot be stored as UTF-8 text. Nothing was changed; send whole characters.`,
    )
    expect(await snapshot(box.base)).toBe(before)
  })

  // Left by the review of handler28: the place was counted in UTF-16 units, so each emoji
  // before the lone half moved it one character too far.
  it('counts the place in characters, an emoji before it as one', async () => {
    const result = await box.run({ command: 'view', path: `/memories/\uD83D\uDE00${HIGH}.md` })
    expect(text(result)).toContain('at character 12,')
  })

  it('takes whole pairs as they are', async () => {
    const result = await box.run({
      command: 'create',
      path: '/memories/\uD83D\uDE00.md',
      file_text: 'ok \uD83D\uDE00\n',
    })
    expect(result.isError).toBe(false)
    expect(await box.read('\uD83D\uDE00.md')).toBe('ok \uD83D\uDE00\n')
  })
})
