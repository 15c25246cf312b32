import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { scanForSecrets } from './secrets'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// Built at run time so this file itself holds no literal secret for scanners to flag.
const GITHUB_TOKEN = ['ghp', 'wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx'].join('_')
const SLACK_TOKEN = ['xoxb', '123456789012', '1234567890123', 'abcdefghijklmnopqrstuvwx'].join('-')
const ANTHROPIC_KEY = ['sk', 'ant', 'api03', 'a'.repeat(93) + 'AA'].join('-')

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
})
afterEach(() => box.cleanup())

describe('secret scanning', () => {
  it('refuses a create holding a token, naming its kind and never echoing it', async () => {
    const before = await snapshot(box.base)
    const result = await box.run({
      command: 'create',
      path: '/memories/new/creds.md',
      file_text: `my token is ${GITHUB_TOKEN}\n`,
    })
    expect(result.isError).toBe(true)
    expect(text(result)).toBe(
      'Error: Nothing was written to /memories/new/creds.md: the text contains what looks like a secret (GitHub Token). Memory files must not hold credentials; store a description instead (for example "the API key is kept in the password manager").',
    )
    expect(text(result)).not.toContain(GITHUB_TOKEN.slice(4, 20))
    expect(await snapshot(box.base)).toBe(before)
  })

  it.each([
    ['a Slack token', SLACK_TOKEN, 'slack token'],
    ['an Anthropic API key', ANTHROPIC_KEY, 'Anthropic Claude API key'],
  ])('refuses %s in str_replace and insert', async (_name, secret, kind) => {
    await box.write('f.md', 'line one\nline two\n')
    const before = await snapshot(box.base)
    const replaced = await box.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: 'one',
      new_str: secret,
    })
    const inserted = await box.run({
      command: 'insert',
      path: '/memories/f.md',
      insert_line: 1,
      insert_text: secret,
    })
    for (const result of [replaced, inserted]) {
      expect(result.isError).toBe(true)
      expect(text(result)).toContain(`(${kind})`)
      expect(text(result)).not.toContain(secret.slice(8, 30))
    }
    expect(await snapshot(box.base)).toBe(before)
  })

  it('scans the resulting text, so a secret assembled by an edit is caught', async () => {
    const half = Math.floor(GITHUB_TOKEN.length / 2)
    await box.write(
      'f.md',
      `token ${GITHUB_TOKEN.slice(0, half)}SPLIT${GITHUB_TOKEN.slice(half)}\n`,
    )
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: 'SPLIT',
      new_str: '',
    })
    expect(result.isError).toBe(true)
    expect(text(result)).toContain('GitHub Token')
  })

  it('lets a file that already held a secret be edited elsewhere', async () => {
    await box.write('f.md', `legacy ${GITHUB_TOKEN}\nnotes\n`)
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: 'notes',
      new_str: 'more notes',
    })
    expect(result.isError).toBe(false)
  })

  it('can be switched off at run time', async () => {
    box.tool.configure({ secretScanning: false })
    expect(box.tool.policy().secretScanning).toBe(false)
    const result = await box.run({
      command: 'create',
      path: '/memories/t.md',
      file_text: GITHUB_TOKEN,
    })
    expect(result.isError).toBe(false)
  })

  it('lets ordinary text through', async () => {
    expect(
      await scanForSecrets('The user prefers tea. Their cat is called Miso.\n', '/memories/a.md'),
    ).toEqual([])
  })
})
