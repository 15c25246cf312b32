import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createCore, prepareDataDir, type Core } from './core'
import { createRecordingLogger } from './lib/logger'
import { createFileSecretStore } from './settings'

// A data folder reached through a symlink (`~/.config/Cairn` linked to another disk, or
// CAIRN_DATA_DIR through a link): Cairn started and memory worked, but saving the settings or
// the API key answered "Something went wrong inside Cairn" (their folder is opened with
// O_NOFOLLOW). The data folder's real path is now taken once at start.

let core: Core | undefined
let base: string | undefined
afterEach(async () => {
  await core?.close()
  if (base) fs.rmSync(base, { recursive: true, force: true, maxRetries: 10 })
  core = undefined
  base = undefined
})

describe('a data folder reached through a symlink', () => {
  it('saves the settings and the API key into the real folder', async () => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-link-'))
    const real = path.join(base, 'real-data')
    fs.mkdirSync(real)
    const link = path.join(base, 'Cairn')
    fs.symlinkSync(real, link)

    // As index.ts does: the real path first, then the stores that write there.
    const dataDir = await prepareDataDir(link)
    expect(dataDir).toBe(fs.realpathSync(real))
    core = await createCore({
      dataDir: link,
      logger: createRecordingLogger(),
      env: {},
      secretStore: createFileSecretStore({ file: path.join(dataDir, 'secrets.json') }),
    })
    expect(core.dataDir).toBe(dataDir)

    const updated = await core.dispatch('settings:update', { theme: 'dark' })
    expect(updated.ok).toBe(true)
    const key = `sk-ant-api03-${'a'.repeat(93)}AA`
    const saved = await core.dispatch('settings:setApiKey', { key })
    expect(saved.ok).toBe(true)
    const written = await core.dispatch('memory:write', {
      path: '/memories/notes.md',
      content: 'hello\n',
    })
    expect(written.ok).toBe(true)

    expect(JSON.parse(fs.readFileSync(path.join(real, 'settings.json'), 'utf8'))).toMatchObject({
      theme: 'dark',
    })
    // Read back from the real folder by a store of its own, as at the next start.
    expect(await createFileSecretStore({ file: path.join(real, 'secrets.json') }).get()).toBe(key)
    expect(fs.readFileSync(path.join(real, 'memories', 'notes.md'), 'utf8')).toBe('hello\n')
    // The link itself is left as it was.
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true)
  })

  it("saves through a store given the link's path too (a caller that did not resolve it)", async () => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-link-'))
    const real = path.join(base, 'real-data')
    fs.mkdirSync(real)
    const link = path.join(base, 'Cairn')
    fs.symlinkSync(real, link)
    const store = createFileSecretStore({ file: path.join(link, 'secrets.json') })
    const key = `sk-ant-api03-${'b'.repeat(93)}AA`
    await store.set(key)
    expect(await createFileSecretStore({ file: path.join(real, 'secrets.json') }).get()).toBe(key)
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true)
  })
})
