import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { CommitSummary } from '../../shared/types'
import { createRecordingLogger, type RecordingLogger } from '../lib/logger'
import { openVersionedMemory, type Origin, type VersionedMemory } from './index'
import {
  breakMainRef,
  commitCount,
  folderFiles,
  fsck,
  gitCli,
  headFiles,
  leaveStaleLock,
  tempDataDir,
  userWrite,
} from './test-helpers'

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory
let logger: RecordingLogger
let clock = 1_700_000_000_000
const now = () => (clock += 1000)
const claude = (toolUseId = 'toolu_1'): Origin => ({
  actor: 'claude',
  conversationId: 'conv-1',
  toolUseId,
})

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  logger = createRecordingLogger()
  memory = await openVersionedMemory({ dataDir, now, watch: false, logger })
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})

async function expectInSync(): Promise<void> {
  expect(headFiles(dataDir)).toEqual(await folderFiles(dataDir))
  fsck(dataDir)
}

const create = (file: string, text: string) => ({ command: 'create', path: file, file_text: text })

describe('executing Memory tool commands', () => {
  it('commits a successful create as Claude, with the facts in trailers', async () => {
    const outcome = await memory.execute(create('/memories/notes.md', 'hello\n'), claude())
    expect(outcome.isError).toBe(false)
    expect(outcome.commit).toMatchObject({
      actor: 'claude',
      command: 'create',
      subject: 'create /memories/notes.md',
      paths: ['/memories/notes.md'],
      conversationId: 'conv-1',
      toolUseId: 'toolu_1',
      overwrite: false,
    })
    expect(gitCli(dataDir, 'log', '-1', '--format=%an|%s').trim()).toBe(
      'Claude|create /memories/notes.md',
    )
    expect(gitCli(dataDir, 'log', '-1', '--format=%(trailers)').trim()).toBe(
      'Command: create\nPath: /memories/notes.md\nConversation-Id: conv-1\nTool-Use-Id: toolu_1',
    )
    await expectInSync()
  })

  it('flags an overwriting create and makes no commit for an identical one', async () => {
    await memory.execute(create('/memories/a.md', 'one'), claude())
    const replaced = await memory.execute(create('/memories/a.md', 'two'), claude('toolu_2'))
    expect(replaced.commit?.overwrite).toBe(true)
    expect(
      gitCli(dataDir, 'log', '-1', '--format=%(trailers:key=Overwrite,valueonly)').trim(),
    ).toBe('true')
    const same = await memory.execute(create('/memories/a.md', 'two'), claude('toolu_3'))
    expect(same.isError).toBe(false)
    expect(same.commit).toBeNull()
    expect(commitCount(dataDir)).toBe(2)
  })

  it('commits nothing for a failed command and leaves the folder untouched', async () => {
    await memory.execute(create('/memories/a.md', 'x x'), claude())
    const before = await folderFiles(dataDir)
    const failures = [
      { command: 'str_replace', path: '/memories/a.md', old_str: 'x', new_str: 'y' },
      { command: 'str_replace', path: '/memories/missing.md', old_str: 'x', new_str: 'y' },
      { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/a.md' },
      { command: 'delete', path: '/memories/../etc' },
      { command: 'explode' },
    ]
    for (const input of failures) {
      const outcome = await memory.execute(input, claude())
      expect(outcome).toMatchObject({ isError: true, mutation: null, commit: null })
    }
    expect(await folderFiles(dataDir)).toEqual(before)
    expect(commitCount(dataDir)).toBe(1)
  })

  it('makes no commit for view', async () => {
    const outcome = await memory.execute({ command: 'view', path: '/memories' }, claude())
    expect(outcome.isError).toBe(false)
    expect(outcome.commit).toBeNull()
    expect(commitCount(dataDir)).toBe(0)
  })

  it('names renames with both paths', async () => {
    await memory.execute(create('/memories/a.md', 'a'), claude())
    const outcome = await memory.execute(
      { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/dir/b.md' },
      claude(),
    )
    expect(outcome.commit?.subject).toBe('rename /memories/a.md -> /memories/dir/b.md')
    expect(outcome.commit?.paths).toEqual(['/memories/a.md', '/memories/dir/b.md'])
    await expectInSync()
  })

  it('runs 100 concurrent commands as a linear history, one commit per change', async () => {
    await memory.execute(create('/memories/counter.md', 'n'), claude())
    const calls = Array.from({ length: 100 }, (_, i) =>
      i % 10 === 9
        ? memory.execute(
            { command: 'str_replace', path: '/memories/none.md', old_str: 'a', new_str: 'b' },
            claude(),
          )
        : memory.execute(
            {
              command: 'insert',
              path: '/memories/counter.md',
              insert_line: 0,
              insert_text: `line ${i}`,
            },
            claude(`toolu_${i}`),
          ),
    )
    const outcomes = await Promise.all(calls)
    const committed = outcomes.filter((outcome) => outcome.commit)
    expect(committed).toHaveLength(90)
    expect(commitCount(dataDir)).toBe(91)
    expect(gitCli(dataDir, 'rev-list', '--merges', '--count', 'main').trim()).toBe('0')
    const lines = (await folderFiles(dataDir)).get('counter.md')?.split('\n') ?? []
    expect(lines).toHaveLength(91)
    for (let i = 1; i < committed.length; i++) {
      expect(committed[i]?.commit?.parent).toBe(committed[i - 1]?.commit?.oid)
    }
    await expectInSync()
  })
})

describe('history through the public API', () => {
  it('logs, filters, reads back, restores and announces each commit', async () => {
    const seen: CommitSummary[] = []
    const stop = memory.onCommit((commit) => seen.push(commit))
    const first = await memory.execute(create('/memories/n.md', 'v1'), claude('t1'))
    await memory.execute(create('/memories/n.md', 'v2'), {
      actor: 'claude',
      conversationId: 'conv-2',
      toolUseId: 't2',
    })
    const v1 = first.commit?.oid as string
    expect(await memory.readAt('/memories/n.md', v1)).toBe(gitCli(dataDir, 'show', `${v1}:n.md`))
    expect((await memory.log({ offset: 0, limit: 10, conversationId: 'conv-2' })).total).toBe(1)
    expect((await memory.fileHistory('/memories/n.md')).map((c) => c.oid)).toEqual(
      seen.map((c) => c.oid).reverse(),
    )
    const restored = await memory.restoreFile('/memories/n.md', v1)
    expect(seen.at(-1)).toEqual(restored.commit)
    stop()
    await userWrite(memory, '/memories/other.md', 'x')
    expect(seen).toHaveLength(3)
    const page = await memory.log({ offset: 0, limit: 50 })
    expect(page.total).toBe(4)
    expect(page.entries[1]?.command).toBe('restore-file')
    await expectInSync()
  })

  it('waits for queued work on close and refuses work afterwards', async () => {
    const pending = memory.execute(create('/memories/late.md', 'late'), claude())
    await memory.close()
    expect((await pending).commit).not.toBeNull()
    // Claude is told, as a tool error: execute never rejects.
    expect(await memory.execute(create('/memories/x.md', 'x'), claude())).toMatchObject({
      isError: true,
      content: 'Error: The memory folder is closed.',
      commit: null,
    })
  })

  it('commits a change whose commit failed before the next change, with its own author and trailers', async () => {
    await userWrite(memory, '/memories/a.md', 'a')
    const repair = await breakMainRef(dataDir)
    const outcome = await memory.execute(create('/memories/b.md', 'b'), claude())
    // The file was written, so Claude is told so; only the commit is pending (and logged).
    expect(outcome).toMatchObject({ isError: false, commit: null, commitPending: true })
    expect(logger.entries).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: 'A commit failed; it is retried before the next change',
      }),
    ])
    expect(await readFile(path.join(dataDir, 'memories', 'b.md'), 'utf8')).toBe('b')
    // While history cannot be written, the next change is refused before it touches the folder.
    await expect(userWrite(memory, '/memories/b2.md', 'b2')).rejects.toThrow()
    expect(existsSync(path.join(dataDir, 'memories', 'b2.md'))).toBe(false)
    await repair()
    const next = await userWrite(memory, '/memories/c.md', 'c')
    const log = await memory.log({ offset: 0, limit: 10 })
    expect(log.entries.map((entry) => [entry.actor, entry.command, entry.paths])).toEqual([
      ['user', 'create', ['/memories/c.md']],
      ['claude', 'create', ['/memories/b.md']],
      ['user', 'create', ['/memories/a.md']],
    ])
    expect(log.entries[1]).toMatchObject({ conversationId: 'conv-1', toolUseId: 'toolu_1' })
    expect(next.commit?.parent).toBe(log.entries[1]?.oid)
    await expectInSync()
  })

  it('restores without deleting or recording anything through a folder replaced by a symlink', async () => {
    const first = await userWrite(memory, '/memories/a.md', 'a')
    await userWrite(memory, '/memories/d/x.md', 'x')
    const outside = await mkdtemp(path.join(os.tmpdir(), 'cairn-outside-'))
    try {
      await writeFile(path.join(outside, 'x.md'), 'not a memory')
      await rm(path.join(dataDir, 'memories', 'd'), { recursive: true })
      await symlink(outside, path.join(dataDir, 'memories', 'd'), 'dir')
      const restored = await memory.restoreAll(first.commit!.oid)
      // The folder lost d/x.md before the restore ran: that is saved as an outside change,
      // after which the folder already matches the version.
      expect(restored.commit).toBeNull()
      const latest = (await memory.log({ offset: 0, limit: 1 })).entries[0]
      expect(latest).toMatchObject({ actor: 'system', paths: ['/memories/d/x.md'] })
      expect(await readFile(path.join(outside, 'x.md'), 'utf8')).toBe('not a memory')
      expect([...headFiles(dataDir).keys()]).toEqual(['a.md'])
      fsck(dataDir)
    } finally {
      await rm(outside, { recursive: true, force: true, maxRetries: 10 })
    }
  })

  it('reports and repairs on the next open what a crash left behind', async () => {
    await userWrite(memory, '/memories/a.md', 'a')
    await memory.close()
    await writeFile(path.join(dataDir, 'memories', 'a.md'), 'written, never committed')
    // The Cairn that wrote it was killed: its lock is still there.
    leaveStaleLock(dataDir)
    memory = await openVersionedMemory({ dataDir, now })
    expect(memory.recovery?.kind).toBe('uncommitted-changes')
    await expectInSync()
  })
})

