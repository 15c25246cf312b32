import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { createRecordingLogger } from '../lib/logger'
import { createFileSecretStore } from './secret-store'
import { createSettingsService } from './settings-service'
import { DEFAULT_SETTINGS } from './settings-file'

// rdisk30: a disk that failed the read of the API key's file or of settings.json was taken for
// what the file held. The key read as "no key stored" (Settings asked for a key the person has,
// and one typed then replaced it); settings.json read as unreadable, and the next change moved
// a sound file aside. A read error is now told as one, and nothing is written over the file.
// A real data folder; the failure through the disk seam, for the one file only.

let dataDir = ''
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-settings-faults-'))
})
afterEach(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10 }))

const KEY = 'sk-ant-api03-kept-on-disk'

// Every open of `file` fails with `code` until the returned function is called.
function failOpen(file: string, code = 'EIO'): () => void {
  return setDisk({
    ...nodeDisk,
    promises: {
      ...nodeDisk.promises,
      async open(at, flags, mode) {
        if (at === file) throw Object.assign(new Error(`${code}: failed, open '${at}'`), { code })
        return nodeDisk.promises.open(at, flags, mode)
      },
    },
  })
}

async function savedKey(): Promise<{ file: string; text: string }> {
  const file = path.join(dataDir, 'secrets.json')
  await createFileSecretStore({ file }).set(KEY)
  return { file, text: await readFile(file, 'utf8') }
}

it('a key the disk fails to read is an io-error, never no key; the file stays; read again next time', async () => {
  const { file, text } = await savedKey()
  const store = createFileSecretStore({ file })
  const restore = failOpen(file)
  try {
    await expect(store.get()).rejects.toMatchObject({
      code: 'io-error',
      message:
        'Your saved API key could not be read because the disk reported a read or write error. It was left as it is, and Cairn reads it again at the next try.',
    })
  } finally {
    restore()
  }
  expect(await readFile(file, 'utf8')).toBe(text)
  expect(await store.get()).toBe(KEY)
})

it('a denied read of the key says so in its words', async () => {
  const { file } = await savedKey()
  const restore = failOpen(file, 'EACCES')
  try {
    await expect(createFileSecretStore({ file }).get()).rejects.toMatchObject({
      code: 'access-denied',
      message: expect.stringContaining('because permission was denied by the operating system'),
    })
  } finally {
    restore()
  }
})

it('Settings shows a key it could not read as saved, with why, and asks for none', async () => {
  const { file, text } = await savedKey()
  const settings = createSettingsService({
    dataDir,
    secretStore: createFileSecretStore({ file }),
    env: { ANTHROPIC_API_KEY: 'sk-ant-api03-from-env' },
    logger: createRecordingLogger(),
  })
  const restore = failOpen(file)
  try {
    const view = await settings.view()
    expect(view).toMatchObject({ hasApiKey: true, apiKeySource: 'plaintext' })
    expect(view.apiKeyProblem).toBe(
      'Your saved API key could not be read because the disk reported a read or write error. It was left as it is, and Cairn reads it again at the next try.',
    )
    expect(JSON.stringify(view)).not.toContain(KEY)
    // The env key is not used in its place: the saved key wins, and it is only unread.
    await expect(settings.credentials()).rejects.toMatchObject({ code: 'io-error' })
  } finally {
    restore()
  }
  expect(await readFile(file, 'utf8')).toBe(text)
  const view = await settings.view()
  expect(view.apiKeyProblem).toBeUndefined()
  expect((await settings.credentials()).apiKey).toBe(KEY)
})

it('a settings.json the disk fails to read is kept as it is: defaults this run, a save refused, read again next time', async () => {
  const file = path.join(dataDir, 'settings.json')
  const written = JSON.stringify({
    ...DEFAULT_SETTINGS,
    model: 'claude-person-choice',
    maxTokens: 1234,
  })
  await writeFile(file, written)
  const settings = createSettingsService({
    dataDir,
    secretStore: createFileSecretStore({ file: path.join(dataDir, 'secrets.json') }),
    logger: createRecordingLogger(),
  })
  const restore = failOpen(file)
  try {
    const view = await settings.view()
    expect(view.model).toBe(DEFAULT_SETTINGS.model)
    expect(view.settingsProblem).toBe(
      'Your settings file (settings.json in your data folder) could not be read because the disk reported a read or write error, so the defaults are shown. It was left as it is and is read again next time; a change to a setting is not saved until it can be read.',
    )
    await expect(settings.update({ theme: 'dark' })).rejects.toMatchObject({
      code: 'io-error',
      message:
        'Settings were not saved: your settings file could not be read because the disk reported a read or write error. It was left as it is; try again once the disk answers.',
    })
  } finally {
    restore()
  }
  expect(await readdir(dataDir)).toEqual(['settings.json'])
  expect(await readFile(file, 'utf8')).toBe(written)
  // The next read reads the file again: the person's settings, and a change saved over them.
  const view = await settings.view()
  expect(view).toMatchObject({ model: 'claude-person-choice', maxTokens: 1234 })
  expect(view.settingsProblem).toBeUndefined()
  await settings.update({ theme: 'dark' })
  expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({
    model: 'claude-person-choice',
    maxTokens: 1234,
    theme: 'dark',
  })
  expect(await readdir(dataDir)).toEqual(['settings.json'])
})
