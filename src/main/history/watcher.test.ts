import { appendFile, mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { CommitSummary, RecoveryReport } from '../../shared/types'
import { TEMP_FILE_PREFIX } from '../lib/atomic-write'
import { createRecordingLogger, type RecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import type { TouchedPaths } from './outside-changes'
import {
  breakMainRef,
  folderFiles,
  fsck,
  gitCli,
  headFiles,
  tempDataDir,
  userDelete,
  userWrite,
} from './test-helpers'
import { watchFolder } from './watcher'

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory
let logger: RecordingLogger

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  logger = createRecordingLogger()
  memory = await openVersionedMemory({ dataDir, watch: { debounceMs: 30 }, logger })
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})

const onDisk = (file: string) => path.join(dataDir, 'memories', file)

/** Resolves with the next commit announced through `onCommit`. */
function nextCommit(): Promise<CommitSummary> {
  return new Promise((resolve) => {
    const stop = memory.onCommit((commit) => {
      stop()
      resolve(commit)
    })
  })
}

async function expectInSync(): Promise<void> {
  expect(headFiles(dataDir)).toEqual(await folderFiles(dataDir))
  fsck(dataDir)
}

function subjects(): ReadonlyArray<string> {
  return gitCli(dataDir, 'log', '--format=%an|%s', 'main').trim().split('\n')
}

describe('watching the memory folder while Cairn runs', () => {
  it('commits a file created outside Cairn as it appears', async () => {
    const committed = nextCommit()
    await writeFile(onDisk('from-editor.md'), 'typed in another editor\n')
    expect(await committed).toMatchObject({
      actor: 'system',
      command: 'outside',
      subject: 'Changes made outside Cairn',
      paths: ['/memories/from-editor.md'],
    })
    await expectInSync()
  })

  it('commits a deletion made outside Cairn, and a folder created outside with its files', async () => {
    await userWrite(memory, '/memories/old.md', 'old')
    let committed = nextCommit()
    await rm(onDisk('old.md'))
    expect((await committed).paths).toEqual(['/memories/old.md'])

    committed = nextCommit()
    await mkdir(onDisk('synced/deeper'), { recursive: true })
    await writeFile(onDisk('synced/deeper/note.md'), 'from a sync tool')
    expect((await committed).paths).toEqual(['/memories/synced/deeper/note.md'])

    // The new folder is watched too: an edit inside it is seen.
    committed = nextCommit()
    await appendFile(onDisk('synced/deeper/note.md'), ', edited')
    expect((await committed).paths).toEqual(['/memories/synced/deeper/note.md'])
    await expectInSync()
  })

  it('sees an in-place edit of a file Cairn last wrote (Cairn replaces files by renaming)', async () => {
    await userWrite(memory, '/memories/a.md', 'by Cairn')
    await userWrite(memory, '/memories/a.md', 'by Cairn, replaced')
    // Once this outside change is committed, every event of Cairn's writes has been handled.
    let committed = nextCommit()
    await writeFile(onDisk('b.md'), 'b')
    const before = await committed
    expect(before.paths).toEqual(['/memories/b.md'])
    committed = nextCommit()
    await writeFile(onDisk('a.md'), 'edited in place')
    expect(await committed).toMatchObject({ actor: 'system', paths: ['/memories/a.md'] })
    // The write empties the file, then writes it: under load the two can be seen apart and the
    // empty file committed first (a real state of the folder), the text by the next commit.
    await vi.waitFor(() => expect(gitCli(dataDir, 'show', 'main:a.md')).toBe('edited in place'), {
      timeout: 10_000,
      interval: 20,
    })
    const since = `${before.oid}..main`
    expect(new Set(gitCli(dataDir, 'log', '--format=%an|%s', since).trim().split('\n'))).toEqual(
      new Set(['Cairn|Changes made outside Cairn']),
    )
    expect(gitCli(dataDir, 'log', '--format=', '--name-only', since).trim().split('\n')).toSatisfy(
      (names: string[]) => names.every((name) => name === 'a.md'),
    )
  })

  it('never commits Cairn’s own writes a second time, and ignores temp files', async () => {
    await memory.execute(
      { command: 'create', path: '/memories/d/a.md', file_text: 'a' },
      { actor: 'claude', conversationId: 'conv', toolUseId: 'toolu_1' },
    )
    await userWrite(memory, '/memories/d/a.md', 'a2')
    await userDelete(memory, '/memories/d/a.md')
    await userWrite(memory, '/memories/b.md', 'b')
    await writeFile(onDisk(`${TEMP_FILE_PREFIX}stray`), 'half a write')
    // Events arrive in order: the outside write's batch includes, or follows, every event
    // of Cairn's writes above, so an extra commit for those would show up first.
    const committed = nextCommit()
    await writeFile(onDisk('outside.md'), 'outside')
    expect((await committed).paths).toEqual(['/memories/outside.md'])
    expect(subjects()).toEqual([
      'Cairn|Changes made outside Cairn',
      'You|create /memories/b.md',
      'You|delete /memories/d/a.md',
      'You|write /memories/d/a.md',
      'Claude|create /memories/d/a.md',
    ])
  })

  it('reports each outside edit it saves as a recovery, naming the commit', async () => {
    const reports: RecoveryReport[] = []
    memory.onRecovery((report) => reports.push(report))
    const committed = nextCommit()
    await writeFile(onDisk('edited.md'), 'from another editor')
    const commit = await committed
    expect(reports).toEqual([
      {
        id: 'recovery-1',
        kind: 'outside-changes',
        message: 'edited.md was edited outside Cairn and saved to the history as its own change.',
        commitOid: commit.oid,
      },
    ])
    // Cairn's own changes are no recovery.
    await userWrite(memory, '/memories/mine.md', 'mine')
    expect(reports).toHaveLength(1)
  })

  it('logs a watcher commit that fails, and saves the edit with the next change', async () => {
    await userWrite(memory, '/memories/a.md', 'a')
    const repair = await breakMainRef(dataDir)
    await writeFile(onDisk('outside.md'), 'typed while history was broken')
    await vi.waitFor(() => expect(logger.entries).not.toHaveLength(0), { timeout: 5000 })
    expect(logger.entries[0]).toMatchObject({
      level: 'warn',
      message: 'Could not save edits made outside Cairn to the history',
    })
    expect(logger.entries[0]?.error).toBeInstanceOf(Error)
    await repair()
    await userWrite(memory, '/memories/b.md', 'b')
    expect(gitCli(dataDir, 'show', 'main:outside.md')).toBe('typed while history was broken')
    await expectInSync()
  })

  it('stops committing outside changes once closed', async () => {
    await memory.close()
    await writeFile(onDisk('after-close.md'), 'x')
    // A watcher still running would commit within 30 ms; this one reports after 200 ms.
    await new Promise<TouchedPaths>((resolve) => {
      const sentinel = watchFolder(path.join(dataDir, 'memories'), {
        debounceMs: 200,
        logger,
        onChanges: (paths) => {
          sentinel.close()
          resolve(paths)
        },
      })
      void appendFile(onDisk('after-close.md'), 'y')
    })
    memory = await openVersionedMemory({ dataDir, watch: false })
    expect(memory.recovery?.kind).toBe('outside-changes')
  })
})

