import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createCore, type Core } from './core'
import { callCore } from './core-test-support'
import { LOG_FILES } from './history/objects/object-log'
import { LOCK_FILE } from './lib/instance-lock'
import { createRecordingLogger } from './lib/logger'

// The core closes its services before the memory. A service whose close throws (none does
// today; a bug, or a future one) left the memory open: its lock held (the next start in this
// process refused as "in use", in another one a stale lock to take over) and its write-ahead
// log not emptied (replayed at the next open). The memory is now closed whatever they do.

// Which service's close throws in the test running (null: none).
const failing = vi.hoisted(() => ({ service: null as 'sync' | 'chat' | 'hygiene' | null }))

function throwing<T extends { close(): Promise<void> }>(
  service: T,
  name: typeof failing.service,
): T {
  const close = service.close.bind(service)
  return Object.assign(service, {
    async close() {
      await close()
      if (failing.service === name) throw new Error(`${name} stuck at ${os.tmpdir()}/x.json`)
    },
  })
}

vi.mock('./sync', async (importOriginal) => {
  const real = await importOriginal<typeof import('./sync')>()
  return {
    ...real,
    createSyncService: (...args: Parameters<typeof real.createSyncService>) =>
      throwing(real.createSyncService(...args), 'sync'),
  }
})
vi.mock('./agent', async (importOriginal) => {
  const real = await importOriginal<typeof import('./agent')>()
  return {
    ...real,
    createChatService: (...args: Parameters<typeof real.createChatService>) =>
      throwing(real.createChatService(...args), 'chat'),
  }
})
vi.mock('./hygiene', async (importOriginal) => {
  const real = await importOriginal<typeof import('./hygiene')>()
  return {
    ...real,
    createHygieneService: (...args: Parameters<typeof real.createHygieneService>) =>
      throwing(real.createHygieneService(...args), 'hygiene'),
  }
})

let dataDir: string | undefined
let open: Core | undefined
afterEach(async () => {
  failing.service = null
  await open?.close()
  open = undefined
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true })
  dataDir = undefined
})

describe('closing the core when a service’s close throws', () => {
  it.each(['sync', 'chat', 'hygiene'] as const)(
    '%s: the memory is closed all the same, its lock released and its log emptied',
    async (service) => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-close-'))
      const logger = createRecordingLogger()
      const core = await createCore({ dataDir, logger, env: {} })
      const written = await core.dispatch('memory:write', {
        path: '/memories/notes.md',
        content: 'kept\n',
      })
      expect(written.ok).toBe(true)

      failing.service = service
      await core.close()
      failing.service = null

      // Reported in the log, named by its service.
      const report = logger.entries.find((entry) => entry.message.includes(service))
      expect(report?.level).toBe('error')
      expect(String(report?.error)).toContain(`${service} stuck`)
      // The memory's close ran: no lock left, the write-ahead log emptied.
      expect(fs.existsSync(path.join(dataDir, LOCK_FILE))).toBe(false)
      for (const name of LOG_FILES) {
        const log = path.join(dataDir, 'history.git', name)
        if (fs.existsSync(log)) expect(fs.statSync(log).size, name).toBe(0)
      }

      // The next start, in this same process, is not refused as "in use", takes over nothing
      // and has the change.
      open = await createCore({ dataDir, logger: createRecordingLogger(), env: {} })
      expect((await callCore(open, 'app:info')).recovery).toBeNull()
      const read = await callCore(open, 'memory:read', { path: '/memories/notes.md' })
      expect(read.text).toBe('kept\n')
      const git = (...args: string[]) =>
        execFileSync('git', ['--git-dir', path.join(dataDir!, 'history.git'), ...args], {
          encoding: 'utf8',
          env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir },
        })
      expect(git('show', 'main:notes.md')).toBe('kept\n')
      git('fsck', '--strict')
    },
  )
})
