import { performance } from 'node:perf_hooks'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { mayHoldSecret, PREFILTER_MATCHES_PRESET, runSecretlint, scanForSecrets } from './secrets'

// Every sample is assembled at run time so this file holds no literal secret for scanners.
const rep = (unit: string, n: number) => unit.repeat(n)
const alnum = (n: number) => rep('aB3dE5gH7k', Math.ceil(n / 10)).slice(0, n)
const hex = (n: number) => rep('0a1b2c3d4e', Math.ceil(n / 10)).slice(0, n)
const pem = [
  '-----BEGIN RSA PRIVATE KEY-----',
  `MI${rep('Abcd', 60)}`,
  '-----END RSA PRIVATE KEY-----',
]
// 112 characters: the closing brace starts the last base64 group, so the token ends in `fQ==`.
const opsJson = JSON.stringify({ secret: rep('x', 99) })
const gcpJson = JSON.stringify({
  type: 'service_account',
  private_key_id: hex(40),
  private_key: `${pem.join('\n')}\n`,
})

/** One sample per rule of the recommended preset that reports on text. */
const SAMPLES: ReadonlyArray<readonly [rule: string, text: string, file?: string]> = [
  ['aws', `AWS_SECRET_ACCESS_KEY = "${alnum(40)}"`],
  ['gcp', gcpJson, '/memories/key.json'],
  ['privatekey', pem.join('\n')],
  ['npm', ['npm', alnum(36)].join('_')],
  ['basicauth', `https://alice:${'s3cr3tpw'}@example.com/x`],
  ['slack', ['xoxb', '123456789012', '1234567890123', alnum(24)].join('-')],
  ['sendgrid', ['SG', alnum(22), alnum(43)].join('.')],
  ['shopify', ['shpat', hex(32)].join('_')],
  ['github', ['ghp', 'wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx'].join('_')],
  ['gitlab', ['glpat', alnum(20)].join('-')],
  ['grafana', ['glsa', alnum(32), hex(8)].join('_')],
  ['openai', ['sk', `${alnum(20)}T3BlbkFJ${alnum(20)}`].join('-')],
  ['anthropic', ['sk', 'ant', 'api03', `${rep('a', 93)}AA`].join('-')],
  ['groq', ['gsk', alnum(52)].join('_')],
  ['huggingface', ['hf', rep('abcdefghij', 4).slice(0, 34)].join('_')],
  ['linear', ['lin', 'api', alnum(40)].join('_')],
  ['notion', ['ntn', `${rep('1', 11)}${alnum(35)}`].join('_')],
  ['1password', ['ops', Buffer.from(opsJson).toString('base64')].join('_')],
  ['database-connection-string', `postgres://alice:${'s3cr3tpw'}@db.example.com/app`],
  ['hashicorp-vault', ['hvs', alnum(100)].join('.')],
  ['vercel', ['vcp', alnum(24)].join('_')],
  ['databricks', `dapi${hex(32)}`],
  ['docker', ['dckr', 'pat', alnum(27)].join('_')],
  ['figma', ['figd', alnum(40)].join('_')],
]

describe('secret prefilter', () => {
  it('was read off exactly the rules of the installed preset', () => {
    expect(PREFILTER_MATCHES_PRESET).toBe(true)
  })

  it.each(SAMPLES)('lets secretlint see a %s secret', async (_rule, sample, file) => {
    const name = file ?? '/memories/notes.md'
    expect((await runSecretlint(`note: ${sample}\n`, name)).length).toBeGreaterThan(0)
    expect(mayHoldSecret(`note: ${sample}\n`, name)).toBe(true)
    expect((await scanForSecrets(`note: ${sample}\n`, name)).length).toBeGreaterThan(0)
  })

  it('clears ordinary notes without running secretlint', () => {
    const note = 'The user prefers tea. Their cat is called Miso.\n- lives in Lyon\n'
    expect(mayHoldSecret(note, '/memories/a.md')).toBe(false)
  })

  it('never clears a text in which secretlint finds something', async () => {
    // Mutated samples: cut, re-cased, wrapped in noise, joined. Whatever secretlint still
    // reports, the prefilter must have passed on to it.
    let reported = 0
    const mutated = fc
      .tuple(
        fc.constantFrom(...SAMPLES.map(([, text]) => text)),
        fc.nat(),
        fc.nat(),
        fc.constantFrom('keep', 'upper', 'lower', 'cut'),
        fc.string({ maxLength: 12 }),
        fc.string({ maxLength: 12 }),
      )
      .map(([text, a, b, how, before, after]) => {
        const from = a % text.length
        const to = from + (b % (text.length - from + 1))
        const part = text.slice(from, to)
        const changed =
          how === 'upper'
            ? part.toUpperCase()
            : how === 'lower'
              ? part.toLowerCase()
              : how === 'cut'
                ? ''
                : part
        return `${before}${text.slice(0, from)}${changed}${text.slice(to)}${after}`
      })
    await fc.assert(
      fc.asyncProperty(
        mutated,
        fc.constantFrom('/memories/a.md', '/memories/b.txt'),
        async (text, file) => {
          const found = await runSecretlint(text, file)
          if (found.length > 0) reported++
          return found.length === 0 || mayHoldSecret(text, file)
        },
      ),
      { numRuns: 300 },
    )
    // The property is not vacuous: many mutated samples still hold a secret.
    expect(reported).toBeGreaterThan(50)
  })

  it('ignores secretlint-disable comments written into the text', async () => {
    const github = SAMPLES.find(([rule]) => rule === 'github')![1]
    for (const text of [
      `<!-- secretlint-disable -->\n${github}\n`,
      `${github} // secretlint-disable-line\n`,
      `secretlint-disable-next-line\n${github}\n`,
    ]) {
      expect(await scanForSecrets(text, '/memories/a.md')).toMatchObject([{ kind: 'GitHub Token' }])
    }
  })

  it('leaves no performance marks behind however many scans run', async () => {
    const slack = SAMPLES.find(([rule]) => rule === 'slack')![1]
    for (let i = 0; i < 20; i++) await runSecretlint(`${slack} ${i}`, `/memories/${i}.md`)
    await new Promise((resolve) => setImmediate(resolve))
    const marks = performance.getEntriesByType('mark').filter((e) => e.name.startsWith('@core>'))
    expect(marks).toEqual([])
  })
})
