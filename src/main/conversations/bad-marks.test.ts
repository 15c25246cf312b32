/**
 * The marks beside a conversation's messages, `openTurn` (a turn under way, or cut off) and
 * `lastError` (why the last turn ended without a reply), are notes about its last turn, not
 * its content: one that is malformed (a hand edit, another program, a build that wrote it
 * otherwise) is ignored and said in the log, and the conversation reads. Real files in a temp
 * folder, the real store.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { createRecordingLogger, type RecordingLogger } from '../lib/logger'
import { readBackProblem } from './conversation-file'
import { createConversationStore } from './conversation-store'

let dataDir: string
let logger: RecordingLogger
const ID = 'c_marks'

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-bad-marks-'))
  await mkdir(path.join(dataDir, 'conversations'))
  logger = createRecordingLogger()
})
afterEach(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10 }))

const file = () => path.join(dataDir, 'conversations', `${ID}.json`)

/** A conversation whose last turn, `t_last`, has its prompt and no reply, with `marks`. */
function conversationWith(marks: Record<string, unknown>) {
  return {
    version: 1,
    id: ID,
    title: 'Plans',
    createdAt: 1,
    updatedAt: 2,
    messages: [
      {
        role: 'user',
        content: [{ type: 'text', text: 'Plan the trip' }],
        createdAt: 1,
        turnId: 't_last',
      },
    ],
    toolCommits: {},
    ...marks,
  }
}

it.each([
  ['openTurn', 7],
  ['openTurn', { turnId: 't_last' }],
  ['openTurn', 'x'.repeat(201)],
  ['lastError', { code: 7 }],
  ['lastError', 'the reply was empty'],
  ['lastError', { turnId: 't_last', code: 'empty-reply' }],
])(
  'ignores a malformed %s (%j), says so in the log, and reads the conversation',
  async (field, value) => {
    const raw = JSON.stringify(conversationWith({ [field]: value }))
    await writeFile(file(), raw)
    const store = createConversationStore({ dataDir, logger })
    const read = await store.get(ID)
    expect(read.messages.map((m) => m.role)).toEqual(['user'])
    expect(read.title).toBe('Plans')
    expect(read).not.toHaveProperty('openTurn')
    expect(read).not.toHaveProperty('lastError')
    // Said once in the log, naming the field, never the conversation's words.
    const said = logger.entries.filter((entry) => entry.message.includes(field))
    expect(said).toHaveLength(1)
    expect(said[0]!.message).toContain(ID)
    expect(JSON.stringify(logger.entries)).not.toContain('Plan the trip')
    const list = await store.list()
    expect(list.map((hit) => hit.conversation.unreadable)).toEqual([undefined])
    expect(logger.entries.filter((entry) => entry.message.includes(field))).toHaveLength(1)
    // The file is left as it was until the conversation is saved: then the mark is gone.
    expect(await readFile(file(), 'utf8')).toBe(raw)
    await store.rename(ID, 'Trip plans')
    const saved = JSON.parse(await readFile(file(), 'utf8')) as Record<string, unknown>
    expect(saved).not.toHaveProperty(field)
    expect(saved['title']).toBe('Trip plans')
  },
)

it('keeps a well-formed mark of the last turn, and never writes a malformed one', async () => {
  await writeFile(
    file(),
    JSON.stringify(
      conversationWith({
        openTurn: 't_last',
        lastError: { turnId: 't_last', code: 'empty-reply', message: 'Empty.' },
      }),
    ),
  )
  const read = await createConversationStore({ dataDir, logger }).get(ID)
  expect(read.openTurn).toBe('t_last')
  expect(read.lastError).toEqual({ turnId: 't_last', code: 'empty-reply', message: 'Empty.' })
  expect(logger.entries).toEqual([])
  // Cairn's own writes are checked by the reader's rules: a bad mark is a fault, never written.
  expect(readBackProblem(JSON.stringify(conversationWith({ openTurn: 7 })), ID)).toMatch(/openTurn/)
  expect(readBackProblem(JSON.stringify(conversationWith({ openTurn: 't_last' })), ID)).toBeNull()
})

it('says both marks when both are malformed, in one line of the log', async () => {
  const raw = JSON.stringify(conversationWith({ openTurn: 7, lastError: 'the reply was empty' }))
  await writeFile(file(), raw)
  const read = await createConversationStore({ dataDir, logger }).get(ID)
  expect(read.messages.map((m) => m.role)).toEqual(['user'])
  expect(read).not.toHaveProperty('openTurn')
  expect(read).not.toHaveProperty('lastError')
  // Each mark left out is named: the second was lost behind the first's once-only line.
  const said = logger.entries.filter((entry) => entry.message.includes('malformed mark'))
  expect(said).toHaveLength(1)
  expect(said[0]!.message).toContain('openTurn')
  expect(said[0]!.message).toContain('lastError')
})
