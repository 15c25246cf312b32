import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { setDisk } from '../lib/disk'
import { closesFailing } from '../lib/disk-hooks'
import { createRecordingLogger } from '../lib/logger'
import { COMMAND_INTENT_FILE, commandIntents } from './command-intent'
import { systemIntent } from './repo'

let gitdir: string

beforeEach(async () => {
  gitdir = await mkdtemp(path.join(os.tmpdir(), 'cairn-intent-'))
})
afterEach(() => rm(gitdir, { recursive: true, force: true, maxRetries: 10 }))

describe('the note of the command in flight, whose close fails after the write', () => {
  it('is taken as written, and blanked once its command is done', async () => {
    const logger = createRecordingLogger()
    const intents = commandIntents(gitdir, logger)
    const file = path.join(gitdir, COMMAND_INTENT_FILE)
    const failing = closesFailing((name) => name === file)
    const restore = setDisk(failing.disk)
    try {
      intents.record(null, systemIntent('delete', 'delete a.md'), ['a.md'])
      expect(failing.failed()).toBe(1)
      const noted = (await readFile(file, 'utf8')).trim()
      expect(JSON.parse(noted)).toMatchObject({ base: null, paths: ['a.md'] })
      intents.clear()
      expect(failing.failed()).toBe(2)
    } finally {
      restore()
    }
    // Blanked: no record left to speak for a later open.
    expect((await readFile(file, 'utf8')).trim()).toBe('')
    expect(logger.entries).toEqual([])
  })
})
