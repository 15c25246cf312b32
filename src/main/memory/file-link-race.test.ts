import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory } from '../history'
import { nodeDisk, setDisk } from '../lib/disk'
import { hookDisk } from '../lib/disk-hooks'
import { createRecordingLogger } from '../lib/logger'
import { createMemoryTool } from './memory-tool'
import { treeHash } from '../../../test/stress/tree-hash'
import { makeOutside, OUTSIDE_MARK } from '../../../test/stress/symlink-flipper'
import type { MemoryExecution } from './types'

// Issue #3's acceptance check (probe30h): a memory *file* replaced by a symlink to a file
// outside, between the command's check and its use, just before each of its file-system calls
// in turn. Nothing outside may be read into a reply or a commit, or changed. (symlink-race.test.ts
// swaps a folder on the path the same way; acceptance.test.ts plants links before a command.)

let base: string
let root: string
let outside: string

beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-file-race-'))
  root = path.join(base, 'memories')
  outside = path.join(base, 'outside')
  fs.mkdirSync(root)
  makeOutside(outside)
})
afterEach(() => fs.rmSync(base, { recursive: true, force: true, maxRetries: 10 }))

function resetMemories(): void {
  for (const name of fs.readdirSync(root)) fs.rmSync(path.join(root, name), { recursive: true })
  fs.writeFileSync(path.join(root, 'f.md'), 'inside file\n')
  fs.writeFileSync(path.join(root, 'e.md'), 'e\n')
}

// The attacker's move: memories/f.md becomes a link to outside/f.md.
function swap(): void {
  const file = path.join(root, 'f.md')
  try {
    fs.renameSync(file, path.join(root, 'f-real.md'))
  } catch {
    // Already gone (the command deleted or renamed it): the link takes its name anyway.
  }
  fs.symlinkSync(path.join(outside, 'f.md'), file)
}

function text(result: MemoryExecution): string {
  return typeof result.content === 'string' ? result.content : JSON.stringify(result.content)
}

const COMMANDS: ReadonlyArray<Record<string, unknown>> = [
  { command: 'view', path: '/memories/f.md' },
  { command: 'view', path: '/memories/f.md', view_range: [1, -1] },
  { command: 'str_replace', path: '/memories/f.md', old_str: 'file', new_str: 'pwned' },
  { command: 'insert', path: '/memories/f.md', insert_line: 1, insert_text: 'pwned' },
  { command: 'create', path: '/memories/f.md', file_text: 'pwned\n' },
  { command: 'delete', path: '/memories/f.md' },
  { command: 'rename', old_path: '/memories/f.md', new_path: '/memories/g.md' },
  { command: 'rename', old_path: '/memories/e.md', new_path: '/memories/f.md' },
]

/**
 * Runs `run` once per file-system call it makes, swapping f.md for the link before call k.
 * Returns the escapes seen, and how many rounds were refused for meeting the link (a swap that
 * never mattered would prove nothing).
 */
async function raceEveryCall(
  run: () => Promise<string>,
): Promise<{ readonly escapes: string[]; readonly metLink: number }> {
  resetMemories()
  const counting = hookDisk(nodeDisk, () => undefined)
  let restore = setDisk(counting.disk)
  try {
    await run()
  } finally {
    restore()
  }
  const total = counting.calls()
  expect(total).toBeGreaterThan(3)
  const escapes: string[] = []
  let metLink = 0
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
    if (reply.includes('symbolic link')) metLink++
    if (reply.includes(OUTSIDE_MARK)) escapes.push(`call ${k}: outside text in ${reply}`)
    if (treeHash(outside) !== clean) {
      escapes.push(`call ${k}: the outside folder changed`)
      makeOutside(outside)
    }
    if (fs.readdirSync(root).some((name) => name.startsWith('.cairn-tmp-'))) {
      escapes.push(`call ${k}: a temp file was left`)
    }
  }
  return { escapes, metLink }
}

describe('a memory file swapped for a link to a file outside, before each call of a command', () => {
  it.each(COMMANDS.map((command) => [JSON.stringify(command), command] as const))(
    'never lets %s read or change the file outside',
    async (_name, command) => {
      const { escapes, metLink } = await raceEveryCall(async () => {
        const tool = createMemoryTool({ root, secretScanning: false })
        return text(await tool.execute(command))
      })
      expect(escapes).toEqual([])
      expect(metLink).toBeGreaterThan(0)
    },
  )

  it.each(
    COMMANDS.filter((command) => command.command !== 'view').map(
      (command) => [JSON.stringify(command), command] as const,
    ),
  )(
    'never lets %s through the history put outside text in a commit',
    async (_name, command) => {
      resetMemories()
      const memory = await openVersionedMemory({
        dataDir: base,
        watch: false,
        maintenance: false,
        policy: { secretScanning: false },
        logger: createRecordingLogger(),
      })
      try {
        const { escapes, metLink } = await raceEveryCall(async () => {
          const reply = await memory.execute(command, {
            actor: 'claude',
            conversationId: 'c',
            toolUseId: 'toolu_race',
          })
          const newest = (await memory.log({ offset: 0, limit: 1 })).entries[0]
          return (
            JSON.stringify(reply) + (newest ? JSON.stringify(await memory.show(newest.oid)) : '')
          )
        })
        expect(escapes).toEqual([])
        expect(metLink).toBeGreaterThan(0)
      } finally {
        await memory.close()
      }
    },
    120_000,
  )
})
