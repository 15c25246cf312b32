import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { hookDisk } from '../lib/disk-hooks'
import { openVersionedMemory, type VersionedMemory } from './index'
import { FOLDERS_AFTER_OPEN_MS } from './object-store'
import { fsck, gitCli, headMatchesFolder, tempDataDir } from './test-helpers'

// A history packed by `git gc` (or a clone) has no object folders: each of the first few
// hundred commands after it made the folder of one or more of its objects on its path. The
// store now makes the missing ones between commands, one a turn of the event loop, stopping at
// its close (stop 31). A kill or a close at any point of that loses nothing.

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory | null = null
let restore: (() => void) | null = null

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(async () => {
  restore?.()
  restore = null
  await memory?.close()
  memory = null
  await cleanup()
})

const origin = { actor: 'claude', conversationId: 'c_folders', toolUseId: 'toolu_f' } as const
const objectsDir = () => path.join(dataDir, 'history.git', 'objects')
const folders = () => fs.readdirSync(objectsDir()).filter((name) => /^[0-9a-f]{2}$/.test(name))

/** A history of 40 commits over 20 files, then packed by `git gc`: no object folder left. */
async function packedHistory(): Promise<void> {
  const first = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  for (let i = 0; i < 40; i++) {
    await first.execute(
      { command: 'create', path: `/memories/f${i % 20}.md`, file_text: `version ${i}\n` },
      origin,
    )
  }
  await first.close()
  gitCli(dataDir, 'gc', '--quiet', '--prune=now')
  expect(folders()).toEqual([])
}

function countingMkdirs(): string[] {
  const made: string[] = []
  restore = setDisk(
    hookDisk(nodeDisk, ({ name, args }) => {
      if (name === 'mkdirSync' && String(args[0]).startsWith(objectsDir())) {
        made.push(path.basename(String(args[0])))
      }
    }).disk,
  )
  return made
}

describe('a packed history without object folders', () => {
  it('has all 256 made between commands, and the commands after make none', async () => {
    await packedHistory()
    const commits = Number(gitCli(dataDir, 'rev-list', '--count', 'main').trim())
    memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    await vi.waitFor(() => expect(folders().length).toBe(256), { timeout: 20_000 })
    const made = countingMkdirs()
    for (let i = 0; i < 30; i++) {
      await memory.execute(
        { command: 'create', path: `/memories/n${i}.md`, file_text: `new ${i}\n` },
        origin,
      )
    }
    expect(made).toEqual([])
    await memory.close()
    memory = null
    expect(await headMatchesFolder(dataDir)).toBe(true)
    fsck(dataDir)
    expect(Number(gitCli(dataDir, 'rev-list', '--count', 'main').trim())).toBe(commits + 30)
  })

  it('makes none after a close, whether the making had begun or not', async () => {
    await packedHistory()
    // Closed before the first step.
    memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    await memory.close()
    memory = null
    await new Promise((resolve) => setTimeout(resolve, FOLDERS_AFTER_OPEN_MS + 300))
    expect(folders()).toEqual([])
    // Closed part of the way through.
    memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    await vi.waitFor(() => expect(folders().length).toBeGreaterThan(20), { timeout: 20_000 })
    await memory.close()
    memory = null
    const atClose = folders()
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(folders()).toEqual(atClose)
    // Nothing is made behind a removal after the close (a test's cleanup, a person's rm -r).
    fs.rmSync(objectsDir(), { recursive: true })
    expect(fs.existsSync(objectsDir())).toBe(false)
  })

  it('loses no acknowledged command to a kill at any point of the making', async () => {
    await packedHistory()
    const index = JSON.stringify(path.resolve('src/main/history/index.ts'))
    const acked = path.join(path.dirname(dataDir), `${path.basename(dataDir)}-acked`)
    // Folders there after each kill: the making was cut at different points.
    const made: number[] = []
    try {
      // Kills from before the first step (FOLDERS_AFTER_OPEN_MS) to well after the last.
      for (const [round, killAt] of [100, 220, 240, 270, 320, 450].entries()) {
        const script = `
          import fs from 'node:fs'
          const { openVersionedMemory } = await import(${index})
          const memory = await openVersionedMemory({ dataDir: ${JSON.stringify(dataDir)}, watch: false, maintenance: false })
          process.stdout.write('open\\n')
          for (let i = 0; ; i++) {
            const origin = { actor: 'claude', conversationId: 'c_kill', toolUseId: 'toolu_${round}_' + i }
            await memory.execute({ command: 'create', path: '/memories/k${round}_' + (i % 7) + '.md', file_text: 'round ${round} step ' + i + '\\n' }, origin)
            fs.writeFileSync(${JSON.stringify(acked)}, String(i + 1))
            // Commands a few milliseconds apart, as a model's are, so the making goes on between.
            await new Promise((resolve) => setTimeout(resolve, 2))
          }
        `
        fs.rmSync(acked, { force: true })
        await killedAfter(script, killAt)
        const count = fs.existsSync(acked) ? Number(fs.readFileSync(acked, 'utf8')) : 0
        made.push(folders().length)
        memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
        await memory.close()
        memory = null
        expect(await headMatchesFolder(dataDir)).toBe(true)
        fsck(dataDir)
        // Every acknowledged command is a commit of its own (the open may add its own save).
        const subjects = gitCli(dataDir, 'log', '--format=%(trailers:key=Tool-Use-Id,valueonly)')
        for (let i = 0; i < count; i++) expect(subjects).toContain(`toolu_${round}_${i}\n`)
      }
      expect(new Set(made).size).toBeGreaterThan(2)
    } finally {
      fs.rmSync(acked, { force: true })
    }
  }, 120_000)
})

/** Runs `script` in a child Node; kills it with SIGKILL `ms` after it first writes. */
async function killedAfter(script: string, ms: number): Promise<void> {
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    proc.once('exit', (_code, signal) => resolve(signal)),
  )
  await Promise.race([new Promise((resolve) => proc.stdout.once('data', resolve)), exited])
  await new Promise((resolve) => setTimeout(resolve, ms))
  proc.kill('SIGKILL')
  expect(await exited, stderr).toBe('SIGKILL')
}
