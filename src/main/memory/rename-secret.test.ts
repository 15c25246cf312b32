import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { makeSandbox, text, type Sandbox } from './test-support'

// Some secret rules run only for a file's extension (the GCP service-account key, for
// `.json`). A key refused by `create /memories/sa.json` was written as `sa.txt`, which passed,
// then renamed to `sa.json` unscanned. A rename that changes the extension now scans the file's
// text under its new name.

let box: Sandbox | null = null
afterEach(async () => {
  await box?.cleanup()
  box = null
})

// Valid JSON whose PEM header is written with a \\u escape: JSON.parse gives a working key.
const body = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj' + 'A'.repeat(200)
const serviceAccount = JSON.stringify(
  {
    type: 'service_account',
    project_id: 'p',
    private_key_id: '1234567890abcdef1234567890abcdef12345678',
    private_key: `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\n`,
    client_email: 'x@p.iam.gserviceaccount.com',
    client_id: '1',
  },
  null,
  2,
).replaceAll('PRIVATE KEY', 'PRIVATE\\u0020KEY')

describe('a rename that changes the extension', () => {
  it('is refused when the text holds a secret under the new name, and changes nothing', async () => {
    box = await makeSandbox()
    const asJson = await box.run({
      command: 'create',
      path: '/memories/sa.json',
      file_text: serviceAccount,
    })
    expect(asJson.isError).toBe(true)
    const asText = await box.run({
      command: 'create',
      path: '/memories/sa.txt',
      file_text: serviceAccount,
    })
    expect(asText.isError).toBe(false)

    const renamed = await box.run({
      command: 'rename',
      old_path: '/memories/sa.txt',
      new_path: '/memories/sa.json',
    })
    expect(renamed.isError).toBe(true)
    expect(text(renamed)).toMatch(
      /^Error: Nothing was renamed: as \/memories\/sa\.json, the file's text contains what looks like a secret \(.*private key.*\)\./i,
    )
    expect(text(renamed)).not.toContain('MIIE')
    expect(fs.readdirSync(box.root)).toEqual(['sa.txt'])
    // A preview (dry run) says the same.
    const planned = await box.tool.preview({
      command: 'rename',
      old_path: '/memories/sa.txt',
      new_path: '/memories/sa.json',
    })
    expect(planned.isError).toBe(true)
  })

  it('still renames a file whose text is harmless under its new name', async () => {
    box = await makeSandbox()
    await box.run({ command: 'create', path: '/memories/a.txt', file_text: '{"a": 1}\n' })
    const renamed = await box.run({
      command: 'rename',
      old_path: '/memories/a.txt',
      new_path: '/memories/a.json',
    })
    expect(text(renamed)).toBe('Successfully renamed /memories/a.txt to /memories/a.json')
    expect(fs.readFileSync(path.join(box.root, 'a.json'), 'utf8')).toBe('{"a": 1}\n')
  })
})
