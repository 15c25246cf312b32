/**
 * A saved key's file that is damaged (cut short, not Cairn's, a keyring that no longer opens
 * it) reads as no key, as before; Settings now says so in plain words, and saving a key keeps
 * the damaged file aside first (as settings.json's is kept), never writing over it silently.
 * A real data folder.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { createFileSecretStore, type SecretCipher } from './secret-store'
import { createSettingsService } from './settings-service'

let dataDir = ''
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-damaged-key-'))
})
afterEach(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10 }))

const OLD = 'sk-ant-api03-the-old-one'
const NEW = 'sk-ant-api03-the-new-one'

function settingsOver(file: string, cipher?: SecretCipher) {
  return createSettingsService({
    dataDir,
    secretStore: createFileSecretStore({ file, ...(cipher ? { cipher } : {}) }),
    env: {},
    logger: createRecordingLogger(),
  })
}

const keptAside = async () =>
  (await readdir(dataDir)).filter((name) => name.startsWith('secrets.json.unreadable-'))

it('says a damaged key file is damaged, and keeps it aside when a new key is saved', async () => {
  const file = path.join(dataDir, 'secrets.json')
  await createFileSecretStore({ file }).set(OLD)
  // Cut short (a power cut on a disk that does not keep its promises, a copy that stopped).
  const whole = await readFile(file, 'utf8')
  const cut = whole.slice(0, whole.length - 12)
  await writeFile(file, cut)

  const settings = settingsOver(file)
  const before = await settings.view()
  expect(before).toMatchObject({ hasApiKey: false, apiKeySource: 'none' })
  expect(before.apiKeyProblem).toBe(
    'Your saved key could not be read: its file (secrets.json in your data folder) is damaged. Save your key again; the damaged file is then kept aside in the data folder, not deleted.',
  )
  expect(before.apiKeyProblem).not.toContain(dataDir)
  expect((await settings.credentials()).apiKey).toBeNull()

  const after = await settings.setApiKey(NEW)
  const [kept, ...more] = await keptAside()
  expect(more).toEqual([])
  expect(await readFile(path.join(dataDir, kept!), 'utf8')).toBe(cut)
  expect(after).toMatchObject({ hasApiKey: true, apiKeySource: 'plaintext' })
  expect(after.apiKeyProblem).toBe(
    `Your saved key’s file was damaged, so it was kept as ${kept} in your data folder before the new key was saved.`,
  )
  expect((await settings.credentials()).apiKey).toBe(NEW)
})

it('counts a key the keyring no longer opens as damaged, and keeps it aside too', async () => {
  const file = path.join(dataDir, 'secrets.json')
  const working: SecretCipher = {
    isEncryptionAvailable: () => true,
    encrypt: (plain) => Buffer.from(plain).reverse(),
    decrypt: (data) => Buffer.from(data).reverse().toString(),
    backend: () => 'gnome_libsecret',
  }
  await createFileSecretStore({ file, cipher: working }).set(OLD)
  const sealed = await readFile(file, 'utf8')
  // Another keyring (the login keyring reset): decryption fails.
  const changed: SecretCipher = {
    ...working,
    decrypt: () => {
      throw new Error(
        'Error while decrypting the ciphertext provided to safeStorage.decryptString.',
      )
    },
  }
  const settings = settingsOver(file, changed)
  expect((await settings.view()).apiKeyProblem).toContain('is damaged')
  await settings.setApiKey(NEW)
  const [kept] = await keptAside()
  expect(await readFile(path.join(dataDir, kept!), 'utf8')).toBe(sealed)
})

it('writes over a sound key as before, keeping nothing aside', async () => {
  const file = path.join(dataDir, 'secrets.json')
  const settings = settingsOver(file)
  await settings.setApiKey(OLD)
  const view = await settings.setApiKey(NEW)
  expect(view.apiKeyProblem).toBeUndefined()
  expect(await keptAside()).toEqual([])
  expect((await settings.credentials()).apiKey).toBe(NEW)
})

it('drops the "kept aside" notice once a later key is saved and read back', async () => {
  const file = path.join(dataDir, 'secrets.json')
  await writeFile(file, '{"version":1,"enc')
  const settings = settingsOver(file)
  const first = await settings.setApiKey(NEW)
  expect(first.apiKeyProblem).toMatch(/was kept as secrets\.json\.unreadable-/)
  const later = await settings.setApiKey(OLD)
  expect(later.apiKeyProblem).toBeUndefined()
  expect((await settings.view()).apiKeyProblem).toBeUndefined()
  expect((await settings.credentials()).apiKey).toBe(OLD)
  // The kept file is still there: only the notice went.
  expect(await keptAside()).toHaveLength(1)
})

it('with ANTHROPIC_API_KEY beside a damaged key file: says the file is damaged, never asks to save a key', async () => {
  const file = path.join(dataDir, 'secrets.json')
  await writeFile(file, 'not a key file\n')
  const settings = createSettingsService({
    dataDir,
    secretStore: createFileSecretStore({ file }),
    env: { ANTHROPIC_API_KEY: 'sk-ant-api03-from-the-environment' },
    logger: createRecordingLogger(),
  })
  const view = await settings.view()
  expect(view).toMatchObject({ hasApiKey: true, apiKeySource: 'env' })
  expect(view.apiKeyProblem).toBe(
    'Your saved key’s file (in your data folder) is damaged, so the key from ANTHROPIC_API_KEY is used. The file was left as it is; saving a key here keeps it aside first.',
  )
  expect(view.apiKeyProblem).not.toMatch(/Save your key again/)
  expect((await settings.credentials()).apiKey).toBe('sk-ant-api03-from-the-environment')
  expect(await readFile(file, 'utf8')).toBe('not a key file\n')
})
