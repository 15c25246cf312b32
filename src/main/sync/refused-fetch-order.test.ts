/**
 * A refused fetch's removal beside a maintenance pass that holds the pack folder (807e8f95):
 * the removal takes the folder before the serial queue, as a fetch does. The other way round
 * it held the queue while waiting for the folder, and the pass, holding the folder, waited at
 * its next pause for the queue to go idle: each waited for the other for good, and no sync,
 * command or pass ever ended. A real history, a real git server whose remote holds a folder
 * listing git calls damaged, the real file system with one call held; git as second opinion.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { openVersionedMemory } from '../history'
import type { HistoryGit, HistorySession, VersionedMemory } from '../history/types'
import { nodeDisk, setDisk } from '../lib/disk'
import { createRecordingLogger } from '../lib/logger'
import {
  otherClient as git,
  pushDamagedListing,
  syncServiceOver,
  useSyncServer,
} from './test-support'

const shared = useSyncServer()

/** `work`, or a failure naming `what` once a minute passes without an answer. */
async function answered<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what}: no answer in 60 s (waiting for each other)`)),
          60_000,
        )
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}

describe('a refused fetch removed while a maintenance pass holds the pack folder', () => {
  // Up to a minute for each of the sync, a command and the pass before they count as stuck.
  it('lets the sync answer with its refusal, a command commit and the pass finish', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-refused-order-'))
    const memory = await openVersionedMemory({
      dataDir,
      watch: false,
      maintenance: false,
      machine: 'desktop',
      logger: createRecordingLogger(),
    })
    // The pass is held at its first fsync after listing what it packs: writing the new pack,
    // inside its step that changes the pack folder (`PackFolderGate.change`).
    let holdNext = false
    let reached: () => void = () => undefined
    const held = new Promise<void>((resolve) => (reached = resolve))
    let release: () => void = () => undefined
    const released = new Promise<void>((resolve) => (release = resolve))
    const restore = setDisk({
      ...nodeDisk,
      async fsync(fd) {
        if (holdNext) {
          holdNext = false
          reached()
          await released
        }
        return nodeDisk.fsync(fd)
      },
    })
    const steps: string[] = []
    let stepsWhenHeld: string[] = []
    const passes: Array<ReturnType<VersionedMemory['maintain']>> = []
    let holding = false
    // Once the integration is refused, the pass starts and is held in that step before the
    // sync goes on to remove what its fetch brought; the removal's first call for the queue
    // or the folder lets it go on.
    let armed = false
    const startPassHeld = async () => {
      const pass = memory.maintain({
        onStep(step) {
          steps.push(step)
          if (step === 'listed') holdNext = true
        },
      })
      passes.push(pass)
      const ended = pass.then(
        () => 'ended',
        () => 'ended',
      )
      if ((await Promise.race([held.then(() => 'held'), ended])) === 'ended') {
        throw new Error('the pass ended before it was held')
      }
      stepsWhenHeld = [...steps]
      holding = true
    }
    const letGo = () => {
      if (!holding) return
      holding = false
      release()
    }
    const gitOfSync: HistoryGit = {
      ...memory.git,
      transfer: <T>(task: () => Promise<T>) => {
        const running = memory.git.transfer(task)
        letGo()
        return running
      },
      exclusive: <T>(task: (session: HistorySession) => Promise<T>) => {
        const running = memory.git.exclusive(task)
        if (holding) {
          letGo()
          return running
        }
        if (!armed || passes.length > 0) return running
        return running.catch(async (error: unknown): Promise<never> => {
          await startPassHeld()
          throw error
        })
      },
    }
    const logger = createRecordingLogger()
    const sync = syncServiceOver(dataDir, memory, gitOfSync, logger)
    let stuck = true
    try {
      // Enough loose objects that the pass pauses while it removes them (every 16).
      for (let i = 0; i < 40; i++) {
        await memory.execute(
          { command: 'create', path: `/memories/d-${i}.md`, file_text: `desktop ${i}\n` },
          { actor: 'user' },
        )
      }
      const repo = shared.newRepo('refused-order')
      await sync.configure({
        url: shared.server.url(repo),
        username: shared.server.user,
        token: shared.server.token,
        intervalMinutes: 0,
      })
      expect((await sync.syncNow()).state).toBe('idle')
      const remote = shared.server.gitdir(repo)
      pushDamagedListing(remote)
      const gitdir = path.join(dataDir, 'history.git')
      const seen = git(gitdir, null, 'rev-parse', 'refs/remotes/cairn-sync/main')
      const head = git(gitdir, null, 'rev-parse', 'main')

      armed = true
      // Before: the removal held the queue waiting for the folder, the pass held the folder
      // waiting for the queue; the sync never answered.
      const status = await answered(sync.syncNow(), 'the sync')
      // Held while it wrote its pack, inside the step that holds the folder.
      expect(stepsWhenHeld).toContain('listed')
      expect(stepsWhenHeld).not.toContain('pack-durable')
      expect(status.state).toBe('error')
      expect(status.error?.code).toBe('sync-unsafe-content')
      const made = await answered(
        memory.execute(
          { command: 'create', path: '/memories/after.md', file_text: 'after\n' },
          { actor: 'user' },
        ),
        'a command',
      )
      expect(made.isError).toBe(false)
      expect(made.commit).not.toBeNull()
      expect(passes).toHaveLength(1)
      const report = await answered(passes[0]!, 'the pass')
      expect(report.packed).toBeGreaterThan(0)
      expect(steps).toContain('pack-durable')

      // The refusal changed nothing here; the command's commit is on main.
      expect(git(gitdir, null, 'rev-parse', 'main^')).toBe(head)
      expect(git(gitdir, null, 'show', 'main:after.md')).toBe('after')
      expect(git(gitdir, null, 'rev-parse', 'refs/remotes/cairn-sync/main')).toBe(seen)
      git(gitdir, null, 'fsck', '--strict', '--no-dangling', '--connectivity-only', 'main')
      stuck = false
    } finally {
      release()
      restore()
      const closing = (async () => {
        await sync.close()
        await memory.close()
      })()
      // Stuck for good (the fault), nothing closes: the failure above is what is reported.
      if (stuck) await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 5_000))])
      else await closing
      await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
    }
  }, 120_000)
})
