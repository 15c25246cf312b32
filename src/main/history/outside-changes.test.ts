import { appendFileSync, readFileSync, readlinkSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { CommitSummary, RecoveryReport } from '../../shared/types'
import { nodeDisk, setDisk } from '../lib/disk'
import { openVersionedMemory, type Origin, type VersionedMemory } from './index'
import { outermost, touchedByCommand } from './outside-changes'
import {
  commitCount,
  folderFiles,
  fsck,
  gitCli,
  headFiles,
  tempDataDir,
  userWrite,
} from './test-helpers'

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory
let commits: CommitSummary[]
const claude: Origin = { actor: 'claude', conversationId: 'conv-1', toolUseId: 'toolu_1' }

// The watcher is off: these tests prove the guarantee that holds without it.
beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  memory = await openVersionedMemory({ dataDir, watch: false })
  commits = []
  memory.onCommit((commit) => commits.push(commit))
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})

const onDisk = (file: string) => path.join(dataDir, 'memories', file)

async function expectInSync(): Promise<void> {
  expect(headFiles(dataDir)).toEqual(await folderFiles(dataDir))
  fsck(dataDir)
}

/** The removed and added lines of one commit, per the git CLI. */
function changedLines(oid: string): ReadonlyArray<string> {
  return gitCli(dataDir, 'show', '--format=', '--unified=0', oid)
    .split('\n')
    .filter((line) => /^[-+]/.test(line) && !/^(---|\+\+\+) /.test(line))
}

/** The files one commit changed, per the git CLI. */
function changedFiles(oid: string): ReadonlyArray<string> {
  return gitCli(dataDir, 'show', '--format=', '--name-only', oid).trim().split('\n')
}