describe('names and text that begin with a byte order mark', () => {
  it('are committed and read back as they are, next to the same name without one', async () => {
    // Files the person made: U+FEFF is not dropped from a name read back from a tree (it was,
    // so the tree read back as "notes.md" twice: damage) nor from the text of a file.
    await writeFile(path.join(dataDir, 'memories', '\uFEFFnotes.md'), '\uFEFFwith a mark\n')
    await writeFile(path.join(dataDir, 'memories', 'notes.md'), 'without one\n')
    await memory.close()
    memory = await openVersionedMemory({ dataDir, now, watch: false, logger })
    expect(memory.recovery?.kind).toBe('outside-changes')
    await expectInSync()
    const listed = gitCli(dataDir, 'ls-tree', '-z', '--name-only', 'main').split('\0')
    expect(listed.filter(Boolean).sort()).toEqual(['notes.md', '\uFEFFnotes.md'].sort())
    // Opened again, the history it wrote reads back whole: nothing damaged, nothing to commit.
    const head = gitCli(dataDir, 'rev-parse', 'main').trim()
    await memory.close()
    memory = await openVersionedMemory({ dataDir, now, watch: false, logger })
    expect(memory.recovery).toBeNull()
    expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(head)
    expect(await memory.readAt('/memories/notes.md', head)).toBe('without one\n')
    await expectInSync()
  })
})
