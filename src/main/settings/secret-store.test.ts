/**
 * A key saved while no keyring worked is on disk in plain text: Settings says so for as long
 * as it is, and the first read once a keyring works encrypts it.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { createFileSecretStore, type SecretCipher } from './secret-store'
import { createSettingsService } from './settings-service'

let dataDir: string

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-secret-store-'))
})

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
})

/** A keyring that can be switched on (unlocked, or installed) between starts. */
function keyring(backend = 'gnome_libsecret') {
  const state = { up: false }
  const cipher: SecretCipher = {
    isEncryptionAvailable: () => state.up,
    encrypt: (plain) => Buffer.from([...Buffer.from(plain)].map((b) => b ^ 0x5a)),
    decrypt: (data) => Buffer.from([...data].map((b) => b ^ 0x5a)).toString(),
    backend: () => backend,
  }
  return { state, cipher }
}

const KEY = 'sk-ant-api03-SECRET'

it('reports a key kept in plain text as plaintext, and encrypts it once a keyring works', async () => {
  const file = path.join(dataDir, 'secrets.json')
  const { state, cipher } = keyring()
  const start = () =>
    createSettingsService({
      dataDir,
      env: {},
      secretStore: createFileSecretStore({ file, cipher }),
    })

  expect((await start().setApiKey(KEY)).apiKeySource).toBe('plaintext')
  const onDisk = async () =>
    JSON.parse(await readFile(file, 'utf8')) as { encoding: string; data: string }
  expect(await onDisk()).toMatchObject({ encoding: 'plain' })

  state.up = true
  const next = start()
  expect((await next.view()).apiKeySource).toBe('os')
  // The file no longer holds the key readable, and the key still works.
  expect(await onDisk()).toMatchObject({ encoding: 'cipher' })
  expect(Buffer.from((await onDisk()).data, 'base64').toString()).not.toContain('SECRET')
  expect((await start().credentials()).apiKey).toBe(KEY)
})

it('keeps saying plaintext while a plain key cannot be encrypted (basic_text)', async () => {
  const file = path.join(dataDir, 'secrets.json')
  const none = createFileSecretStore({ file })
  await none.set(KEY)
  const { state, cipher } = keyring('basic_text')
  state.up = true
  const store = createFileSecretStore({ file, cipher })
  expect(await store.get()).toBe(KEY)
  expect(store.kind).toBe('plaintext')
  expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ encoding: 'plain' })
})
