import { randomInt } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { findRuleSecrets } from './secret-rules'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// hunt13-tool D2: Stripe secret keys and Google API keys were written and committed (the
// preset has no rule for either). Values are random, in the documented formats, built at run
// time so this file holds no literal key for scanners to flag.
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const random = (n: number, alphabet = ALNUM) =>
  Array.from({ length: n }, () => alphabet[randomInt(alphabet.length)]).join('')

const stripe = (prefix: string, n: number) => `${prefix}_${random(n)}`
const google = () => `AIza${random(35, `${ALNUM}-_`)}`

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
})
afterEach(() => box.cleanup())

describe('Stripe and Google API keys (hunt13-tool D2)', () => {
  const cases: ReadonlyArray<[string, () => string, string]> = [
    ['a Stripe live secret key, 24 characters', () => stripe('sk_live', 24), 'Stripe key'],
    ['a Stripe live secret key, 99 characters', () => stripe('sk_live', 99), 'Stripe key'],
    ['a Stripe restricted key', () => stripe('rk_live', 99), 'Stripe key'],
    ['a Stripe test secret key', () => stripe('sk_test', 24), 'Stripe key'],
    ['a Google API key', google, 'Google API key'],
  ]

  it.each(cases)(
    'refuses %s in a file, naming the kind, not echoing it',
    async (_n, make, kind) => {
      for (let round = 0; round < 5; round++) {
        const secret = make()
        const before = await snapshot(box.base)
        const result = await box.run({
          command: 'create',
          path: '/memories/keys.md',
          file_text: `My key for later:\n${secret}\n`,
        })
        expect(result.isError, text(result)).toBe(true)
        expect(text(result)).toContain('looks like a secret')
        expect(text(result)).toContain(kind)
        expect(text(result)).not.toContain(secret.slice(8))
        expect(await snapshot(box.base)).toBe(before)
      }
    },
  )

  it.each(cases)('refuses %s added by str_replace, insert or as a name', async (_n, make) => {
    await box.write('notes.md', 'line one\nline two\n')
    const before = await snapshot(box.base)
    const results = [
      await box.run({
        command: 'str_replace',
        path: '/memories/notes.md',
        old_str: 'line two',
        new_str: `key="${make()}"`,
      }),
      await box.run({
        command: 'insert',
        path: '/memories/notes.md',
        insert_line: 1,
        insert_text: `export KEY=${make()}`,
      }),
      await box.run({ command: 'create', path: `/memories/${make()}.md`, file_text: 'x' }),
    ]
    for (const result of results) expect(result.isError, text(result)).toBe(true)
    expect(await snapshot(box.base)).toBe(before)
  })

  it('lets ordinary text with the same beginnings through', async () => {
    const prose = [
      // A word starting with "AIza" that is not 39 characters, and ones that run on.
      'AIzawa is a family name; AIzaXYZ is not a key.',
      `An id: AIza${random(34)}. Too long: AIza${random(36)}.`,
      `Stripe keys start with sk_live_ or rk_live_ and are kept in the vault.`,
      'A short one: sk_live_abc, and a snake_case name: task_live_results_table_for_today.',
      `Part of a longer word: xsk_live_${random(24)}.`,
    ].join('\n')
    expect(findRuleSecrets(prose)).toEqual([])
    const result = await box.run({ command: 'create', path: '/memories/ok.md', file_text: prose })
    expect(result.isError, text(result)).toBe(false)
  })
})
