import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { setDisk } from '../lib/disk'
import { closesFailing } from '../lib/disk-hooks'
import { createRecordingLogger } from '../lib/logger'
import { createConversationStore } from './conversation-store'

// A save holds the file it replaces open across its rename, only to read it (an outside write
// landing on it is kept aside). That descriptor's close failing (EIO, released all the same)
// must not make a save that happened report a failure.

let dataDir: string
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-conversation-close-'))
})
afterEach(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10 }))

describe('a save whose replaced file fails to close', () => {
  it('is saved, told as saved, and read back as Cairn’s own', async () => {
    const logger = createRecordingLogger()
    const told: string[] = []
    const store = createConversationStore({
      dataDir,
      logger,
      onChangedOutside: (id) => told.push(id),
    })
    const made = await store.create('Tea notes')
    const file = path.join(dataDir, 'conversations', `${made.id}.json`)
    const failing = closesFailing((name) => name === file)
    const restore = setDisk(failing.disk)
    try {
      const renamed = await store.rename(made.id, 'Tea and cake')
      expect(renamed.title).toBe('Tea and cake')
    } finally {
      restore()
    }
    expect(failing.failed()).toBe(1)
    const again = await store.get(made.id)
    expect(again.title).toBe('Tea and cake')
    expect(again.changedOutside ?? false).toBe(false)
    const reopened = createConversationStore({ dataDir, logger })
    expect((await reopened.get(made.id)).title).toBe('Tea and cake')
    expect(logger.entries).toEqual([])
    expect(told).toEqual([])
  })
})
