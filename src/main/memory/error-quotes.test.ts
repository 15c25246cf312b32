import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandbox, text, type Sandbox } from './test-support'

// Defect 9 of issue #9: errors echoed whole inputs: a `str_replace` whose `old_str` was not
// found quoted all 200 KB of it back to Claude.

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
  await box.write('f.md', 'alpha\nbeta\nalpha\n')
})
afterEach(() => box.cleanup())

const HUGE = `${'x'.repeat(100_000)}TAIL-MARKER${'y'.repeat(100_000)}`

describe('errors quote inputs briefly (defect 9)', () => {
  it('cuts old_str in the "did not appear" error to a few hundred characters', async () => {
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: HUGE,
      new_str: 'z',
    })
    expect(result.isError).toBe(true)
    expect(text(result).length).toBeLessThan(700)
    expect(text(result)).toContain('…')
    expect(text(result)).not.toContain('TAIL-MARKER')
    expect(text(result)).toMatch(/did not appear verbatim in \/memories\/f\.md/)
  })

  it('cuts old_str in the "multiple occurrences" error too', async () => {
    const long = 'z'.repeat(20_000)
    await box.write('g.md', `${long}\n${long}\n`)
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/g.md',
      old_str: long,
      new_str: 'z',
    })
    expect(result.isError).toBe(true)
    expect(text(result).length).toBeLessThan(700)
    expect(text(result)).toMatch(/Multiple occurrences/)
    expect(text(result)).toContain('lines: 1, 2')
  })

  // probe28n: the cut falls on each unit of an emoji (a UTF-16 surrogate pair) in turn; half a
  // pair in a tool result is refused by the Messages API for good.
  it('never cuts an emoji in half where the quote is cut, in either error', async () => {
    const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
    for (let lead = 196; lead <= 201; lead++) {
      const quoted = `${'x'.repeat(lead)}😀😀${'y'.repeat(300)}`
      const missing = await box.run({
        command: 'str_replace',
        path: '/memories/f.md',
        old_str: quoted,
        new_str: 'z',
      })
      expect(missing.isError).toBe(true)
      expect(text(missing), `cut after ${lead}`).not.toMatch(LONE)
      expect(text(missing)).toContain('…`')
      await box.write('twice.md', `${quoted}\n${quoted}\n`)
      const twice = await box.run({
        command: 'str_replace',
        path: '/memories/twice.md',
        old_str: quoted,
        new_str: 'z',
      })
      expect(twice.isError).toBe(true)
      expect(text(twice), `cut after ${lead}`).not.toMatch(LONE)
      expect(text(twice)).toMatch(/Multiple occurrences of old_str `x+(😀)*…`/)
    }
  })

  it('keeps short quotes whole', async () => {
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: 'gamma',
      new_str: 'z',
    })
    expect(text(result)).toBe(
      'No replacement was performed, old_str `gamma` did not appear verbatim in /memories/f.md.',
    )
  })
})
