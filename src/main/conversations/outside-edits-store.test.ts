/**
 * Another program's write to a conversation file racing Cairn's own save, and a file holding
 * the name of the folder copies are kept in, through the store on a temp folder
 * (review14-review R3, R4). The outside write is landed at a chosen moment of the save by
 * wrapping the atomic write: before it starts (after the store's first look), or after its
 * rename (before the store takes its stamp).
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { open, type FileHandle } from 'node:fs/promises'
import { nodeDisk, setDisk } from '../lib/disk'
import { createRecordingLogger } from '../lib/logger'
import { OWN_FILE_CAP } from '../lib/own-file-caps'

const hook: { before: null | (() => Promise<void>); after: null | (() => Promise<void>) } = {
  before: null,
  after: null,
}
vi.mock('../lib/atomic-json', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/atomic-json')>()
  return {
    ...real,
    writeJsonAtomic: async (...args: Parameters<typeof real.writeJsonAtomic>) => {
      const before = hook.before
      hook.before = null
      if (before) await before()
      await real.writeJsonAtomic(...args)
      const after = hook.after
      hook.after = null
      if (after) await after()
    },
  }
})
const { createConversationStore } = await import('./conversation-store')

let dataDir: string
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-outside-store-'))
})
afterEach(async () => {
  hook.before = null
  hook.after = null
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
})

const conversations = () => path.join(dataDir, 'conversations')

/** The files under conversations/ whose text holds `marker`. */
async function holding(marker: string): Promise<string[]> {
  const found: string[] = []
  for (const name of await readdir(conversations(), { recursive: true })) {
    const text = await readFile(path.join(conversations(), name), 'utf8').catch(() => '')
    if (text.includes(marker)) found.push(name)
  }
  return found.sort()
}

const userMessage = (text: string, createdAt: number) =>
  ({ role: 'user', content: [{ type: 'text', text }], createdAt }) as const

describe('an outside write racing Cairn’s save', () => {
  for (const when of ['before', 'after'] as const) {
    it(`keeps a valid outside edit landing ${when} the rename, and says so`, async () => {
      const store = createConversationStore({ dataDir, logger: createRecordingLogger() })
      const c = await store.create('hello')
      await store.update(c.id, (current) => ({
        ...current,
        messages: [userMessage('hello', 1)],
      }))
      const file = path.join(conversations(), `${c.id}.json`)
      hook[when] = async () => {
        const theirs = JSON.parse(await readFile(file, 'utf8'))
        theirs.messages.push({
          role: 'assistant',
          content: [{ type: 'text', text: 'OUTSIDE-EDIT' }],
          createdAt: 2,
        })
        await writeFile(file, JSON.stringify(theirs))
      }
      await store.rename(c.id, 'renamed in Cairn')
      await store.update(c.id, (current) => ({
        ...current,
        messages: [...current.messages, userMessage('next', 3)],
      }))
      expect(await holding('OUTSIDE-EDIT')).not.toEqual([])
      expect((await store.get(c.id)).changedOutside).toBeDefined()
      // Cairn's own save is not lost either.
      expect(await holding('renamed in Cairn')).toContain(`${c.id}.json`)
    })
  }

  it('records nothing when no other program wrote', async () => {
    const store = createConversationStore({ dataDir, logger: createRecordingLogger() })
    const c = await store.create('hello')
    await store.rename(c.id, 'renamed')
    await store.update(c.id, (current) => ({ ...current, messages: [userMessage('hi', 1)] }))
    expect((await store.get(c.id)).changedOutside).toBeUndefined()
    expect(await readdir(conversations())).toEqual([`${c.id}.json`])
  })
})

describe('a file named like the folder kept copies go in', () => {
  it('keeps the copy in cairn-replaced-2/ and never hides the conversation', async () => {
    const store = createConversationStore({ dataDir, logger: createRecordingLogger() })
    const c = await store.create('hello')
    const file = path.join(conversations(), `${c.id}.json`)
    const older = await readFile(file, 'utf8')
    await store.update(c.id, (current) => ({ ...current, messages: [userMessage('hello', 1)] }))
    await writeFile(path.join(conversations(), 'cairn-replaced'), 'a note of mine')
    await writeFile(file, older.replace('"hello"', '"hello (edited by hand)"'))

    const listed = await store.list()
    expect(listed.map((hit) => hit.conversation.id)).toEqual([c.id])
    const shown = await store.get(c.id)
    expect(shown.title).toBe('hello (edited by hand)')
    expect(shown.changedOutside).toMatchObject({
      how: 'taken-up',
      keptAs: `cairn-replaced-2/${c.id}.json`,
    })
    const updated = await store.update(c.id, (current) => ({
      ...current,
      messages: [...current.messages, userMessage('REPLY', 2)],
    }))
    expect(updated.messages).toHaveLength(1)
    expect(await readFile(path.join(conversations(), 'cairn-replaced'), 'utf8')).toBe(
      'a note of mine',
    )
    expect(await holding('"hello"')).toEqual([`cairn-replaced-2/${c.id}.json`])
  })
})

// rdisk30: the replaced file was read whole whatever its size (readFileSync on its descriptor,
// synchronous on the core's loop): a file made larger than any conversation as Cairn saved
// (a sparse one here) was read into memory at once. Past the cap it is not read.
describe('an outside write making the replaced file larger than any conversation', () => {
  it('is not read, and Cairn’s save stands', async () => {
    const logger = createRecordingLogger()
    const store = createConversationStore({ dataDir, logger })
    const c = await store.create('hello')
    const file = path.join(conversations(), `${c.id}.json`)
    // Another program opens the file before Cairn's rename and makes it larger after it.
    let theirs: FileHandle | undefined
    hook.before = async () => {
      theirs = await open(file, 'r+')
    }
    hook.after = async () => {
      await theirs!.truncate(OWN_FILE_CAP.CONVERSATION + 1)
      await theirs!.close()
    }
    const wholeReads: number[] = []
    const restore = setDisk({
      ...nodeDisk,
      readFileSync(at) {
        if (typeof at === 'number') {
          wholeReads.push(at)
          throw new Error('read whole')
        }
        return nodeDisk.readFileSync(at)
      },
    })
    try {
      await store.rename(c.id, 'renamed in Cairn')
    } finally {
      restore()
    }
    expect(wholeReads).toEqual([])
    expect((await store.get(c.id)).title).toBe('renamed in Cairn')
    expect(logger.entries.map((entry) => entry.message)).toContain(
      `Conversation ${c.id}'s replaced file was made larger than any conversation as Cairn saved it; not read`,
    )
  })
})
