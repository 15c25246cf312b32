import { randomBytes } from 'node:crypto'
import { readdirSync, statfsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createConversationStore } from '../conversations/conversation-store'
import { CairnError, toApiError } from '../lib/errors'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import {
  expectWholeOnReopen,
  folderFiles,
  gitCli,
  headFiles,
  leftoverTempFiles,
  mountSmallDisk,
  type SmallDisk,
  CLAUDE,
} from './test-helpers'

// An independent acceptance check of issue #9 (defects 3 and 10): full-disk-commands.test.ts
// meets each change with a disk that has no room at all, where it fails at its first write.
// Here a REAL tmpfs is filled leaving 0, 1, 2 … free blocks, so that the disk runs out at
// every step of a change in turn: the file's temp file, its loose objects, the object log, the
// ref, the side index, a restore's writes, a maintenance pass's pack, a conversation's save.
// After each: refused in plain words with everything as before, or made whole; once space is
// back, the next change commits at once and HEAD is the folder; at the end `git fsck --strict`
// is clean. Needs root with mount allowed (mounting throws otherwise, never skips).

let disk: SmallDisk | null = null
let dataDir = ''
/** The history the test has open, closed after it if the test stopped first. */
let opened: VersionedMemory | null = null
beforeEach(async () => {
  disk = await mountSmallDisk('4m')
  dataDir = path.join(disk.dir, 'data')
  await mkdir(dataDir)
})
afterEach(async () => {
  await opened?.close().catch(() => undefined)
  opened = null
  await disk?.unmount()
  disk = null
})

/** 16 KB of text zlib barely shrinks: its objects take about as many blocks as the file. */
const bulky = (tag: string) => `${tag}\n${randomBytes(12 * 1024).toString('base64')}\n`

/** Free blocks the sweep leaves, from none to past what the largest step needs. */
const SPARE = Array.from({ length: 24 }, (_, i) => i)

function expectPlain(message: string): void {
  expect(message).not.toContain(disk!.dir)
  expect(message).not.toMatch(/ENOSPC|tmp_obj|history\.git\/|\n\s+at /)
}

interface Outcome {
  readonly done: boolean
  readonly message: string
}

async function command(memory: VersionedMemory, input: Record<string, unknown>): Promise<Outcome> {
  const result = await memory.execute(input, CLAUDE)
  return { done: !result.isError, message: String(result.content) }
}

async function change(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    await run()
    return { done: true, message: '' }
  } catch (error) {
    expect(error).toBeInstanceOf(CairnError)
    return { done: false, message: (error as Error).message }
  }
}

interface Step {
  readonly name: string
  /** Made with room on the disk, before it fills: what the step then changes. */
  prepare(memory: VersionedMemory, round: number): Promise<unknown>
  run(memory: VersionedMemory, round: number): Promise<Outcome>
}

const KEEP = 'keep this line'

const STEPS: ReadonlyArray<Step> = [
  {
    name: 'a create with its commit',
    prepare: async () => undefined,
    run: (memory, round) =>
      command(memory, {
        command: 'create',
        path: `/memories/n/${round}.md`,
        file_text: bulky(`note ${round}`),
      }),
  },
  {
    name: 'a str_replace with its commit',
    prepare: (memory) => memory.restoreFile('/memories/big.md', firstCommit).catch(() => null),
    run: (memory, round) =>
      command(memory, {
        command: 'str_replace',
        path: '/memories/big.md',
        old_str: KEEP,
        new_str: `changed at ${round}`,
      }),
  },
  {
    name: 'a restore',
    prepare: (memory, round) =>
      memory.execute(
        { command: 'create', path: '/memories/big.md', file_text: bulky(`round ${round}`) },
        CLAUDE,
      ),
    run: (memory) => change(() => memory.restoreFile('/memories/big.md', firstCommit)),
  },
  {
    name: 'a maintenance pass',
    prepare: (memory, round) =>
      memory.execute(
        { command: 'create', path: `/memories/p/${round}.md`, file_text: bulky(`${round}`) },
        CLAUDE,
      ),
    // No window shows what a pass says: it may fail in any words, and must only leave the
    // folder and the history sound.
    run: (memory) =>
      memory.maintain({ mergeAll: true }).then(
        () => ({ done: true, message: '' }),
        () => ({ done: false, message: '' }),
      ),
  },
]

let firstCommit = ''

