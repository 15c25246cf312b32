/**
 * How much the memory folder holds (files, bytes), for the limits. Walking 10,000 files on
 * every write would be slow, so the total is computed once, then kept current by the handler's
 * own writes; it is re-walked after `invalidate()` or once it is older than `maxAgeMs` (other
 * writers — the user, a restore — may have changed the folder meanwhile). The tool refreshes it
 * between commands (`wantsRefresh`), aside from them when it has a total to go on with
 * (`walkAside`), so a command rarely has to wait for a walk; a growing write that finds one
 * under way waits for its count (`settleWalk`): it may show a file grown outside. A growing write
 * whose total was checked more than a moment ago checks the folders first (`recheck`: one
 * `lstat` per folder, reading again only those that changed). A write that would come near a
 * limit by the total is checked against a fresh walk (`fresh`): files may have grown outside.
 */

import type { Dirent, Stats } from 'node:fs'
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
   * tool: a total checked more than a moment ago): a write that adds a file or grows the
   * total then asks `recheck` (or `fresh`) at any distance from the limits, since an outside
   * jump may be larger than the margin (review13-tool R2).
   */
  mayBeStale?(): boolean
  /**
   * The usage with outside changes since the count looked for cheaply (the plain tool: one
   * `lstat` per folder, a new read of the folders that changed), for `mayBeStale`; left out,
   * `fresh` is asked instead.
   */
  recheck?(): Promise<Usage>
  /**
   * Told just before the tool changes the entries at `relatives` (relative paths); the
   * function it returns is called once the change is made, with any entries it made that
   * were not named before (a name kept aside). Left out, the source keeps its total itself (the
   * versioned memory: its scan of each change).
   */
  changing?(relatives: ReadonlyArray<string>): (more?: ReadonlyArray<string>) => Promise<void>
  /** Something else changed the folder. */
  invalidate(): void
  /** True when a refresh between commands would help. */
  wantsRefresh(): boolean
  refresh(): Promise<void>
  /**
   * A refresh that holds no command up: the folder is counted now, while commands go on with
   * the cached total, and the function it resolves to takes the new count (run it between
   * commands, in the tool's queue). Null when it cannot (no total yet to go on with), and
   * left out: `refresh` runs in the queue instead.
   */
  walkAside?(): Promise<() => Promise<void>> | null
  /**
   * Waits for a walk aside under way, if any, and takes its count (run in the tool's queue):
   * a write that grows the total asks it first, so that a file grown in place outside, which
   * only a walk sees, counts toward the limits as when the walk ran between commands.
   */
  settleWalk?(): Promise<void>
}

/** Past this age a growing write checks the folder again (see `UsageSource.mayBeStale`). */
export const STALE_AFTER_MS = 2000

/**
 * How many files a walk aside (`UsageCache.walkAside`) `lstat`s at once: a command arriving
 * meanwhile finds the thread pool and the event loop busy with at most this many, never with
 * every file of a folder of 10,000.
 */
const ASIDE_SLICE = 32

/**
 * A folder whose mtime is this close to the time it was read (or later) is "racy", as git's
 * index calls it: file-system timestamps are coarse (ext4 stamps from the kernel's tick, a few
 * ms), so a change made in the same tick after the read would leave the same mtime. Its names
 * are listed again by the next check.
 */
const RACY_MS = 50

/** What the count knows of one folder: its identity and mtime when read, and what it held. */
interface FolderRecord {
  readonly dev: number
  readonly ino: number
  mtimeMs: number
  /** Read within `RACY_MS` of its mtime: an unchanged mtime proves nothing until listed again. */
  racy: boolean
  /** Its regular, non-hidden files: name -> size (`isCounted` decides which count). */
  readonly files: Map<string, number>
  /** Its non-hidden sub-folders, by name. */
  readonly dirs: Set<string>
}

/**
 * A lazily computed, self-updating usage total. The walk that counts the folder records each
 * folder's identity and mtime and each file's size; after that a check (`recheck`) only looks
 * at the folders (one `lstat` each: a file created, removed or renamed in a folder changes its
 * mtime) and reads again only those that changed. The tool's own changes update the record
 * from a re-stat of what they touched (`changing`). A file that grows in place outside does
 * not change its folder: that is caught by the near-limit recount (`fresh`) and by the walk
 * between commands once the total is past half its age.
 */
