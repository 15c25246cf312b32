import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import { isDeepStrictEqual } from 'node:util'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openVersionedMemory } from './index'
import {
  commitCount,
  folderFiles,
  fsck,
  gitCli,
  headFolderDifferences,
  killPointsOf,
  leftoverTempFiles,
  runKilledAtCall,
} from './test-helpers'

// Issue #3's acceptance check (probe30h): a process killed with SIGKILL inside one of Claude's
// commands, at each call that changes the disk (a temp file made, written, flushed, renamed,
// linked, a folder made or removed, the ref moved), never leaves half a change: after the next
// open the folder is whole (exactly as before the command, or exactly as after it), HEAD holds
// exactly the folder, no temp file is left, `git fsck --strict` is clean, and the change, when
// it landed, is Claude's commit with its tool_use id, never Cairn's start-up recovery. The kill
// is made deterministic by the disk seam: the child kills itself just before its n-th call.
// (command-kill.test.ts kills two commands at one point each, crash.test.ts at random moments.)

const SEED: ReadonlyArray<readonly [string, string]> = [
  ['a.md', 'one\ntwo\nthree\n'],
  ['d/x.md', 'x\n'],
  ['d/y/z.md', 'z\n'],
]

const STRESS = process.env.CAIRN_STRESS !== undefined

// Each a child process per kill point: the ones that differ most in what they do to the folder
// (a new folder, an edit, a folder removed, a file moved into a new folder, a folder moved);
// under CAIRN_STRESS also an overwrite, an insert and a file delete.
const COMMANDS: ReadonlyArray<Record<string, unknown>> = [
  { command: 'create', path: '/memories/new/n.md', file_text: 'new\n' },
  { command: 'str_replace', path: '/memories/a.md', old_str: 'two', new_str: 'TWO' },
  { command: 'delete', path: '/memories/d' },
  { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/e/a.md' },
  { command: 'rename', old_path: '/memories/d', new_path: '/memories/d2' },
  ...(STRESS
    ? [
        { command: 'create', path: '/memories/a.md', file_text: 'replaced\n' },
        { command: 'insert', path: '/memories/a.md', insert_line: 1, insert_text: 'ins\n' },
        { command: 'delete', path: '/memories/a.md' },
      ]
    : []),
]

const ORIGIN = { actor: 'claude' as const, conversationId: 'c_seed', toolUseId: 'toolu_seed' }

let work: string
let template: string

beforeAll(async () => {
  work = mkdtempSync(path.join(os.tmpdir(), 'cairn-kill-each-'))
  template = path.join(work, 'template')
  const memory = await openVersionedMemory({ dataDir: template, watch: false, maintenance: false })
  for (const [file, text] of SEED) {
    await memory.execute({ command: 'create', path: `/memories/${file}`, file_text: text }, ORIGIN)
  }
  await memory.close()
})
afterAll(() => rmSync(work, { recursive: true, force: true, maxRetries: 10 }))

let copies = 0
function freshCopy(): string {
  const dataDir = path.join(work, `copy-${copies++}`)
  cpSync(template, dataDir, { recursive: true })
  return dataDir
}

/**
 * Runs `command` on a fresh copy in this process: the folder after it, and the calls it made
 * (numbered from the command's start), so each changing one can be a kill point.
 */
async function dryRun(command: Record<string, unknown>): Promise<{
  readonly after: Map<string, string>
  readonly killPoints: number[]
}> {
  const dataDir = freshCopy()
  const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  // Every changing call under CAIRN_STRESS (about 90 children, minutes); else the first and
  // the last, and each call that moves a name in the memory folder.
  const killPoints = await killPointsOf(async () => {
    const result = await memory.execute(command, { ...ORIGIN, toolUseId: 'toolu_dry' })
    expect(result.isError, String(result.content)).toBe(false)
    expect(result.commit).not.toBeNull()
  }, STRESS)
  await memory.close()
  return { after: await folderFiles(dataDir), killPoints }
}

/** Opens a copy in a child, runs `command` there and kills the child just before call `n`. */
async function killAt(dataDir: string, command: Record<string, unknown>, n: number) {
  await runKilledAtCall(
    dataDir,
    n,
    `await memory.execute(${JSON.stringify(command)}, { actor: 'claude', conversationId: 'c_kill', toolUseId: 'toolu_killed' })`,
  )
}

describe('SIGKILL just before each disk-changing call of a memory command', () => {
  it.each(COMMANDS.map((command) => [JSON.stringify(command), command] as const))(
    'leaves %s whole: before or after, committed as Claude, fsck clean',
    async (_name, command) => {
      const before = await folderFiles(template)
      const commitsBefore = commitCount(template)
      const { after, killPoints } = await dryRun(command)
      expect(after).not.toEqual(before)
      expect(killPoints.length).toBeGreaterThanOrEqual(3)
      const states = { before: 0, after: 0 }
      for (const n of killPoints) {
        const dataDir = freshCopy()
        await killAt(dataDir, command, n)
        const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
        await memory.close()
        const folder = await folderFiles(dataDir)
        const where = `killed before call ${n}`
        // Not `toContainEqual`: it takes any Map for equal to any other, so it held whatever
        // the folder was.
        const landed = isDeepStrictEqual(folder, after)
        expect(landed || isDeepStrictEqual(folder, before), `${where}: ${[...folder]}`).toBe(true)
        expect(await headFolderDifferences(dataDir), where).toEqual([])
        expect(leftoverTempFiles(dataDir), where).toEqual([])
        fsck(dataDir)
        states[landed ? 'after' : 'before']++
        expect(commitCount(dataDir), where).toBe(commitsBefore + (landed ? 1 : 0))
        if (landed) {
          const last = gitCli(
            dataDir,
            'log',
            '-1',
            '--format=%an|%(trailers:key=Command,valueonly,separator=)|%(trailers:key=Tool-Use-Id,valueonly,separator=)',
          ).trim()
          expect(last, where).toBe(`Claude|${String(command.command)}|toolu_killed`)
        }
        rmSync(dataDir, { recursive: true, force: true, maxRetries: 10 })
      }
      // Both ends are reached: the early kills leave the old folder, the late ones the new.
      expect(states.before).toBeGreaterThan(0)
      expect(states.after).toBeGreaterThan(0)
    },
    600_000,
  )
})
