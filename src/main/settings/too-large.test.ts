import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { createFileSecretStore } from './secret-store'
import { readSettingsFile } from './settings-file'

// disk30: settings.json and the API key's file were read whole whatever their size. Past their
// cap (a megabyte, where each holds a few hundred bytes) each is now damage of its kind: the
// settings unreadable (defaults, kept aside before the next save), the key none stored.

let dataDir = ''
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-settings-large-'))
})
afterEach(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10 }))

// Valid JSON, padded past the cap with spaces.
const padded = (json: object): string =>
  JSON.stringify(json) + ' '.repeat(OWN_FILE_CAP.SETTINGS + 1)

it('a settings.json past its cap is unreadable: the defaults, said in the log', async () => {
  const file = path.join(dataDir, 'settings.json')
  await writeFile(file, padded({ model: 'claude-test-model' }))
  const logger = createRecordingLogger()
  const read = await readSettingsFile(file, logger)
  expect(read.unreadable).toBe(true)
  expect(read.settings.model).not.toBe('claude-test-model')
  expect(logger.entries.map((entry) => entry.message)).toContain(
    'Could not read settings.json; using the defaults',
  )
  expect(await readdir(dataDir)).toEqual(['settings.json'])
})

it('an API key file past its cap reads as no key stored, and is left as it is', async () => {
  const file = path.join(dataDir, 'secrets.json')
  const text = padded({
    version: 1,
    encoding: 'plain',
    data: Buffer.from('sk-ant-test').toString('base64'),
  })
  await writeFile(file, text)
  expect(await createFileSecretStore({ file }).get()).toBeNull()
  expect(await readFile(file, 'utf8')).toBe(text)
})
