/**
 * How much the memory folder holds (files, bytes), for the limits. Walking 10,000 files on
 * every write would be slow, so the total is computed once, then kept current by the handler's
 * own writes; it is re-walked after `invalidate()` or once it is older than `maxAgeMs` (other
 * writers — the user, a restore — may have changed the folder meanwhile). The tool refreshes it
 * between commands (`wantsRefresh`), so a write rarely has to wait for a walk. A write that
 * would come near a limit by the cached total is checked against a fresh walk (`fresh`): the
 * folder may have filled up outside since the count.
 */

import { disk } from '../lib/disk'
import { MAX_VIEW_FILE_BYTES } from './format'
import path from 'node:path'

/** Files and bytes in the memory folder (regular, non-hidden files only). */
export interface Usage {
  readonly files: number
  readonly bytes: number
}

/**
 * Where the tool gets the folder's usage from. The default (`UsageCache`) walks the folder; a
 * host that already tracks every file (the versioned memory's stat cache) supplies its own.
 */
export interface UsageSource {
  get(): Promise<Usage>
  /**
   * The usage counted now, outside changes included: asked for only when a write would come
   * near a limit (`guardWrite`), where a total that missed them could let the write break it.
   */
  fresh(): Promise<Usage>
  /**
   * True when the folder may have changed outside since the total was counted (the plain
   * tool: a total older than a moment; the history: the watcher saw events since): a write
   * that adds a file or grows the total is then checked against `fresh` at any distance from
   * the limits, since an outside jump may be larger than the margin (review13-tool R2).
   */
  mayBeStale?(): boolean
  /** A change the tool made itself (files, bytes: signed). */
  add(files: number, bytes: number): void
  /** Something else changed the folder. */
  invalidate(): void
  /** True when a refresh between commands would help. */
  wantsRefresh(): boolean
  refresh(): Promise<void>
}

/** Past this age a growing write recounts the folder (see `UsageSource.mayBeStale`). */
export const STALE_AFTER_MS = 2000

/** A lazily computed, self-updating usage total. */
export class UsageCache implements UsageSource {
  private usage: Usage | null = null
  private computedAt = 0

  constructor(
    private readonly root: string,
    private readonly maxAgeMs: number,
    private readonly now: () => number,
  ) {}

  /** True when the last `get` walked the folder itself (its total is as fresh as can be). */
  private walkedByGet = false

  /** The current usage, walking the folder only when the cached total is missing or stale. */
  async get(): Promise<Usage> {
    this.walkedByGet = false
    if (this.usage === null || this.now() - this.computedAt > this.maxAgeMs) {
      await this.refresh()
      this.walkedByGet = true
    }
    return this.usage!
  }

  /** A count of the folder as it is now (the one `get` just walked, else a new walk). */
  async fresh(): Promise<Usage> {
    if (!this.walkedByGet || this.usage === null) await this.refresh()
    this.walkedByGet = false
    return this.usage!
  }

  /** True once the total is older than `STALE_AFTER_MS`: the folder may have changed since. */
  mayBeStale(): boolean {
    return this.usage === null || this.now() - this.computedAt > STALE_AFTER_MS
  }

  /**
   * True when the total is missing or past half its age: worth re-walking now, between
   * commands, rather than on the write that would find it expired.
   */
  wantsRefresh(): boolean {
    return this.usage === null || this.now() - this.computedAt > this.maxAgeMs / 2
  }

  /** Walks the folder now and caches the total. */
  async refresh(): Promise<void> {
    this.usage = await measure(this.root)
    this.computedAt = this.now()
  }

  /** Records a change the handler made itself (only if a total is cached). */
  add(files: number, bytes: number): void {
    if (this.usage === null) return
    this.usage = { files: this.usage.files + files, bytes: this.usage.bytes + bytes }
  }

  /** Forgets the total; the next write walks the folder again. */
  invalidate(): void {
    this.usage = null
  }
}

/**
 * True when a file of `size` bytes counts toward the limits. A file too large to view or
 * version is outside the memory's accounting (it would otherwise block every write); the
 * history reports it on its own.
 */
export function isCounted(size: number): boolean {
  return size <= MAX_VIEW_FILE_BYTES
}

/** Walks a folder (no symlinks followed, hidden entries skipped) and totals its regular files. */
export async function measure(dir: string): Promise<Usage> {
  let files = 0
  let bytes = 0
  const pending = [dir]
  while (pending.length > 0) {
    const current = pending.pop()!
    let entries
    try {
      entries = await disk.promises.readdir(current)
    } catch {
      // Removed or unreadable since it was found: it holds nothing Claude can write to.
      continue
    }
    const sizes: Promise<void>[] = []
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue
      const full = path.join(current, entry.name)
      if (entry.isDirectory()) pending.push(full)
      else if (entry.isFile()) {
        files++
        sizes.push(
          disk.promises.lstat(full).then(
            (stats) => {
              if (!isCounted(stats.size)) {
                files--
                return
              }
              bytes += stats.size
            },
            () => {},
          ),
        )
      }
    }
    await Promise.all(sizes)
  }
  return { files, bytes }
}
