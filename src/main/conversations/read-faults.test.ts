import { truncateSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { createRecordingLogger } from '../lib/logger'
import { createConversationStore, DAMAGED_FOLDER } from './conversation-store'

// disk30: a conversation's file was read whole whatever its size (a sparse file of gigabytes:
// node refused it past 2 GiB, an error told as damage only by luck), and its read went past
// the disk seam, so a disk that fails it was never tried: it was told as a damaged file, with
// the advice to delete it. A real data folder.

let dataDir = ''
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-conversation-reads-'))
})
afterEach(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10 }))

const open = () =>
  createConversationStore({ dataDir, now: () => Date.now(), logger: createRecordingLogger() })
const fileOf = (id: string) => path.join(dataDir, 'conversations', `${id}.json`)

describe('a conversation file larger than any conversation', () => {
  it('is listed unreadable, never read, and kept aside whole on delete', async () => {
    const { id } = await open().create('hello')
    truncateSync(fileOf(id), 3 * 1024 * 1024 * 1024)
    const store = open()
    const listed = await store.list()
    expect(listed.map((hit) => hit.conversation)).toMatchObject([{ id, unreadable: true }])
    await expect(store.get(id)).rejects.toMatchObject({ code: 'conversation-corrupt' })
    await store.delete(id)
    expect(await readdir(path.join(dataDir, 'conversations', DAMAGED_FOLDER))).toEqual([
      `${id}.json`,
    ])
  })
})

describe('a disk that fails a conversation’s read', () => {
  it('is said as such, not as damage; the file stays; the next read works', async () => {
    const { id } = await open().create('hello')
    const text = await readFile(fileOf(id), 'utf8')
    const store = open()
    const restore = setDisk({
      ...nodeDisk,
      promises: {
        ...nodeDisk.promises,
        async read() {
          throw Object.assign(new Error('EIO: i/o error, read'), { code: 'EIO' })
        },
      },
    })
    let error: unknown
    try {
      error = await store.get(id).catch((e: unknown) => e)
    } finally {
      restore()
    }
    expect(error).toMatchObject({
      code: 'io-error',
      message:
        'Cairn could not read this conversation because the disk reported a read or write error. Nothing was changed.',
    })
    expect(await readFile(fileOf(id), 'utf8')).toBe(text)
    expect((await store.get(id)).title).toBe('hello')
    expect((await store.list()).map((hit) => hit.conversation.unreadable)).toEqual([undefined])
  })
})
