import type { FSWatcher } from 'node:fs'
import path from 'node:path'
import { disk, isMissing } from '../lib/disk'
import type { Logger } from '../lib/logger'
import { isWithin } from './paths'
import type { TouchedPaths } from './outside-changes'
import { isUntracked } from './work-tree'

/** A running watch on the memory folder. */
export interface FolderWatcher {
  /** Stops watching; no report comes after it. Safe to call twice. */
  close(): void
  /** The paths seen since the last report, handed over now instead of after the debounce. */
  takePending(): TouchedPaths
}

export interface WatchOptions {
  /** Quiet time after the last event before `onChanges` is called. */
  readonly debounceMs: number
  /**
   * The relative paths that saw events since the last call (a folder covers its subtree),
   * or `'all'` when the platform did not say which. Called outside any stack of `fs`.
   */
  readonly onChanges: (paths: TouchedPaths) => void
  /**
   * Told at once of each event kept (before the debounce): a whole-folder read made meanwhile
   * in slices knows the folder moved under it (the memory's change stamp). `relative` as in
   * `onChanges`, null for "somewhere".
   */
  readonly onSeen?: (relative: string | null) => void
  /** Where a failing report or a watch the platform dropped is told. */
  readonly logger: Logger
}

/**
 * Watches `root` and everything below it, reporting the paths that changed, debounced.
 * Temp files of Cairn's writes and `.git` are ignored, as start-up recovery ignores them.
 * Never throws: where the platform cannot watch, it watches nothing.
 *
 * Linux gets one watcher per folder: Node 20's recursive watch there watches each file's
 * inode, and loses a file once it is replaced by a rename — which is how Cairn writes.
 */
export function watchFolder(root: string, options: WatchOptions): FolderWatcher {
  let closed = false
  let pending = new Set<string>()
  let everything = false
  let timer: NodeJS.Timeout | null = null

  function flush(): void {
    timer = null
    if (closed) return
    const paths: TouchedPaths = everything ? 'all' : [...pending]
    pending = new Set()
    everything = false
    try {
      options.onChanges(paths)
    } catch (error) {
      // A failing report must not stop the watching.
      options.logger.error('A folder change report failed', error)
    }
  }

  function record(relative: string | null): void {
    if (closed) return
    if (relative === null) everything = true
    else if (relative.split('/').some(isUntracked)) return
    else pending.add(relative)
    options.onSeen?.(relative)
    if (timer) clearTimeout(timer)
    timer = setTimeout(flush, options.debounceMs)
    timer.unref()
  }

  const stop =
    process.platform === 'darwin' || process.platform === 'win32'
      ? watchNatively(root, record, options.logger)
      : watchEachFolder(root, record, options.logger)

  return {
    takePending() {
      if (timer) clearTimeout(timer)
      timer = null
      const paths: TouchedPaths = everything ? 'all' : [...pending]
      pending = new Set()
      everything = false
      return paths
    },
    close() {
      closed = true
      if (timer) clearTimeout(timer)
      timer = null
      stop()
    },
  }
}

type Report = (relative: string | null) => void

function watchNatively(root: string, record: Report, logger: Logger): () => void {
  try {
    const watcher = disk.watch(root, { recursive: true, persistent: false }, (_event, name) =>
      record(name ? name.toString().split(path.sep).join('/') : null),
    )
    watcher.on('error', (error) => {
      logger.warn('Stopped watching the memory folder; outside edits are saved on use', error)
      watcher.close()
    })
    return () => watcher.close()
  } catch (error) {
    logger.warn('Cannot watch the memory folder; outside edits are saved on use', error)
    return () => undefined
  }
}

function watchEachFolder(root: string, record: Report, logger: Logger): () => void {
  // Each watch with the identity of the folder it is on: a folder replaced by another of the
  // same name (`rm -rf` and `mkdir`, a sync tool, a backup put back) must be watched again,
  // for inotify keeps watching the old one (its watch ends without an error).
  const watchers = new Map<string, { readonly watcher: FSWatcher; readonly id: string }>()

  function unwatch(relative: string): void {
    for (const [folder, { watcher }] of watchers) {
      if (isWithin(folder, relative)) {
        watcher.close()
        watchers.delete(folder)
      }
    }
  }

  // Watches `relative` and the folders below it; a folder that vanishes meanwhile is skipped.
  function add(relative: string, id = identityOf(path.join(root, relative))): void {
    if (id === null) return
    const known = watchers.get(relative)
    if (known?.id === id) return
    // Another folder by that name now: the watches on the one that went are dropped.
    if (known) unwatch(relative)
    const abs = path.join(root, relative)
    let watcher: FSWatcher
    try {
      watcher = disk.watch(abs, { persistent: false }, (_event, name) => {
        if (!name) return record(relative || null)
        const child = relative ? `${relative}/${name.toString()}` : name.toString()
        record(child)
        follow(child)
      })
    } catch (error) {
      // A folder gone meanwhile is nothing to watch; anything else (e.g. the system's limit
      // of watches reached) leaves its edits to be saved when Cairn next touches them.
      if (!isMissing(error)) logger.warn('Cannot watch a folder of the memory folder', error)
      return
    }
    watcher.on('error', () => unwatch(relative))
    watchers.set(relative, { watcher, id })
    let names: string[]
    try {
      names = disk
        .readdirSync(abs)
        .filter((dirent) => dirent.isDirectory() && !isUntracked(dirent.name))
        .map((dirent) => dirent.name)
    } catch {
      // Gone since the watch started: its removal is reported like any other event.
      return
    }
    for (const name of names) add(relative ? `${relative}/${name}` : name)
  }

  // A new folder gets watched (files made in it before that are covered: its path was
  // recorded, and the rescan reads its whole subtree), and so does a folder put in the place
  // of one of the same name; a folder gone stops being watched.
  function follow(child: string): void {
    const id = identityOf(path.join(root, child))
    if (id !== null) add(child, id)
    else if (child !== '') unwatch(child)
  }

  add('')
  return () => {
    for (const { watcher } of watchers.values()) watcher.close()
    watchers.clear()
  }
}

/**
 * A folder's identity, or null when there is no folder at `abs`: device and inode, and its
 * birth time, for a folder removed and made again most often gets the inode number back
 * (ext4 here did, every time). Where the file system keeps no birth time it reads 0, and the
 * inode alone decides.
 */
export function identityOf(abs: string): string | null {
  let stats
  try {
    stats = disk.lstatIfThere(abs)
  } catch {
    return null
  }
  return stats?.isDirectory() ? `${stats.dev}:${stats.ino}:${stats.birthtimeMs}` : null
}