describe('a real disk running out at every step (issue #9, defects 3 and 10)', () => {
  it.each(STEPS.map((step) => [step.name, step] as const))(
    '%s: refused in plain words or made whole, committed once space is back',
    async (_name, step) => {
      const open = () =>
        openVersionedMemory({ dataDir, watch: false, logger: createRecordingLogger() })
      const memory = (opened = await open())
      // create, not a write over: a big.md a `prepare` wrote is made again each round.
      const seeded = await command(memory, {
        command: 'create',
        path: '/memories/big.md',
        file_text: bulky(KEEP),
      })
      expect(seeded.done, seeded.message).toBe(true)
      firstCommit = gitCli(dataDir, 'rev-parse', 'main').trim()
      const tally = { made: 0, diskFull: 0 }
      for (const spare of SPARE) {
        const what = `${step.name} with ${spare} free blocks`
        if (step.name === 'a restore')
          await command(memory, { command: 'delete', path: '/memories/big.md' })
        await step.prepare(memory, spare)
        const before = await folderFiles(dataDir)
        await disk!.fill(spare)
        const outcome = await step.run(memory, spare)
        if (outcome.done) tally.made++
        else {
          expectPlain(outcome.message)
          if (/disk is full/i.test(outcome.message)) tally.diskFull++
          expect(await folderFiles(dataDir), `${what}: refused, the folder as before`).toEqual(
            before,
          )
        }
        expect(leftoverTempFiles(path.join(dataDir, 'memories')), what).toEqual([])
        // Reads keep working on the full disk.
        const viewed = await command(memory, { command: 'view', path: '/memories' })
        expect(viewed.done, `${what}: ${viewed.message}`).toBe(true)
        expect(await memory.readAt('/memories/big.md', firstCommit), what).toMatch(/^keep this/)
        await disk!.free()
        // The sweep's own files never fill the disk: what follows runs with room to spare.
        const { bavail, bsize } = statfsSync(disk!.dir)
        expect(bavail * bsize, what).toBeGreaterThan(1024 ** 2)
        // Space back: the next change commits whatever the step owed, and its own, at once.
        const settle = await memory.execute(
          { command: 'create', path: `/memories/s/${spare}.md`, file_text: 's\n' },
          CLAUDE,
        )
        expect(settle.isError, `${what}: ${String(settle.content)}`).toBe(false)
        expect(settle.commitPending ?? false, what).toBe(false)
        expect(headFiles(dataDir), what).toEqual(await folderFiles(dataDir))
      }
      // The sweep crossed the line: refused as "the disk is full" at first, made later
      // (a pass may fail in any words).
      if (step.name !== 'a maintenance pass') expect(tally.diskFull).toBeGreaterThan(0)
      expect(tally.made).toBeGreaterThan(0)
      // A close on a nearly full disk, then an open.
      await disk!.fill(4)
      await memory.close().catch((error: unknown) => expectPlain((error as Error).message))
      opened = null
      await disk!.free()
      const atClose = await folderFiles(dataDir)
      expect(readdirSync(dataDir).filter((n) => n.startsWith('history.git.'))).toEqual([])
      await expectWholeOnReopen(dataDir, atClose, 2)
    },
    120_000,
  )

  it("of a conversation's save: refused as a full disk with the last version kept, or saved whole", async () => {
    const store = createConversationStore({ dataDir, logger: createRecordingLogger() })
    const conversation = await store.create('hello')
    let saved = await store.get(conversation.id)
    let refusals = 0
    let saves = 0
    for (const spare of SPARE) {
      const text = bulky(`message ${spare}`)
      await disk!.fill(spare)
      const outcome = await store
        .update(conversation.id, (current) => ({
          ...current,
          messages: [
            ...current.messages,
            { role: 'user', content: [{ type: 'text', text }], createdAt: spare },
          ],
        }))
        .then(
          () => null,
          (error: unknown) => error,
        )
      await disk!.free()
      const now = await store.get(conversation.id)
      if (outcome === null) {
        saves++
        expect(now.messages.length, `${spare} free blocks`).toBe(saved.messages.length + 1)
        expect(now.messages.at(-1)).toEqual({
          role: 'user',
          content: [{ type: 'text', text }],
          createdAt: spare,
        })
      } else {
        refusals++
        // What the window is told (the store's disk errors are put in words at the boundary).
        const told = toApiError(outcome)
        expect(told, `${spare} free blocks`).toMatchObject({ code: 'disk-full' })
        expect(told.message).toMatch(/disk is full/)
        expectPlain(told.message)
        expect(now, `${spare} free blocks: the last version kept`).toEqual(saved)
      }
      expect(leftoverTempFiles(path.join(dataDir, 'conversations')), `${spare}`).toEqual([])
      saved = now
    }
    expect(refusals).toBeGreaterThan(0)
    expect(saves).toBeGreaterThan(0)
    // A fresh store reads every message back.
    const again = createConversationStore({ dataDir, logger: createRecordingLogger() })
    expect(await again.get(conversation.id)).toEqual(saved)
  }, 120_000)
})
