import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory } from '../history'
import { memoryBrowserHandlers } from '../memory-browser'
import { nodeDisk, setDisk } from '../lib/disk'
import { createRecordingLogger } from '../lib/logger'
import { hookDisk } from '../lib/disk-hooks'
import { nameEntriesByHandle } from '../lib/folders'
import { createMemoryTool } from './memory-tool'
import { addTotals, size } from '../../../test/stress/stress'
import { treeHash } from '../../../test/stress/tree-hash'
import { makeOutside, OUTSIDE_MARK, raceConcurrently } from '../../../test/stress/symlink-flipper'
import type { MemoryExecution } from './types'

// Defect 4 of issue #9: a local process that swapped a folder inside memories/ for a symlink
// while a command ran made `view` read a file outside and `delete` remove a folder outside.
// Here the swap happens deterministically, just before the k-th file-system call of a command,
// for every k: whatever the command does next must stay inside (or refuse).

const MARK = OUTSIDE_MARK

let base: string
let root: string
let outside: string

beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-race-'))
  root = path.join(base, 'memories')
  outside = path.join(base, 'outside')
  fs.mkdirSync(root)
  makeOutside(outside)
})
afterEach(() => fs.rmSync(base, { recursive: true, force: true, maxRetries: 10 }))

/** The memory folder as each round starts: d/ is a real folder with a file and a subfolder. */
function resetMemories(): void {
  fs.rmSync(root, { recursive: true, force: true, maxRetries: 10 })
  fs.mkdirSync(path.join(root, 'd', 'sub'), { recursive: true })
  fs.writeFileSync(path.join(root, 'd', 'f.md'), 'inside\n')
  fs.writeFileSync(path.join(root, 'd', 'sub', 'x.md'), 'inside too\n')
  fs.writeFileSync(path.join(root, 'e.md'), 'e\n')
}

// The attacker's move: memories/d becomes a symlink to the outside folder.
function swap(): void {
  fs.renameSync(path.join(root, 'd'), path.join(root, 'd-real'))
  fs.symlinkSync(outside, path.join(root, 'd'))
}

function text(result: MemoryExecution): string {
  return typeof result.content === 'string' ? result.content : JSON.stringify(result.content)
}

const COMMANDS: ReadonlyArray<Record<string, unknown>> = [
  { command: 'view', path: '/memories/d/f.md' },
  { command: 'view', path: '/memories/d' },
  { command: 'str_replace', path: '/memories/d/f.md', old_str: 'file', new_str: 'pwned' },
  { command: 'insert', path: '/memories/d/f.md', insert_line: 0, insert_text: 'pwned' },
  { command: 'create', path: '/memories/d/f.md', file_text: 'pwned\n' },
  { command: 'create', path: '/memories/d/new/deep.md', file_text: 'pwned\n' },
  { command: 'delete', path: '/memories/d/sub' },
  { command: 'delete', path: '/memories/d/f.md' },
  { command: 'rename', old_path: '/memories/d/f.md', new_path: '/memories/g.md' },
  { command: 'rename', old_path: '/memories/e.md', new_path: '/memories/d/e.md' },
  { command: 'rename', old_path: '/memories/d/sub', new_path: '/memories/moved' },
]

/**
 * Runs `command` once per file-system call it makes, swapping d/ for the link just before
 * call k. Returns the escapes seen: reads that returned outside text, and changes outside.
 */
async function raceEveryCall(
  run: () => Promise<string>,
): Promise<{ readonly rounds: number; readonly escapes: string[] }> {
  resetMemories()
  const counting = hookDisk(nodeDisk, () => undefined)
  let restore = setDisk(counting.disk)
  try {
    await run()
  } finally {
    restore()
  }
  const total = counting.calls()
  const escapes: string[] = []
  const clean = treeHash(outside)
  for (let k = 1; k <= total + 1; k++) {
    resetMemories()
    const racing = hookDisk(nodeDisk, (call) => {
      if (call.n === k) swap()
    })
    restore = setDisk(racing.disk)
    let reply: string
    try {
      reply = await run()
    } finally {
      restore()
    }
    if (reply.includes(MARK)) escapes.push(`call ${k}: the reply holds outside text`)
    if (treeHash(outside) !== clean) {
      escapes.push(`call ${k}: the outside folder changed`)
      makeOutside(outside)
    }
  }
  return { rounds: total + 1, escapes }
}