export class UsageCache implements UsageSource {
  private usage: Usage | null = null
  /** When the folder was last walked whole. */
  private computedAt = 0
  /** When the folder was last walked or checked (`recheck`). */
  private checkedAt = 0
  /** Every folder counted, by relative path ('' is the root). */
  private folders = new Map<string, FolderRecord>()
  /** Moves on at every count on a command's path and `invalidate`: a walk aside begun before is dropped. */
  private generation = 0
  /** While a walk aside runs (until its count is taken): the entries the tool changed meanwhile. */
  private touched: Set<string> | null = null
  /** The walk aside under way (until its count is taken): resolves to the take. */
  private walking: Promise<() => Promise<void>> | null = null

  constructor(
    private readonly root: string,
    private readonly maxAgeMs: number,
    private readonly now: () => number,
    /** Files `lstat`ed at once while reading a folder. */
    private readonly slice = Infinity,
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

  /** True once the total was last checked more than `STALE_AFTER_MS` ago. */
  mayBeStale(): boolean {
    return this.usage === null || this.now() - this.checkedAt > STALE_AFTER_MS
  }

  /**
   * The usage with every folder checked: one `lstat` per folder, and a new read of those that
   * changed since they were counted (a changed identity or mtime: files created, removed or
   * renamed in it; a racy one is listed and read again only if its names differ).
   */
  async recheck(): Promise<Usage> {
    if (this.usage === null) {
      await this.refresh()
      return this.usage!
    }
    const changed = new Set<string>()
    const racy: string[] = []
    for (const [relative, record] of this.folders) {
      const stats = this.lstat(relative)
      if (!stats || !sameFolder(stats, record) || stats.mtimeMs !== record.mtimeMs) {
        changed.add(relative)
      } else if (record.racy) racy.push(relative)
    }
    // A racy folder listed now, well after its mtime, is no longer racy if it is unchanged.
    const at = this.now()
    for (const relative of racy) {
      const record = this.folders.get(relative)!
      const listed = await this.names(relative)
      if (listed === null || !sameNames(listed, record)) changed.add(relative)
      else if (at - record.mtimeMs >= RACY_MS) record.racy = false
    }
    // Outermost first: reading a folder again reads its new or changed sub-folders with it.
    const done = new Set<string>()
    for (const relative of [...changed].sort((a, b) => depth(a) - depth(b))) {
      if (done.has(relative) || (relative !== '' && !this.folders.has(relative))) continue
      await this.read(relative, changed, done)
    }
    if (!this.folders.has('')) {
      // The memory folder itself is gone: counted again once it is back.
      this.invalidate()
      return { files: 0, bytes: 0 }
    }
    this.checkedAt = this.now()
    return this.usage
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
    this.generation++
    this.folders = new Map()
    this.usage = { files: 0, bytes: 0 }
    await this.read('', new Set(), new Set())
    if (!this.folders.has('')) this.folders.clear()
    this.computedAt = this.checkedAt = this.now()
  }

  /**
   * Walks the folder on a record of its own, a few files at a time, while commands go on
   * with the cached total (the walk between commands held each command that came meanwhile,
   * 140 ms at 10,000 files). The function it resolves to, run between commands, reads again
   * on that record the entries the tool changed since the walk began, then takes it: files
   * grown in place outside are seen as by a walk in the queue by every growing write (it
   * takes the count itself first: `settleWalk`). It is taken once. A count on a command's path or `invalidate` meanwhile drops it. Null with no
   * total yet (nothing to go on with: the walk runs in the queue) or while one runs aside.
   */
  walkAside(): Promise<() => Promise<void>> | null {
    if (this.usage === null || this.touched !== null) return null
    const walking = this.walkAsideNow()
    this.walking = walking
    return walking
  }

  async settleWalk(): Promise<void> {
    const walking = this.walking
    if (!walking) return
    let take
    try {
      take = await walking
    } catch {
      // Said by whoever started it; the write goes on with the total it has.
      return
    }
    await take()
  }

  private async walkAsideNow(): Promise<() => Promise<void>> {
    const generation = this.generation
    const touched = new Set<string>()
    this.touched = touched
    const startedAt = this.now()
    const aside = new UsageCache(this.root, this.maxAgeMs, this.now, ASIDE_SLICE)
    let taken = false
    const done = (): void => {
      if (this.touched === touched) {
        this.touched = null
        this.walking = null
      }
    }
    try {
      await aside.refresh()
    } catch (error) {
      done()
      throw error
    }
    // Taken once: by a growing write that waited for it (`settleWalk`), or between commands.
    return async () => {
      done()
      if (taken) return
      taken = true
      if (this.generation !== generation || aside.usage === null) return
      for (const relative of touched) {
        const [folder, name] = aside.recordedParent(relative)
        await aside.restat(folder, name)
      }
      if (!aside.folders.has('')) {
        // The memory folder itself is gone: counted again once it is back.
        this.invalidate()
        return
      }
      this.folders = aside.folders
      this.usage = aside.usage
      // Its folders were looked at since it began, not all since it ended.
      this.computedAt = this.checkedAt = startedAt
    }
  }

  /**
   * Before the tool changes the entries at `relatives`: notes whether their folders are still
   * as recorded. The returned function, called once the change is made (with any entries it
   * made that were not known before, such as a name kept aside), re-stats those entries and,
   * for a folder that was as recorded, takes its new mtime (else it stays changed: the next
   * check reads it again, outside changes included).
   */
  changing(relatives: ReadonlyArray<string>): (more?: ReadonlyArray<string>) => Promise<void> {
    this.noteTouched(relatives)
    if (this.usage === null) return async () => undefined
    const before = new Map<string, boolean>()
    const note = (relative: string): void => {
      const [folder] = this.recordedParent(relative)
      if (before.has(folder)) return
      const stats = this.lstat(folder)
      const record = this.folders.get(folder)
      before.set(
        folder,
        !!stats && !!record && sameFolder(stats, record) && stats.mtimeMs === record.mtimeMs,
      )
    }
    relatives.forEach(note)
    return async (more = []) => {
      this.noteTouched([...relatives, ...more])
      try {
        if (this.usage === null) return
        for (const relative of [...relatives, ...more]) {
          const [folder, name] = this.recordedParent(relative)
          if (!before.has(folder)) before.set(folder, false)
          await this.restat(folder, name)
        }
        for (const [folder, unchanged] of before) {
          const record = this.folders.get(folder)
          const at = this.now()
          const stats = this.lstat(folder)
          if (!record || !unchanged || !stats || !sameFolder(stats, record)) continue
          record.mtimeMs = stats.mtimeMs
          // Right after the change it is racy as a rule: the next check lists its names,
          // which also shows anything made outside between the two stats.
          record.racy ||= at - stats.mtimeMs < RACY_MS
        }
      } catch {
        // Whatever happened, the record may be off: counted afresh by the next write.
        this.invalidate()
      }
    }
  }

  /** Forgets the total; the next write walks the folder again. */
  invalidate(): void {
    this.generation++
    this.usage = null
    this.folders = new Map()
  }

  // Entries a walk aside must read again before its count is taken.
  private noteTouched(relatives: ReadonlyArray<string>): void {
    if (this.touched) for (const relative of relatives) this.touched.add(relative)
  }

  private full(relative: string): string {
    return relative === '' ? this.root : path.join(this.root, relative)
  }

  private lstat(relative: string): Stats | undefined {
    try {
      return disk.lstatIfThere(this.full(relative))
    } catch {
      return undefined
    }
  }

  /** The deepest recorded folder holding `relative`, and the name below it on the way. */
  private recordedParent(relative: string): [string, string] {
    let at = relative
    for (;;) {
      const slash = at.lastIndexOf('/')
      const folder = slash < 0 ? '' : at.slice(0, slash)
      const name = slash < 0 ? at : at.slice(slash + 1)
      if (this.folders.has(folder) || folder === '') return [folder, name]
      at = folder
    }
  }

  /** Re-reads entry `name` of recorded folder `folder` (a file's size, a folder whole). */
  private async restat(folder: string, name: string): Promise<void> {
    const record = this.folders.get(folder)
    if (!record) return
    const relative = folder === '' ? name : `${folder}/${name}`
    this.setFile(record, name, undefined)
    if (record.dirs.has(name)) this.drop(relative)
    if (name.startsWith('.')) return
    const stats = this.lstat(relative)
    if (stats?.isFile()) this.setFile(record, name, stats.size)
    else if (stats?.isDirectory()) {
      record.dirs.add(name)
      await this.read(relative, new Set(), new Set())
    }
  }

  /** Sets (or with `undefined` removes) a file of a record, keeping the total. */
  private setFile(record: FolderRecord, name: string, size: number | undefined): void {
    const old = record.files.get(name)
    if (old !== undefined) {
      record.files.delete(name)
      this.count(old, -1)
    }
    if (size === undefined) return
    record.files.set(name, size)
    this.count(size, 1)
  }

  private count(size: number, sign: 1 | -1): void {
    if (!isCounted(size) || this.usage === null) return
    this.usage = { files: this.usage.files + sign, bytes: this.usage.bytes + sign * size }
  }

  /** Forgets the folder `relative` and everything recorded under it. */
  private drop(relative: string): void {
    const prefix = `${relative}/`
    for (const [at, record] of this.folders) {
      if (at !== relative && !(relative === '' || at.startsWith(prefix))) continue
      for (const size of record.files.values()) this.count(size, -1)
      this.folders.delete(at)
    }
    const slash = relative.lastIndexOf('/')
    this.folders
      .get(slash < 0 ? '' : relative.slice(0, slash))
      ?.dirs.delete(relative.slice(slash + 1))
  }

  /** The names in folder `relative` with their kinds, or null when it cannot be read. */
  private async names(relative: string): Promise<Dirent[] | null> {
    try {
      return (await disk.promises.readdir(this.full(relative))).filter(
        (entry) => !entry.name.startsWith('.'),
      )
    } catch {
      return null
    }
  }

  /**
   * Reads folder `relative` again (its stats taken first: a change during the read shows as
   * a newer mtime at the next check). Its sub-folders are read too when new, or in `changed`;
   * the others keep their records. `done` collects the folders read.
   */
  private async read(relative: string, changed: Set<string>, done: Set<string>): Promise<void> {
    done.add(relative)
    // The clock before the stat: racy errs towards a second look.
    const at = this.now()
    const stats = this.lstat(relative)
    const old = this.folders.get(relative)
    const entries = stats?.isDirectory() ? await this.names(relative) : null
    if (!stats || entries === null || (old && !sameFolder(stats, old))) this.drop(relative)
    else if (old) for (const size of old.files.values()) this.count(size, -1)
    if (!stats || entries === null) return
    const record: FolderRecord = {
      dev: stats.dev,
      ino: stats.ino,
      mtimeMs: stats.mtimeMs,
      racy: at - stats.mtimeMs < RACY_MS,
      files: new Map(),
      dirs: new Set(),
    }
    const files: string[] = []
    for (const entry of entries) {
      if (entry.isDirectory()) record.dirs.add(entry.name)
      else if (entry.isFile()) files.push(entry.name)
    }
    for (let at = 0; at < files.length; at += this.slice) {
      await Promise.all(
        files.slice(at, at + this.slice).map((name) =>
          disk.promises.lstat(path.join(this.full(relative), name)).then(
            (file) => {
              if (file.isFile()) record.files.set(name, file.size)
            },
            () => {},
          ),
        ),
      )
    }
    for (const name of this.folders.get(relative)?.dirs ?? []) {
      if (!record.dirs.has(name)) this.drop(relative === '' ? name : `${relative}/${name}`)
    }
    this.folders.set(relative, record)
    // A folder swapped for another under the same name was dropped from its parent above.
    const slash = relative.lastIndexOf('/')
    if (relative !== '')
      this.folders
        .get(slash < 0 ? '' : relative.slice(0, slash))
        ?.dirs.add(relative.slice(slash + 1))
    for (const size of record.files.values()) this.count(size, 1)
    for (const name of record.dirs) {
      const child = relative === '' ? name : `${relative}/${name}`
      if (!this.folders.has(child) || changed.has(child)) await this.read(child, changed, done)
    }
  }
}

function sameFolder(stats: Stats, record: FolderRecord): boolean {
  return stats.isDirectory() && stats.ino === record.ino && stats.dev === record.dev
}

/** True when `listed` holds the same names, with the same kinds, as `record`. */
function sameNames(listed: ReadonlyArray<Dirent>, record: FolderRecord): boolean {
  let files = 0
  let dirs = 0
  for (const entry of listed) {
    if (entry.isDirectory()) {
      if (!record.dirs.has(entry.name)) return false
      dirs++
    } else if (entry.isFile()) {
      if (!record.files.has(entry.name)) return false
      files++
    }
  }
  return files === record.files.size && dirs === record.dirs.size
}

function depth(relative: string): number {
  return relative === '' ? 0 : relative.split('/').length
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
