import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk } from '../lib/disk-hooks'
import { openVersionedMemory, type VersionedMemory } from './index'
import { FOLDERS_AFTER_OPEN_MS } from './object-store'
import { fsck, gitCli, headMatchesFolder, tempDataDir } from './test-helpers'

// The missing object folders of a packed history are made after open (perf31): what the
// making does when something is in its way. A name taken by a file or a link is left as it
// is and the making goes on; any other refusal ends it quietly, and each command then makes
// the folder it needs, as before stop 31.

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

const origin = { actor: 'claude', conversationId: 'c_hostile', toolUseId: 'toolu_h' } as const
const objectsDir = () => path.join(dataDir, 'history.git', 'objects')
const folders = () =>
  fs
    .readdirSync(objectsDir(), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^[0-9a-f]{2}$/.test(entry.name))
    .map((entry) => entry.name)

async function packedHistory(): Promise<void> {
  const first = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  for (let i = 0; i < 20; i++) {
    await first.execute(
      { command: 'create', path: `/memories/f${i % 10}.md`, file_text: `version ${i}\n` },
      origin,
    )
  }
  await first.close()
  gitCli(dataDir, 'gc', '--quiet', '--prune=now')
  expect(folders()).toEqual([])
}

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
    await packedHistory()
    fs.writeFileSync(path.join(objectsDir(), 'ff'), 'not a folder')
    fs.symlinkSync(path.join(dataDir, 'nowhere'), path.join(objectsDir(), 'fe'))
    memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    await vi.waitFor(() => expect(folders().length).toBe(254), { timeout: 60_000 })
    expect(fs.readFileSync(path.join(objectsDir(), 'ff'), 'utf8')).toBe('not a folder')
    expect(fs.readlinkSync(path.join(objectsDir(), 'fe'))).toBe(path.join(dataDir, 'nowhere'))
    expect(fs.existsSync(path.join(dataDir, 'nowhere'))).toBe(false)
  }, 90_000)

  it('ends quietly at a refusal, and the commands after make their own folders', async () => {
    await packedHistory()
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
    await packedHistory()
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