describe('edits made outside Cairn before a change to the same paths', () => {
  it('a save made in place while the outside edit is committed is edited, not overwritten', async () => {
    await memory.execute(
      { command: 'create', path: '/memories/note.md', file_text: 'one\ntwo\n' },
      claude,
    )
    // Edited outside in place: the command's check reads it and commits it first; while that
    // commit waits for the disk, the person saves again (in place: same file, same inode).
    await writeFile(onDisk('note.md'), 'one\ntwo\nthree\n')
    let late = false
    const restore = setDisk({
      ...nodeDisk,
      async fsync(fd) {
        if (!late && readlinkSync(`/proc/self/fd/${fd}`).includes('cairn-wal')) {
          late = true
          appendFileSync(onDisk('note.md'), 'LATE\n')
        }
        await nodeDisk.fsync(fd)
      },
    })
    let result
    try {
      result = await memory.execute(
        { command: 'str_replace', path: '/memories/note.md', old_str: 'two', new_str: 'TWO' },
        claude,
      )
    } finally {
      restore()
    }
    expect(late).toBe(true)
    expect(result.isError).toBe(false)
    // The edit read the file as it was when it ran: the late save is in it, and in history.
    expect(readFileSync(onDisk('note.md'), 'utf8')).toBe('one\nTWO\nthree\nLATE\n')
    expect(gitCli(dataDir, 'show', 'HEAD:note.md')).toBe('one\nTWO\nthree\nLATE\n')
    await expectInSync()
  })

  it('commits an outside edit on its own before Claude str_replaces the same file', async () => {
    await memory.execute(
      { command: 'create', path: '/memories/notes.md', file_text: 'one\ntwo\nthree\n' },
      claude,
    )
    await writeFile(onDisk('notes.md'), 'one\nTWO (by the user)\nthree\n')
    const outcome = await memory.execute(
      { command: 'str_replace', path: '/memories/notes.md', old_str: 'three', new_str: 'drei' },
      claude,
    )
    expect(outcome.isError).toBe(false)

    expect(commitCount(dataDir)).toBe(3)
    const [outsideOid, claudeOid] = gitCli(dataDir, 'log', '-2', '--reverse', '--format=%H')
      .trim()
      .split('\n') as [string, string]
    expect(gitCli(dataDir, 'log', '-1', '--format=%an|%s', outsideOid).trim()).toBe(
      'Cairn|Changes made outside Cairn',
    )
    expect(gitCli(dataDir, 'show', `${outsideOid}:notes.md`)).toBe(
      'one\nTWO (by the user)\nthree\n',
    )
    expect(outcome.commit?.oid).toBe(claudeOid)
    expect(changedLines(claudeOid)).toEqual(['-three', '+drei'])
    expect(commits.map((commit) => [commit.actor, commit.command])).toEqual([
      ['claude', 'create'],
      ['system', 'outside'],
      ['claude', 'str_replace'],
    ])
    await expectInSync()
  })

  it('leaves outside edits to other paths out of Claude’s commit', async () => {
    await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a' }, claude)
    await writeFile(onDisk('b.md'), 'the user’s own file')
    const outcome = await memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'a2' },
      claude,
    )
    expect(outcome.commit?.paths).toEqual(['/memories/a.md'])
    expect(commitCount(dataDir)).toBe(2)
    expect(gitCli(dataDir, 'show', '--format=', '--name-only', 'main').trim()).toBe('a.md')
  })

  it('saves files the user added to a folder before Claude deletes the folder', async () => {
    await memory.execute({ command: 'create', path: '/memories/d/x.md', file_text: 'x' }, claude)
    await writeFile(onDisk('d/y.md'), 'added outside')
    const outcome = await memory.execute({ command: 'delete', path: '/memories/d' }, claude)
    expect(outcome.isError).toBe(false)
    const log = await memory.log({ offset: 0, limit: 10 })
    expect(log.entries.map((entry) => [entry.actor, changedFiles(entry.oid)])).toEqual([
      ['claude', ['d/x.md', 'd/y.md']],
      ['system', ['d/y.md']],
      ['claude', ['d/x.md']],
    ])
    // Undoing Claude's delete brings back the user's file too: it was there when Claude acted.
    await memory.revert(outcome.commit!.oid)
    expect(await folderFiles(dataDir)).toEqual(
      new Map([
        ['d/x.md', 'x'],
        ['d/y.md', 'added outside'],
      ]),
    )
    await expectInSync()
  })

  it('records an outside deletion before Claude creates the file again', async () => {
    await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a' }, claude)
    await rm(onDisk('a.md'))
    const outcome = await memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'again' },
      claude,
    )
    expect(outcome.commit).toMatchObject({ command: 'create', overwrite: false })
    const log = await memory.log({ offset: 0, limit: 10 })
    expect(log.entries.map((entry) => entry.subject)).toEqual([
      'create /memories/a.md',
      'Changes made outside Cairn',
      'create /memories/a.md',
    ])
    await expectInSync()
  })

  it('saves an outside file at a rename target before the rename refuses to overwrite it', async () => {
    await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a' }, claude)
    await writeFile(onDisk('b.md'), 'b by the user')
    const outcome = await memory.execute(
      { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' },
      claude,
    )
    expect(outcome.isError).toBe(true)
    expect(outcome.commit).toBeNull()
    expect(commits.map((commit) => commit.paths)).toEqual([['/memories/a.md'], ['/memories/b.md']])
    await expectInSync()
  })

  it('commits an outside edit before the user saves the same file from the UI', async () => {
    await userWrite(memory, '/memories/a.md', 'v1')
    await writeFile(onDisk('a.md'), 'v2 from an editor')
    const saved = await userWrite(memory, '/memories/a.md', 'v3 from Cairn')
    expect(saved.commit).toMatchObject({ actor: 'user', command: 'write' })
    expect(gitCli(dataDir, 'show', 'main~1:a.md')).toBe('v2 from an editor')
    await expectInSync()
  })

  it('refuses a revert over a file edited outside, after saving that edit', async () => {
    const created = await memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'a' },
      claude,
    )
    await writeFile(onDisk('a.md'), 'edited outside')
    await expect(memory.revert(created.commit!.oid)).rejects.toMatchObject({ code: 'conflict' })
    expect(await folderFiles(dataDir)).toEqual(new Map([['a.md', 'edited outside']]))
    expect(commits.at(-1)).toMatchObject({ actor: 'system', paths: ['/memories/a.md'] })
    await expectInSync()
  })

  it('saves every outside change before a restore of the whole folder', async () => {
    const first = await userWrite(memory, '/memories/a.md', 'a')
    await userWrite(memory, '/memories/b.md', 'b')
    await mkdir(onDisk('new'))
    await writeFile(onDisk('new/c.md'), 'added outside')
    const restored = await memory.restoreAll(first.commit!.oid)
    expect(restored.commit?.paths).toEqual(['/memories/b.md', '/memories/new/c.md'])
    expect(commits.at(-2)).toMatchObject({ actor: 'system', paths: ['/memories/new/c.md'] })
    expect(await folderFiles(dataDir)).toEqual(new Map([['a.md', 'a']]))
    await expectInSync()
  })

  it('reports the outside edits it saves as a recovery, counting several files', async () => {
    const reports: RecoveryReport[] = []
    memory.onRecovery((report) => reports.push(report))
    const first = await userWrite(memory, '/memories/a.md', 'a')
    await writeFile(onDisk('a.md'), 'a, edited elsewhere')
    await writeFile(onDisk('b.md'), 'b, added elsewhere')
    await memory.restoreAll(first.commit!.oid)
    const saved = commits.find((commit) => commit.command === 'outside')
    expect(reports).toEqual([
      {
        id: 'recovery-1',
        kind: 'outside-changes',
        message: '2 files were edited outside Cairn and saved to the history as their own change.',
        commitOid: saved?.oid,
      },
    ])
  })

  it('makes no extra commit when the folder matches HEAD', async () => {
    await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a' }, claude)
    await memory.execute({ command: 'view', path: '/memories' }, claude)
    await memory.execute({ command: 'view', path: '/memories/a.md' }, claude)
    await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a2' }, claude)
    expect(commitCount(dataDir)).toBe(2)
  })

  it('commits an outside edit a view is about to read, so what Claude reads is in history', async () => {
    await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a' }, claude)
    await writeFile(onDisk('b.md'), 'outside')
    // Without a watcher, a view of a folder checks the folder whole.
    const listing = await memory.execute({ command: 'view', path: '/memories' }, claude)
    expect(listing.content).toContain('/memories/b.md')
    expect(commitCount(dataDir)).toBe(2)
    expect(listing.readAt).toBe(gitCli(dataDir, 'rev-parse', 'main').trim())
    expect(gitCli(dataDir, 'show', `${listing.readAt}:b.md`)).toBe('outside')
    expect(gitCli(dataDir, 'log', '-1', '--format=%an|%s', 'main').trim()).toBe(
      'Cairn|Changes made outside Cairn',
    )
    await writeFile(onDisk('a.md'), 'a, edited outside')
    const file = await memory.execute({ command: 'view', path: '/memories/a.md' }, claude)
    expect(file.content).toContain('a, edited outside')
    expect(commitCount(dataDir)).toBe(3)
    expect(gitCli(dataDir, 'show', `${file.readAt}:a.md`)).toBe('a, edited outside')
  })
})

describe('touchedByCommand', () => {
  it('reads path, old_path and new_path with the tool’s rules and skips views', () => {
    expect(touchedByCommand({ command: 'str_replace', path: '/memories/a/b.md/' })).toEqual([
      'a/b.md',
    ])
    expect(
      touchedByCommand({ command: 'rename', old_path: '/memories/a', new_path: '/memories/b' }),
    ).toEqual(['a', 'b'])
    expect(touchedByCommand({ command: 'view', path: '/memories/a' })).toEqual([])
    expect(touchedByCommand({ command: 'delete', path: '/memories/../x' })).toEqual([])
    expect(touchedByCommand('create')).toEqual([])
  })
})

describe('outermost', () => {
  it('drops duplicates and paths inside another listed path', () => {
    expect(outermost(['a/b', 'a', 'a', 'c/d', 'ab'])).toEqual(['a', 'ab', 'c/d'])
    expect(outermost(['x', ''])).toEqual([''])
  })
})