describe('a folder swapped for a symlink at any moment of a command (defect 4)', () => {
  it.each(COMMANDS.map((command) => [JSON.stringify(command), command] as const))(
    'never lets %s reach outside',
    async (_name, command) => {
      const { rounds, escapes } = await raceEveryCall(async () => {
        const tool = createMemoryTool({ root, secretScanning: false })
        return text(await tool.execute(command))
      })
      expect(rounds).toBeGreaterThan(3)
      expect(escapes).toEqual([])
    },
  )

  // Review mode shows a dry run's plan (with the file's text before and after) to the person:
  // it must be held to the same handles as the real command.
  it.each(COMMANDS.map((command) => [JSON.stringify(command), command] as const))(
    'never lets a dry run (preview) of %s read or change anything outside',
    async (_name, command) => {
      const { rounds, escapes } = await raceEveryCall(async () => {
        const tool = createMemoryTool({ root, secretScanning: false })
        const dry = await tool.preview(command)
        return text(dry) + JSON.stringify(dry.planned ?? null)
      })
      expect(rounds).toBeGreaterThan(3)
      expect(escapes).toEqual([])
    },
  )

  // Through the history, the check of what a command touches, the command and its commit go
  // through the same open folders: a swap between any two of their steps must find them
  // pinned (or refused), never followed.
  it.each(
    COMMANDS.filter((command) => command.command !== 'view').map(
      (command) => [JSON.stringify(command), command] as const,
    ),
  )(
    'never lets %s through the history (check, command, commit) reach outside',
    async (_, command) => {
      resetMemories()
      const memory = await openVersionedMemory({
        dataDir: base,
        watch: false,
        maintenance: false,
        policy: { secretScanning: false },
        logger: createRecordingLogger(),
      })
      try {
        const { rounds, escapes } = await raceEveryCall(async () => {
          const reply = await memory.execute(command, { actor: 'user' })
          const newest = (await memory.log({ offset: 0, limit: 1 })).entries[0]
          return (
            JSON.stringify(reply) + (newest ? JSON.stringify(await memory.show(newest.oid)) : '')
          )
        })
        expect(rounds).toBeGreaterThan(10)
        expect(escapes).toEqual([])
      } finally {
        await memory.close()
      }
    },
  )

  it('a swap between the check and the command: written through the folder checked, never outside', async () => {
    resetMemories()
    const memory = await openVersionedMemory({
      dataDir: base,
      watch: false,
      maintenance: false,
      logger: createRecordingLogger(),
    })
    const clean = treeHash(outside)
    // The check's last call is its `lstat` of d/f.md; the command's first is the open that
    // reads it: d/ becomes a link to the outside folder in between.
    let swapped = false
    const racing = hookDisk(nodeDisk, (call) => {
      const [target, flags] = call.args as [unknown, unknown]
      if (
        !swapped &&
        call.name === 'openSync' &&
        typeof target === 'string' &&
        target.endsWith('/f.md') &&
        typeof flags === 'number' &&
        (flags & fs.constants.O_CREAT) === 0
      ) {
        swapped = true
        swap()
      }
    })
    const restore = setDisk(racing.disk)
    let reply: { readonly content: MemoryExecution['content']; readonly isError: boolean }
    try {
      reply = await memory.execute(
        { command: 'str_replace', path: '/memories/d/f.md', old_str: 'inside', new_str: 'edited' },
        { actor: 'user' },
      )
    } finally {
      restore()
      await memory.close()
    }
    expect(swapped).toBe(true)
    // The folder the check opened is the one the command edits (renamed, still inside); the
    // link swapped in is never followed.
    expect(reply.isError).toBe(false)
    expect(JSON.stringify(reply.content)).not.toContain(MARK)
    expect(treeHash(outside)).toBe(clean)
    expect(fs.readFileSync(path.join(root, 'd-real', 'f.md'), 'utf8')).toBe('edited\n')
    expect(fs.lstatSync(path.join(root, 'd')).isSymbolicLink()).toBe(true)
  })

  it('never lets the history scan or the browser reach outside', async () => {
    resetMemories()
    const memory = await openVersionedMemory({
      dataDir: base,
      watch: false,
      logger: createRecordingLogger(),
    })
    try {
      const browser = memoryBrowserHandlers(memory)
      const runs: ReadonlyArray<() => Promise<string>> = [
        async () =>
          JSON.stringify(
            await memory.execute(
              { command: 'create', path: '/memories/d/n.md', file_text: 'n' },
              { actor: 'user' },
            ),
          ),
        async () =>
          JSON.stringify(
            await Promise.resolve(browser['memory:read']({ path: '/memories/d/f.md' })).catch(
              String,
            ),
          ),
        async () => JSON.stringify(await browser['memory:search']({ query: 'sentinel' })),
        async () => JSON.stringify(await browser['memory:tree'](undefined)),
      ]
      for (const work of runs) {
        const { escapes } = await raceEveryCall(async () => {
          const reply = await work()
          // Whatever a scan read went into history: it must not be outside text either.
          const newest = (await memory.log({ offset: 0, limit: 1 })).entries[0]
          return reply + (newest ? JSON.stringify(await memory.show(newest.oid)) : '')
        })
        expect(escapes).toEqual([])
      }
    } finally {
      await memory.close()
    }
  })

  it('is caught by this test where entries are named by path (the check-then-use gap)', async () => {
    // On platforms without handle naming the gap narrows but stays: the test sees it.
    const restore = nameEntriesByHandle(false)
    try {
      const { escapes } = await raceEveryCall(async () => {
        const tool = createMemoryTool({ root, secretScanning: false })
        return text(await tool.execute({ command: 'view', path: '/memories/d/f.md' }))
      })
      expect(escapes.length).toBeGreaterThan(0)
    } finally {
      restore()
    }
  })
})

describe('a real race: a thread swapping the folder while commands run (defect 4)', () => {
  it('has zero escapes for as long as it runs', async () => {
    fs.mkdirSync(path.join(root, 'd'), { recursive: true })
    const tool = createMemoryTool({ root, secretScanning: false })
    const result = await raceConcurrently({
      root,
      outside: path.join(base, 'outside-raced'),
      durationMs: size(1_000, 15_000),
      execute: (input) => tool.execute(input),
    })
    addTotals('symlink race', {
      rounds: result.swaps,
      generatedCommands: result.tries,
      escapes: result.escapes.length,
    })
    expect(result.tries).toBeGreaterThan(50)
    expect(result.swaps).toBeGreaterThan(0)
    expect(result.escapes).toEqual([])
  }, 60_000)
})
