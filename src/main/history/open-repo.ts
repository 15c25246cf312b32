import fs, { existsSync } from 'node:fs'
import { mkdir, rename, stat } from 'node:fs/promises'
import path from 'node:path'
import type { RecoveryReport } from '../../shared/types'
import type { Logger } from '../lib/logger'
import { finishInterruptedMove } from './checkout'
import { createObjectStore, initRepository, readMainRef, type ObjectStore } from './object-store'
import { removePackLeftovers } from './objects/pack-writer'
import { createRepo, systemIntent, type Repo, type RepoState } from './repo'
import { IndexFile, indexDirOf } from './index-file'
import { openIndex } from './side-index'
import { StatCache, statCacheOf } from './stat-cache'
import { emptyTree, loadAll, treeFromOid } from './tree-state'

export interface OpenedRepo {
  readonly repo: Repo
  readonly recovery: RecoveryReport | null
}

/**
 * Opens (or starts) the history of `<dataDir>/memories` in `<dataDir>/history.git` and
 * repairs what an interrupted run or an outside edit left behind:
 * - stray temp files of interrupted writes are removed;
 * - changes not yet committed become one recovery commit by the system author;
 * - a missing or unreadable git directory is moved aside (never deleted) and a fresh
 *   history starts from the files as they are — the files themselves are never touched.
 */
export async function openRepo(options: {
  dataDir: string
  now: () => number
  /** Told why a history could not be read before it is set aside. */
  logger?: Logger
  /** The machine named in each commit's `Machine:` trailer (see `createRepo`). */
  machine?: () => string | null
}): Promise<OpenedRepo> {
  const { dataDir, now } = options
  const workRoot = path.join(dataDir, 'memories')
  const gitdir = path.join(dataDir, 'history.git')
  await mkdir(workRoot, { recursive: true, mode: 0o700 })

  const hadGitdir = existsSync(gitdir)
  let state: (RepoState & { store: ObjectStore }) | null = null
  let damaged = false
  if (hadGitdir) {
    try {
      // A sync moving `main` when the app stopped is finished first, so the folder and
      // `main` agree again before anything is compared.
      await finishInterruptedMove(gitdir, workRoot, options.logger)
      state = await loadState(gitdir)
    } catch (error) {
      options.logger?.warn('The memory history could not be read; it is set aside', error)
      damaged = true
      await rename(gitdir, await asideName(gitdir, now()))
    }
  }
  const fresh = state === null
  if (!state) {
    await initRepository(gitdir)
    fs.rmSync(indexDirOf(gitdir), { recursive: true, force: true })
    fs.rmSync(statCacheOf(gitdir), { force: true })
    state = {
      store: createObjectStore(gitdir),
      head: null,
      root: emptyTree(),
      index: IndexFile.create(indexDirOf(gitdir)),
      stats: new StatCache(statCacheOf(gitdir)),
    }
  }
  const repo = createRepo({
    store: state.store,
    workRoot,
    state,
    now,
    machine: options.machine,
  })

  const entry = await repo.commit(
    'all',
    fresh
      ? systemIntent('init', 'Start the history from the memory folder')
      : systemIntent('recovery', 'Save changes made outside Cairn'),
    // Temp files of interrupted writes go on the way: they were never part of the folder.
    { removeTemp: true },
  )
  repo.stats.save()
  if (damaged || (fresh && entry)) {
    const count = entry?.files.length ?? 0
    return {
      repo,
      recovery: {
        kind: 'history-rebuilt',
        message: damaged
          ? `The memory history could not be read. It was set aside and a new history was started from your current memory files (${count} ${plural(count)}); no file was lost.`
          : `No history was found for your memory folder. A new history was started from its ${count} ${plural(count)}.`,
        commitOid: entry?.oid ?? null,
      },
    }
  }
  if (entry) {
    const count = entry.files.length
    return {
      repo,
      recovery: {
        kind: 'uncommitted-changes',
        message: `${count} ${plural(count)} had changed without being saved to the history (an interrupted write or an edit outside Cairn). They were saved as one recovery commit.`,
        commitOid: entry.oid,
      },
    }
  }
  return { repo, recovery: null }
}

async function loadState(gitdir: string): Promise<RepoState & { store: ObjectStore }> {
  if (!(await stat(path.join(gitdir, 'objects'))).isDirectory()) throw new Error('no objects')
  removePackLeftovers(path.join(gitdir, 'objects', 'pack'))
  const store = createObjectStore(gitdir)
  try {
    const head = await readMainRef(gitdir)
    let root = emptyTree()
    if (head) {
      root = treeFromOid((await store.readCommit(head)).tree)
      await loadAll(store, root)
    }
    const { index } = await openIndex(store, gitdir, head)
    return { store, head, root, index, stats: StatCache.load(statCacheOf(gitdir)) }
  } catch (error) {
    store.close()
    throw error
  }
}

async function asideName(gitdir: string, time: number): Promise<string> {
  const stamp = new Date(time).toISOString().replace(/[-:]/g, '').replace(/\..*$/, 'Z')
  for (let n = 0; ; n++) {
    const candidate = `${gitdir}.broken-${stamp}${n ? `-${n}` : ''}`
    if (!existsSync(candidate)) return candidate
  }
}

function plural(count: number): string {
  return count === 1 ? 'file' : 'files'
}
