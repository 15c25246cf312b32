import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk } from '../lib/disk-hooks'
import { openVersionedMemory, type VersionedMemory } from './index'
import { FOLDERS_AFTER_OPEN_MS } from './object-store'
import { fsck, gitCli, headMatchesFolder, tempDataDir } from './test-helpers'

// A history packed by `git gc` (or a clone) has no object folders: each of the first few
// hundred commands after it made the folder of one or more of its objects on its path. The
// store now makes the missing ones between commands, one a turn of the event loop, stopping at
// its close (stop 31). A kill or a close at any point of that loses nothing. A name taken by a
// file or a link is left as it is and the making goes on; any other refusal ends it quietly, and
// each command then makes the folder it needs, as before.

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
const folders = () =>
  fs
    .readdirSync(objectsDir(), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^[0-9a-f]{2}$/.test(entry.name))
    .map((entry) => entry.name)

/** A history of `commits` commits over `files` files, then packed by `git gc`: no object folder left. */
async function packedHistory(commits = 40, files = 20): Promise<void> {
  const first = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  for (let i = 0; i < commits; i++) {
    await first.execute(
      { command: 'create', path: `/memories/f${i % files}.md`, file_text: `version ${i}\n` },
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

async function commandsAfter(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const outcome = await memory!.execute(
      { command: 'create', path: `/memories/n${i}.md`, file_text: `new ${i}\n` },
      origin,
    )
    expect(outcome.isError).toBeFalsy()
  }
}

describe('the making of a packed history’s missing folders, with something in its way', () => {
  it('leaves a file and a dangling link standing in two folders’ places and makes the rest', async () => {
    await packedHistory(20, 10)
    fs.writeFileSync(path.join(objectsDir(), 'ff'), 'not a folder')
    fs.symlinkSync(path.join(dataDir, 'nowhere'), path.join(objectsDir(), 'fe'))
    memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    await vi.waitFor(() => expect(folders().length).toBe(254), { timeout: 60_000 })
    expect(fs.readFileSync(path.join(objectsDir(), 'ff'), 'utf8')).toBe('not a folder')
    expect(fs.readlinkSync(path.join(objectsDir(), 'fe'))).toBe(path.join(dataDir, 'nowhere'))
    expect(fs.existsSync(path.join(dataDir, 'nowhere'))).toBe(false)
  }, 90_000)

  it('ends quietly at a refusal, and the commands after make their own folders', async () => {
    await packedHistory(20, 10)
    const refused: string[] = []
    restore = setDisk(
      hookDisk(nodeDisk, (call) => {
        const { name, args } = call
        const target = String(args[0])
        if (name !== 'mkdirSync' || path.dirname(target) !== objectsDir()) return undefined
        // The making's third folder: refused as a read-only objects/ refuses it.
        if (refused.length === 0 && folders().length === 2) {
          refused.push(path.basename(target))
          return errnoError(call, 'EACCES')
        }
        return undefined
      }).disk,
    )
    memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    await vi.waitFor(() => expect(refused).toHaveLength(1), { timeout: 20_000 })
    await new Promise((resolve) => setTimeout(resolve, FOLDERS_AFTER_OPEN_MS + 300))
    // Nothing made after the refusal.
    expect(folders()).toHaveLength(2)
    await commandsAfter(12)
    await memory.close()
    memory = null
    restore()
    restore = null
    expect(folders().length).toBeGreaterThan(2)
    expect(folders().length).toBeLessThan(256)
    expect(await headMatchesFolder(dataDir)).toBe(true)
    fsck(dataDir)
  })

  it('goes on with nothing else waking the event loop: all 256 made, not one', async () => {
    await packedHistory(20, 10)
    // A child whose loop has nothing but its stdin to wake it (as an idle app's, whose window
    // talks to it outside Node's loop): it says `made` once the 256th folder is there, and the
    // folders it sees when asked. The making's steps were unreferenced immediates, which Node
    // runs only when something else wakes the loop: here the first step and then no other.
    const index = JSON.stringify(path.resolve('src/main/history/index.ts'))
    const script = `
      import fs from 'node:fs'
      const { openVersionedMemory } = await import(${index})
      const { setDisk, nodeDisk } = await import(${JSON.stringify(path.resolve('src/main/lib/disk.ts'))})
      const { hookDisk } = await import(${JSON.stringify(path.resolve('src/main/lib/disk-hooks.ts'))})
      const objects = ${JSON.stringify(objectsDir())}
      const count = () => fs.readdirSync(objects).filter((name) => /^[0-9a-f]{2}$/.test(name)).length
      let said = false
      setDisk(hookDisk(nodeDisk, ({ name }) => {
        if (name === 'mkdirSync' && !said) queueMicrotask(() => {
          if (!said && count() === 256) { said = true; process.stdout.write('made\\n') }
        })
      }).disk)
      await openVersionedMemory({ dataDir: ${JSON.stringify(dataDir)}, watch: false, maintenance: false })
      process.stdout.write('open\\n')
      process.stdin.on('data', () => process.stdout.write('folders ' + count() + '\\n'))
    `
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    )
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
    try {
      // Made long before this, or never: a bound so that the old code ends the test.
      await vi
        .waitFor(() => expect(out, err).toContain('made'), { timeout: 30_000, interval: 200 })
        .catch(() => undefined)
      child.stdin.write('?\n')
      await vi.waitFor(() => expect(out, err).toMatch(/folders \d+/), { timeout: 30_000 })
      expect(out.match(/folders (\d+)/)?.[1]).toBe('256')
    } finally {
      child.kill('SIGKILL')
    }
  }, 90_000)
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
