import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// Defect 7 of issue #9: secrets the scan let through. Built at run time so this file itself
// holds no literal secret for scanners to flag.
const dashes = '-----'
const pem = (label: string, body: ReadonlyArray<string>, prefix = '') =>
  [`${dashes}BEGIN ${label}${dashes}`, ...body, `${dashes}END ${label}${dashes}`]
    .map((line) => `${prefix}${line}`)
    .join('\n')

// An EC key in SEC1 form: its base64 body starts with `MH`.
const EC_KEY = pem('EC PRIVATE KEY', [
  ['MHcCAQEEIBx8Zr7pH3f5qzQm0cW9vYx2sLkTnQ4bA6e1oJdF3gUuoAoGCCqGSM49', ''].join(''),
  'AwEHoUQDQgAE3q5Lw0b7aJ9l7mZtW1kVx2cN8sP4oR6uY0eD2fG5hJ3kL1nM9pQ7',
  'rS5tU3vW1xY9zA7bC5dE3fG1hI9jK7lM5nO3pQ1rS9tU7vW5xY3zA1bC9dE==',
])
const RSA_KEY_LINES = [
  'MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun',
  'VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK',
  'LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo',
]
const QUOTED_KEY = pem('RSA PRIVATE KEY', RSA_KEY_LINES, '> ')
const ODD_LABEL_KEY = pem('ENCRYPTED PRIVATE KEY', RSA_KEY_LINES)
// 40 characters, the length of a real one.
const AWS_SECRET = ['wJalrXUtnFEMI', 'K7MDENG', 'bPxRfiCYzq8d3Hs1Lp'].join('/')
const AWS_ID = ['AKIA', 'Z3MHK7QX2N5P4WTR'].join('')
// The shape of an Anthropic admin key (`sk-ant-admin01-`, 93 base64url characters, `AA`).
const ADMIN_KEY = [
  'sk-ant-admin01',
  'Zk3Qw9_rT2yXv8LmN4pB6sD1fH5jK7cV0gE3uI9oP2aS4dF6gH8jK1lZ3xC5vB7nM9qW2eR4tY6uI8oP0aS2dF4gH6jK8lA-AA',
].join('-')
const GITHUB_TOKEN = ['ghp', 'wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx'].join('_')

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
})
afterEach(() => box.cleanup())

describe('secrets the scan used to miss (defect 7)', () => {
  it.each([
    ['an EC private key in SEC1 form', EC_KEY, 'private key', 'MHcCAQEEIBx8Zr7'],
    [
      'a PEM block quoted with "> "',
      `As pasted in a mail:\n${QUOTED_KEY}\n`,
      'private key',
      RSA_KEY_LINES[0]!,
    ],
    ['any BEGIN … PRIVATE KEY block', ODD_LABEL_KEY, 'private key', RSA_KEY_LINES[1]!],
    ['an AWS secret written in prose', `AWS secret access key: ${AWS_SECRET}\n`, 'AWS', AWS_SECRET],
    [
      'an AWS secret in a sentence',
      `The aws secret key is ${AWS_SECRET} for prod.`,
      'AWS',
      AWS_SECRET,
    ],
    ['an AKIA access key id alone', `id ${AWS_ID}\n`, 'AWS', AWS_ID],
    [
      'an Anthropic admin key',
      `admin key for the org: ${ADMIN_KEY}\n`,
      'Anthropic key',
      ADMIN_KEY.slice(15),
    ],
    [
      'an Anthropic key in a name=value line',
      `ANTHROPIC_ADMIN_KEY=${ADMIN_KEY}`,
      'Anthropic',
      ADMIN_KEY,
    ],
  ])('refuses %s', async (_name, secret, kind, sensitive) => {
    const before = await snapshot(box.base)
    const result = await box.run({ command: 'create', path: '/memories/k.md', file_text: secret })
    expect(result.isError, text(result)).toBe(true)
    expect(text(result)).toContain('looks like a secret')
    expect(text(result)).toContain(kind)
    expect(text(result)).not.toContain(sensitive)
    expect(await snapshot(box.base)).toBe(before)
  })

  it('refuses a secret used as a file name, in create and in rename', async () => {
    await box.write('plain.md', 'nothing secret\n')
    const before = await snapshot(box.base)
    const created = await box.run({
      command: 'create',
      path: `/memories/${GITHUB_TOKEN}.md`,
      file_text: 'x',
    })
    const renamed = await box.run({
      command: 'rename',
      old_path: '/memories/plain.md',
      new_path: `/memories/keys/${AWS_ID}/plain.md`,
    })
    for (const result of [created, renamed]) {
      expect(result.isError).toBe(true)
      expect(text(result)).toContain('path')
      expect(text(result)).toContain('looks like a secret')
      expect(text(result)).not.toContain(GITHUB_TOKEN)
      expect(text(result)).not.toContain(AWS_ID)
    }
    expect(await snapshot(box.base)).toBe(before)
  })

  // probe28n: the scan looks at the text as the edit leaves it, not only at what it adds, so a
  // secret pieced together from text already there and an edit's few characters is refused.
  it('refuses a secret pieced together by str_replace from text already there', async () => {
    await box.write('piece.md', `AWS secret access key: ${AWS_SECRET.slice(0, 20)}TAIL\n`)
    const before = await snapshot(box.base)
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/piece.md',
      old_str: 'TAIL',
      new_str: AWS_SECRET.slice(20),
    })
    expect(result.isError, text(result)).toBe(true)
    expect(text(result)).toContain('looks like a secret')
    expect(text(result)).not.toContain(AWS_SECRET.slice(20))
    expect(await snapshot(box.base)).toBe(before)
  })

  it('still lets ordinary prose about keys through', async () => {
    const prose = [
      'The AWS secret access key is kept in the password manager.',
      'A PEM file starts with a BEGIN line; never paste one here.',
      'Our AKIA-style ids are rotated monthly.',
      'Admin keys start with sk-ant-admin01- and are made in the console.',
    ].join('\n')
    const result = await box.run({ command: 'create', path: '/memories/ok.md', file_text: prose })
    expect(result.isError, text(result)).toBe(false)
  })
})
