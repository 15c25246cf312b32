import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory } from './index'
import { fsck, gitCli, headMatchesFolder, runKilledChild, tempDataDir } from './test-helpers'

// hunt13-tool D1: a kill -9 during one of Claude's memory commands often left its change to
// the next open, which committed it as Cairn's "Save changes found at start-up" (no
// conversation, no tool_use id; the conversation's tool card without its commit). The command's
// intent is now kept on disk while it runs, and the open commits its change as Claude's.

let dataDir: string
let cleanup: () => Promise<void>
beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

const INDEX = JSON.stringify(path.resolve('src/main/history/index.ts'))
const DISK = JSON.stringify(path.resolve('src/main/lib/disk.ts'))
const HOOKS = JSON.stringify(path.resolve('src/main/lib/disk-hooks.ts'))

/** Claude's commands, in a loop: new folders, folder deletes, creates, renames into folders. */
const LOOP = `
  let i = 0
  for (;;) {
    i++
    const origin = { actor: 'claude', conversationId: 'c_kill', toolUseId: 'toolu_' + process.pid + '_' + i }
    const k = i % 4
    if (k === 0) await memory.execute({ command: 'create', path: '/memories/d' + i + '/f.md', file_text: 'v' + i + '\\n' }, origin)
    else if (k === 1) await memory.execute({ command: 'delete', path: '/memories/d' + (i - 1) }, origin)
    else if (k === 2) await memory.execute({ command: 'create', path: '/memories/r' + i + '.md', file_text: 'r' + i + '\\n' }, origin)
    else await memory.execute({ command: 'rename', old_path: '/memories/r' + (i - 1) + '.md', new_path: '/memories/s/r' + i + '.md' }, origin)
    if (i === 1) process.stdout.write('ack\\n')
  }
`

/** Runs `body` in a child that has the memory open; resolves once it died of SIGKILL. */
async function child(body: string, killAfterAckMs?: number): Promise<void> {
  const script = `
    const { openVersionedMemory } = await import(${INDEX})
    const { nodeDisk, setDisk } = await import(${DISK})
    const { hookDisk } = await import(${HOOKS})
    void nodeDisk; void setDisk; void hookDisk
    const memory = await openVersionedMemory({ dataDir: ${JSON.stringify(dataDir)}, watch: false, maintenance: false })
    ${body}
  `
  await runKilledChild(script, killAfterAckMs)
}

/** Opens and closes the memory (the open saves what the kill left), then checks the history. */
async function reopenAndCheck(): Promise<void> {
  const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  await memory.close()
  expect(await headMatchesFolder(dataDir)).toBe(true)
  fsck(dataDir)
}

/** Commits by Cairn itself other than the first (the history's start). */
function systemCommits(): string[] {
  return gitCli(dataDir, 'log', '--format=%s|%an|%(trailers:key=Command,valueonly,separator=)')
    .trim()
    .split('\n')
    .filter((line) => line.includes('|Cairn|') && !line.endsWith('|init'))
}

/** Every commit that carries a Tool-Use-Id, with the paths it changed. */
function claudeCommits(): Map<string, string> {
  const log = gitCli(
    dataDir,
    'log',
    '--format=@%(trailers:key=Tool-Use-Id,valueonly,separator=)',
    '--name-status',
  )
  const commits = new Map<string, string>()
  for (const block of log.split('@').slice(1)) {
    const [id = '', ...changes] = block.trim().split('\n')
    if (id !== '') commits.set(id.trim(), changes.join(' '))
  }
  return commits
}

describe('a kill during a memory command (hunt13-tool D1)', () => {
  it.each([
    [
      'rename',
      `{ command: 'rename', old_path: '/memories/keep.md', new_path: '/memories/moved/keep.md' }`,
      'keep.md',
      'R100\tkeep.md\tmoved/keep.md',
    ],
    ['delete', `{ command: 'delete', path: '/memories/folder' }`, 'folder', 'D\tfolder/x.md'],
  ])(
    'commits a %s killed right after it changed the folder as its own',
    async (_name, command, renamedTo, change) => {
      const seed = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
      const origin = { actor: 'claude' as const, conversationId: 'c', toolUseId: 'toolu_seed' }
      await seed.execute(
        { command: 'create', path: '/memories/keep.md', file_text: 'one\n' },
        origin,
      )
      await seed.execute(
        { command: 'create', path: '/memories/folder/x.md', file_text: 'x\n' },
        origin,
      )
      await seed.close()
      // Killed at the first file-system call after the rename that moves the file or folder
      // (folders are reached through their handles: names are matched at the end), before the
      // folders' fsync and the commit.
      await child(`
        let moved = false
        setDisk(hookDisk(nodeDisk, (call) => {
          if (moved) process.kill(process.pid, 'SIGKILL')
          if (call.name === 'renameSync' && String(call.args[0]).endsWith(${JSON.stringify(renamedTo)})) moved = true
          if (call.name === 'renameSync' && String(call.args[1]).endsWith(${JSON.stringify(renamedTo)})) moved = true
        }).disk)
        await memory.execute(${command}, { actor: 'claude', conversationId: 'c_kill', toolUseId: 'toolu_killed' })
        process.stdout.write('finished\\n')
      `)
      await reopenAndCheck()
      expect(systemCommits()).toEqual([])
      const last = gitCli(
        dataDir,
        'log',
        '-1',
        '-M',
        '--format=%an|%(trailers:key=Conversation-Id,valueonly,separator=)|%(trailers:key=Tool-Use-Id,valueonly,separator=)',
        '--name-status',
      )
      expect(last).toContain('|c_kill|toolu_killed')
      expect(last).toContain(change)
    },
    60_000,
  )

  it('after many random kills, no command of Claude is saved as a start-up recovery', async () => {
    const rounds = process.env.CAIRN_STRESS ? 30 : 8
    for (let round = 0; round < rounds; round++) {
      await child(LOOP, 100 + Math.random() * 900)
      await reopenAndCheck()
    }
    expect(systemCommits()).toEqual([])
    // Every change in the history is one of Claude's commands.
    expect(claudeCommits().size).toBeGreaterThan(rounds)
  }, 600_000)
})