describe('watchFolder', () => {
  it('reports changed paths, debounced, without temp files and without .git', async () => {
    const root = path.join(dataDir, 'memories')
    const reported = await new Promise<TouchedPaths>((resolve) => {
      const watcher = watchFolder(root, {
        debounceMs: 50,
        logger,
        onChanges: (paths) => {
          watcher.close()
          resolve(paths)
        },
      })
      void (async () => {
        await writeFile(path.join(root, `${TEMP_FILE_PREFIX}x`), 'temp')
        await mkdir(path.join(root, '.git'))
        await writeFile(path.join(root, 'a.md'), 'a')
        await writeFile(path.join(root, 'b.md'), 'b')
      })()
    })
    expect(reported === 'all' ? reported : [...reported].sort()).toEqual(['a.md', 'b.md'])
  })

  it('reports nothing after close', async () => {
    const root = path.join(dataDir, 'memories')
    const closedOnes: TouchedPaths[] = []
    const closing = watchFolder(root, {
      debounceMs: 5,
      logger,
      onChanges: (paths) => closedOnes.push(paths),
    })
    closing.close()
    // The sentinel waits longer than the closed watcher would: had it still been running,
    // its report would have come first.
    await new Promise<void>((resolve) => {
      const sentinel = watchFolder(root, {
        debounceMs: 100,
        logger,
        onChanges: () => {
          sentinel.close()
          resolve()
        },
      })
      void writeFile(path.join(root, 'a.md'), 'a')
    })
    expect(closedOnes).toEqual([])
  })

  it('watches nothing, without throwing, when the folder does not exist', () => {
    const watcher = watchFolder(path.join(dataDir, 'missing'), {
      debounceMs: 5,
      logger,
      onChanges: () => undefined,
    })
    expect(() => watcher.close()).not.toThrow()
    // A folder that is not there is nothing to report.
    expect(logger.entries).toEqual([])
  })
})
