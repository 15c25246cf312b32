import { execFileSync, spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'

// disk29: settings.json and sync's own files were read by name with readFile, so a fifo there
// held the read (a thread of the pool) forever and the settings never loaded. Run in a child
// process, so a hang on the code before ends as a failed test (the child killed).

let dataDir = ''
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-settings-'))
})
afterEach(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10 }))

it('a fifo at settings.json and at sync/config.json: defaults, unreadable, never waited on', async () => {
  const settings = path.join(dataDir, 'settings.json')
  execFileSync('mkfifo', [settings])
  await mkdir(path.join(dataDir, 'sync'))
  execFileSync('mkfifo', [path.join(dataDir, 'sync', 'config.json')])
  const script = `
    const { readSettingsFile } = await import(${JSON.stringify(path.resolve('src/main/settings/settings-file.ts'))})
    const { createSyncStore } = await import(${JSON.stringify(path.resolve('src/main/sync/store.ts'))})
    const quiet = { info() {}, warn() {}, error() {} }
    const read = await readSettingsFile(${JSON.stringify(settings)}, quiet)
    process.stdout.write('SETTINGS ' + read.unreadable + '\\n')
    const config = await createSyncStore(${JSON.stringify(dataDir)}, quiet).config()
    process.stdout.write('SYNC ' + JSON.stringify(config) + '\\n')
  `
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()))
  // Not a timing assert: the guard only ends a child that would otherwise never end.
  const guard = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  clearTimeout(guard)
  expect(out).toContain('SETTINGS true')
  expect(out).toMatch(/SYNC \{.*\}/)
  expect(code).toBe(0)
}, 90_000)
