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
