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
import { consoleLogger } from '../lib/logger'

let dataDir: string

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-settings-'))
})

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
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
      envApiKey: false,
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

  // Review hunt10-app D6: a settings.json broken by a hand edit read as the defaults, without a
  // word, and the next change wrote the defaults over it: the custom instructions were gone.
  it('keeps an unreadable settings.json aside before the first write, and says so', async () => {
    const handWritten = `{ "customInstructions": "${'Always answer in French. '.repeat(40)}", }`
    await writeFile(settingsFile(), handWritten)
    const warnings: unknown[] = []
    const logger = { ...consoleLogger, warn: (...args: unknown[]) => void warnings.push(args) }
    const service = createSettingsService({
      dataDir,
      secretStore: createMemorySecretStore(),
      logger,
    })
    const before = await service.view()
    expect(before.customInstructions).toBe('')
    expect(before.settingsProblem).toMatch(/could not be read/)
    expect(before.settingsProblem).not.toContain(dataDir)
    expect(warnings).toHaveLength(1)
    // Reading changes nothing on disk.
    expect(await readdir(dataDir)).toEqual(['settings.json'])

    const after = await service.update({ theme: 'dark' })
    const files = (await readdir(dataDir)).sort()
    expect(files).toHaveLength(2)
    const kept = files.find((name) => name.startsWith('settings.json.unreadable-'))!
    expect(kept).toMatch(/^settings\.json\.unreadable-\d{8}T\d{6}Z$/)
    expect(await readFile(path.join(dataDir, kept), 'utf8')).toBe(handWritten)
    expect(JSON.parse(await readFile(settingsFile(), 'utf8'))).toMatchObject({ theme: 'dark' })
    expect(after.settingsProblem).toContain(kept)

    // Only once: the file written now is readable, and the next change writes over it.
    await service.update({ theme: 'light' })
    expect((await readdir(dataDir)).sort()).toEqual(files)
  })

  it('keeps aside a file with a value it could not take, so the value is not lost', async () => {
    const handWritten = JSON.stringify({ customInstructions: 'x'.repeat(20_001), theme: 'dark' })
    await writeFile(settingsFile(), handWritten)
    const service = createSettingsService({ dataDir, secretStore: createMemorySecretStore() })
    expect((await service.view()).settingsProblem).toBeDefined()
    await service.update({ maxTokens: 1000 })
    const kept = (await readdir(dataDir)).find((name) => name !== 'settings.json')!
    expect(await readFile(path.join(dataDir, kept), 'utf8')).toBe(handWritten)
  })

  it('says nothing of a file it read whole', async () => {
    await writeFile(settingsFile(), JSON.stringify({ theme: 'dark' }))
    const service = createSettingsService({ dataDir, secretStore: createMemorySecretStore() })
    expect((await service.view()).settingsProblem).toBeUndefined()
    await service.update({ theme: 'light' })
    expect(await readdir(dataDir)).toEqual(['settings.json'])
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

  it('prefers a key saved in Settings over ANTHROPIC_API_KEY and honours ANTHROPIC_BASE_URL', async () => {
    const service = createSettingsService({
      dataDir,
      secretStore: createMemorySecretStore('sk-stored'),
      env: { ANTHROPIC_API_KEY: 'sk-env', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
    })
    expect(await service.credentials()).toEqual({
      apiKey: 'sk-stored',
      apiKeySource: 'saved',
      baseURL: 'http://127.0.0.1:9',
    })
    expect(await service.view()).toMatchObject({ apiKeySource: 'memory', envApiKey: true })
    // Without a saved key the environment's key is used.
    await service.clearApiKey()
    expect(await service.credentials()).toMatchObject({ apiKey: 'sk-env', apiKeySource: 'env' })
    expect(await service.view()).toMatchObject({ hasApiKey: true, apiKeySource: 'env' })
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
