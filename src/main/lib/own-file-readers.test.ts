/**
 * Each reader of Cairn's own files, asked about a file it may not read (EACCES: a real other
 * account, uid 4242 through setpriv, as root ignores mode bits) and about one removed between
 * its open and its read (through the disk seam). A denied read is told as one, in words and
 * with no path, never taken for "no file" (which had Settings ask for a key the person has,
 * and sync take itself for off); a file removed after its open is read whole, as it was at
 * the open (its descriptor keeps it), never half nor as nothing. All held on main; kept so
 * that they keep holding.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createFileSecretStore } from '../settings/secret-store'
import { readSettingsFile } from '../settings/settings-file'
import { createSyncStore } from '../sync/store'
import { nodeDisk, readPlainFile, readPlainFileAsync, setDisk } from './disk'
import { createRecordingLogger } from './logger'
import { OWN_FILE_CAP } from './own-file-caps'

let dataDir = ''
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-own-readers-'))
})
afterEach(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10 }))

const KEY = 'sk-ant-api03-kept-on-disk'
const CONFIG = { url: 'https://example.com/memory.git', username: 'me', intervalMinutes: 10 }

/** The data folder with a key, settings and sync's config, each written as Cairn writes them. */
async function filled(): Promise<Record<'key' | 'settings' | 'config', string>> {
  const key = path.join(dataDir, 'secrets.json')
  await createFileSecretStore({ file: key }).set(KEY)
  const settings = path.join(dataDir, 'settings.json')
  writeFileSync(settings, JSON.stringify({ model: 'claude-opus-4-1' }))
  mkdirSync(path.join(dataDir, 'sync'))
  const config = path.join(dataDir, 'sync', 'config.json')
  writeFileSync(config, JSON.stringify(CONFIG))
  return { key, settings, config }
}

// What each reader answers, printed as JSON by a child (one line).
const READERS = `
  const out = {}
  const answer = async (name, read) => {
    try { out[name] = { value: await read() } }
    catch (e) { out[name] = { code: e.code, message: e.message } }
  }
  const { createFileSecretStore } = await import(${JSON.stringify(path.resolve('src/main/settings/secret-store.ts'))})
  const { readSettingsFile } = await import(${JSON.stringify(path.resolve('src/main/settings/settings-file.ts'))})
  const { createSyncStore } = await import(${JSON.stringify(path.resolve('src/main/sync/store.ts'))})
  const { readPlainFile, readPlainFileOrNull, readPlainFileAsync } = await import(${JSON.stringify(path.resolve('src/main/lib/disk.ts'))})
  const quiet = { warn() {}, error() {} }
  const [dataDir, key, settings, config] = process.argv.slice(1)
  await answer('key', () => createFileSecretStore({ file: key }).get())
  await answer('settings', () => readSettingsFile(settings, quiet))
  await answer('sync', () => createSyncStore(dataDir, quiet).config())
  await answer('readPlainFile', () => readPlainFile(key, 4096).toString())
  await answer('readPlainFileOrNull', () => readPlainFileOrNull(key, 4096)?.toString() ?? null)
  await answer('readPlainFileAsync', async () => (await readPlainFileAsync(key, 4096)).toString())
  process.stdout.write(JSON.stringify(out) + '\\n')
`

type Answers = Record<string, { value?: unknown; code?: string; message?: string }>

function asAnotherAccount(files: ReadonlyArray<string>): Answers {
  // The folders may be entered by anyone, the files read by root only.
  execFileSync('chmod', ['755', dataDir, path.join(dataDir, 'sync')])
  for (const file of files) chmodSync(file, 0o600)
  const child = spawnSync(
    'setpriv',
    [
      '--reuid=4242',
      '--regid=4242',
      '--clear-groups',
      process.execPath,
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      READERS,
      dataDir,
      ...files,
    ],
    { encoding: 'utf8', env: { ...process.env, HOME: dataDir } },
  )
  expect(child.status, child.stderr).toBe(0)
  return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Answers
}

describe('own files this account may not read (EACCES)', () => {
  it('are told as denied, in words with no path, never as no file', async () => {
    const { key, settings, config } = await filled()
    const answers = asAnotherAccount([key, settings, config])
    expect(answers['key']).toMatchObject({ code: 'access-denied' })
    expect(answers['key']!.message).toMatch(/^Your saved API key could not be read because/)
    // Defaults this run, with why, and no save over the file (settings-service refuses one).
    expect(answers['settings']!.value).toMatchObject({ unreadable: false })
    expect((answers['settings']!.value as { notRead?: string }).notRead).toBeTruthy()
    expect(answers['sync']).toMatchObject({ code: 'access-denied' })
    expect(answers['sync']!.message).toMatch(/^Cairn could not read its sync settings because/)
    for (const low of ['readPlainFile', 'readPlainFileOrNull', 'readPlainFileAsync']) {
      expect(answers[low], low).toMatchObject({ code: 'EACCES' })
    }
    // What reaches the window (node's own error, below the readers, names the file).
    const shown = [
      answers['key']!.message,
      answers['sync']!.message,
      JSON.stringify(answers['settings']),
    ]
    for (const words of shown) expect(words).not.toContain(dataDir)
  })
})

describe('own files removed between their open and their read', () => {
  /** `task` with each file unlinked right after the open that `fstat` follows. */
  async function unlinkedAfterOpen<T>(task: () => Promise<T>): Promise<T> {
    const gone = (fd: number) => {
      const name = readlinkSync(`/proc/self/fd/${fd}`)
      if (name.startsWith(dataDir) && !name.endsWith('(deleted)')) rmSync(name)
    }
    const restore = setDisk({
      ...nodeDisk,
      fstatSync(fd) {
        gone(fd)
        return nodeDisk.fstatSync(fd)
      },
      promises: {
        ...nodeDisk.promises,
        async fstat(fd) {
          gone(fd)
          return nodeDisk.promises.fstat(fd)
        },
      },
    })
    try {
      return await task()
    } finally {
      restore()
    }
  }

  it('are read whole, as they were at the open', async () => {
    const { key, settings, config } = await filled()
    const keyText = readPlainFile(key, OWN_FILE_CAP.SETTINGS).toString()
    expect(await unlinkedAfterOpen(() => createFileSecretStore({ file: key }).get())).toBe(KEY)
    expect(
      (await unlinkedAfterOpen(() => readSettingsFile(settings, createRecordingLogger()))).settings
        .model,
    ).toBe('claude-opus-4-1')
    expect(
      await unlinkedAfterOpen(() => createSyncStore(dataDir, createRecordingLogger()).config()),
    ).toMatchObject(CONFIG)
    writeFileSync(key, keyText)
    expect(
      (await unlinkedAfterOpen(async () => readPlainFile(key, OWN_FILE_CAP.SETTINGS))).toString(),
    ).toBe(keyText)
    writeFileSync(key, keyText)
    expect(
      (await unlinkedAfterOpen(() => readPlainFileAsync(key, OWN_FILE_CAP.SETTINGS))).toString(),
    ).toBe(keyText)
    // Each was gone by then.
    for (const file of [key, settings, config]) expect(existsSync(file), file).toBe(false)
  })
})
