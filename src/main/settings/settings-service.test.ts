import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  cipherFromSafeStorage,
  createFileSecretStore,
  createMemorySecretStore,
} from './secret-store'
import { DEFAULT_SETTINGS } from './settings-file'
import { createSettingsService } from './settings-service'

let dataDir: string

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-settings-'))
})

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true })
})

const settingsFile = (): string => path.join(dataDir, 'settings.json')

describe('settings service', () => {
  it('starts from defaults and reports no key', async () => {
    const service = createSettingsService({ dataDir, secretStore: createMemorySecretStore() })
    const view = await service.view()
    expect(view).toEqual({
      ...DEFAULT_SETTINGS,
      hasApiKey: false,
      apiKeySource: 'none',
      dataDir,
    })
  })

  it('says a key in the in-memory store lasts only this session', async () => {
    const service = createSettingsService({ dataDir, secretStore: createMemorySecretStore() })
    await service.setApiKey('sk-ant-session-only')
    expect(await service.view()).toMatchObject({ hasApiKey: true, apiKeySource: 'memory' })
  })

  it('persists updates to settings.json and reads them back after a restart', async () => {
    const first = createSettingsService({ dataDir, secretStore: createMemorySecretStore() })
    await first.update({ model: 'claude-haiku-4-5', maxTokens: 1000, theme: 'dark' })
    await first.update({ customInstructions: 'Answer in French.', maxTokens: undefined })
    const second = createSettingsService({ dataDir, secretStore: createMemorySecretStore() })
    expect(await second.get()).toEqual({
      ...DEFAULT_SETTINGS,
      model: 'claude-haiku-4-5',
      maxTokens: 1000,
      theme: 'dark',
      customInstructions: 'Answer in French.',
    })
    expect(await readdir(dataDir)).toEqual(['settings.json'])
  })

  it('falls back to defaults for a corrupt file and per field for bad values', async () => {
    await writeFile(settingsFile(), '{ not json')
    const broken = createSettingsService({ dataDir, secretStore: createMemorySecretStore() })
    expect(await broken.get()).toEqual(DEFAULT_SETTINGS)

    await writeFile(settingsFile(), JSON.stringify({ model: 'claude-opus-4-5', maxTokens: -3 }))
    const partial = createSettingsService({ dataDir, secretStore: createMemorySecretStore() })
    expect(await partial.get()).toEqual({ ...DEFAULT_SETTINGS, model: 'claude-opus-4-5' })
  })

  it('never writes the API key into settings.json', async () => {
    const service = createSettingsService({ dataDir, secretStore: createMemorySecretStore() })
    await service.setApiKey('sk-ant-secret-value')
    await service.update({ theme: 'light' })
    expect(await readFile(settingsFile(), 'utf8')).not.toContain('sk-ant')
    const view = await service.view()
    expect(view.hasApiKey).toBe(true)
    expect(JSON.stringify(view)).not.toContain('sk-ant')
    expect((await service.credentials()).apiKey).toBe('sk-ant-secret-value')
    expect((await service.clearApiKey()).hasApiKey).toBe(false)
  })

  it('prefers ANTHROPIC_API_KEY from the environment and honours ANTHROPIC_BASE_URL', async () => {
    const service = createSettingsService({
      dataDir,
      secretStore: createMemorySecretStore('sk-stored'),
      env: { ANTHROPIC_API_KEY: 'sk-env', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
    })
    expect(await service.credentials()).toEqual({
      apiKey: 'sk-env',
      baseURL: 'http://127.0.0.1:9',
    })
    expect((await service.view()).apiKeySource).toBe('env')
  })
})

describe('file secret store', () => {
  const cipher = (backend: string) => ({
    isEncryptionAvailable: () => true,
    encrypt: (plain: string) => Buffer.from([...Buffer.from(plain)].map((b) => b ^ 0x5a)),
    decrypt: (data: Uint8Array) => Buffer.from([...data].map((b) => b ^ 0x5a)).toString(),
    backend: () => backend,
  })

  it('stores the key encrypted through the injected cipher', async () => {
    const file = path.join(dataDir, 'secrets.json')
    const store = createFileSecretStore({ file, cipher: cipher('gnome_libsecret') })
    await store.set('sk-ant-abc')
    expect(await readFile(file, 'utf8')).not.toContain('sk-ant-abc')
    expect(
      Buffer.from(JSON.parse(await readFile(file, 'utf8')).data, 'base64').toString(),
    ).not.toContain('sk-ant')
    expect(store.kind).toBe('os')
    const reopened = createFileSecretStore({ file, cipher: cipher('gnome_libsecret') })
    expect(await reopened.get()).toBe('sk-ant-abc')
    await reopened.clear()
    expect(await store.get()).toBeNull()
  })

  it('warns with apiKeySource plaintext when Linux falls back to basic_text', async () => {
    const secretStore = createFileSecretStore({
      file: path.join(dataDir, 'secrets.json'),
      cipher: cipher('basic_text'),
    })
    const service = createSettingsService({ dataDir, secretStore })
    const view = await service.setApiKey('sk-ant-xyz')
    expect(view.apiKeySource).toBe('plaintext')
    expect((await service.credentials()).apiKey).toBe('sk-ant-xyz')
  })

  it('keeps working without any encryption, reporting plaintext', async () => {
    const file = path.join(dataDir, 'secrets.json')
    const store = createFileSecretStore({ file })
    await store.set('sk-plain')
    expect(store.kind).toBe('plaintext')
    expect(await createFileSecretStore({ file }).get()).toBe('sk-plain')
  })

  it('treats a corrupt secrets file as no key', async () => {
    const file = path.join(dataDir, 'secrets.json')
    await writeFile(file, 'garbage')
    expect(await createFileSecretStore({ file, cipher: cipher('keychain') }).get()).toBeNull()
  })

  it('adapts an Electron-like safeStorage, reading the Linux backend when there is one', async () => {
    const file = path.join(dataDir, 'secrets.json')
    const safeStorage = (backend?: string) => ({
      isEncryptionAvailable: () => true,
      encryptString: (plain: string) => Buffer.from(plain).reverse(),
      decryptString: (data: Buffer) => Buffer.from(data).reverse().toString(),
      ...(backend ? { getSelectedStorageBackend: () => backend } : {}),
    })
    const mac = createFileSecretStore({ file, cipher: cipherFromSafeStorage(safeStorage()) })
    await mac.set('sk-ant-mac')
    expect(mac.kind).toBe('os')
    expect(await readFile(file, 'utf8')).not.toContain('sk-ant-mac')
    expect(await mac.get()).toBe('sk-ant-mac')
    const linux = createFileSecretStore({
      file,
      cipher: cipherFromSafeStorage(safeStorage('basic_text')),
    })
    expect(linux.kind).toBe('plaintext')
  })
})
