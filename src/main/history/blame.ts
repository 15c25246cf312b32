/**
 * Line provenance ("blame"): for each line of a file at a commit, the commit that last
 * changed it. Read side only.
 *
 * The walk goes back through the commits that touched the file, as `git blame` does: each
 * version is diffed against the one before it (with git's own diff choices, line-diff.ts),
 * the lines a commit added are its own, the others are followed into the older version.
 * It follows renames (Cairn's rename commits, and a file that moved unchanged in any other
 * commit) and restores: a restore that is a plain copy of an earlier version (the file's
 * content is exactly what it was at the commit restored from) hands its lines to that
 * version, so they keep the commit that first wrote them; any other restore is an edit like
 * any other. What a walk found is kept (bounded), so asking again after a new commit only
 * looks at what changed since.
 *
 * Merge commits (sync) have two parents. A merge that took the file as one parent had it
 * hands every line to that parent; otherwise each line goes to the first parent that has it
 * unchanged (this machine's side first, then the other machine's), and only the lines
 * neither had are the merge's own: the markers around both versions of a conflict, or lines
 * the line-by-line merge had to write. That is `git blame`'s rule, so the two agree.
 *
 * A version whose copy in the history is damaged (missing or corrupt) ends the walk there:
 * the lines that would have gone to it stay with the commit after it, marked
 * `damagedBefore` so the view can say they may be older. Such a walk is not kept.
 */
import type { BlameLine, CommitSummary } from '../../shared/types'
import { CairnError } from '../lib/errors'
import type { Logger } from '../lib/logger'
import { isLineText, lineText, notTextError, requireTraceableSize } from './blame-lines'
import { blameBeyondIndex } from './blame-reset'
import { loadBlame, saveBlame } from './blame-store'
import { DamagedHistoryError, readingVersion } from './damage'
import { diffLines, LineTable, type Hunk, type Lines } from './line-diff'
import type { Lookup } from './lookup'
import { segmentsOf, toRelative, toVirtual } from './paths'
import type { Ancestry } from './ancestry'
import { toSummary } from './queries'
import { treeOf, type RepoView } from './read'
import type { IndexEntry } from './side-index'
import { diffNodes } from './tree-state'

export { BLAME_MAX_BYTES, BLAME_MAX_LINES } from './blame-lines'

/** Most file versions whose provenance is kept in memory. */
export const BLAME_CACHE_SIZE = 64

/** The provenance of one file version: for each line, the position of its commit. */
interface Provenance {
  readonly blob: string
  readonly owners: Int32Array
}

/** Lines of the version being looked at, still without a commit: `count` lines of the
 *  target from `target`, which are lines `at…` of this version. */
interface Pending {
  readonly target: number
  readonly at: number
  readonly count: number
}

/** A version of the file during the walk: the commit that wrote it, under which name. */
interface Version {
  readonly position: number
  readonly path: string
  readonly blob: string
  readonly lines: Lines
}

/**
 * A version waiting in the walk, with the lines still looking for their commit. Lines can
 * reach one version along several paths (both sides of a merge lead to the common past), so
 * they come in groups, each in this version's line order.
 */
interface Waiting {
  version: Version
  readonly groups: Pending[][]
}

export interface Blamer {
  blame(path: string, at?: string): Promise<ReadonlyArray<BlameLine>>
}

export interface BlamerOptions {
  /** Where provenance is kept between sessions (`blameDirOf(gitdir)`); null keeps none. */
  readonly saveDir: string | null
  readonly logger: Logger
}

/**
 * Blame over one history; keeps what it found for the next call (and the next session).
 * It reaches the index only through `ancestry` (positions, parents, producers).
 */
export function createBlamer(
  repo: RepoView,
  lookup: Lookup,
  ancestry: Ancestry,
  options: BlamerOptions,
): Blamer {
  const cache = new Map<string, Provenance>()
  // What the save folder holds per path: the position of its version and its provenance.
  const saved = new Map<string, { readonly position: number; readonly provenance: Provenance }>()
  let saveFailed = false
  // Positions kept above belong to one index; a switched history starts them again.
  let generation = ancestry.generation()
  const { producerOf, positionsOf } = ancestry
  const positionOf = (oid: string): number | undefined => {
    const position = ancestry.positionOf(oid)
    return position >= 0 ? position : undefined
  }

  function remember(key: string, provenance: Provenance): void {
    cache.delete(key)
    if (cache.size >= BLAME_CACHE_SIZE) cache.delete(cache.keys().next().value as string)
    cache.set(key, provenance)
  }

  /** The provenance saved for `path` by an earlier session, if it is usable here. */
  function savedFor(path: string): { position: number; provenance: Provenance } | null {
    if (!options.saveDir) return null
    const known = saved.get(path)
    if (known) return known.position >= 0 ? known : null
    const found = loadBlame(options.saveDir, path)
    const at = found ? positionsOf(new Set([found.commit, ...found.owners])) : new Map()
    const position = found ? at.get(found.commit) : undefined
    const owners = found?.owners.map((oid) => at.get(oid) ?? -1) ?? []
    const usable = found && position !== undefined && !owners.includes(-1)
    const entry = usable
      ? { position, provenance: { blob: found.blob, owners: Int32Array.from(owners) } }
      : { position: -1, provenance: { blob: '', owners: new Int32Array(0) } }
    if (saved.size >= BLAME_CACHE_SIZE * 4) saved.delete(saved.keys().next().value as string)
    saved.set(path, entry)
    return usable ? entry : null
  }

  function save(path: string, position: number, provenance: Provenance): void {
    if (!options.saveDir || saveFailed) return
    if ((saved.get(path)?.position ?? -1) >= position) return
    try {
      saveBlame(options.saveDir, {
        path,
        commit: ancestry.oidAt(position),
        blob: provenance.blob,
        owners: Array.from(provenance.owners, (owner) => ancestry.oidAt(owner)),
      })
      saved.set(path, { position, provenance })
    } catch (error) {
      // Only a later session's speed depends on it; say so once.
      saveFailed = true
      options.logger.warn('Could not keep line provenance for later sessions', error)
    }
  }

  /**
   * The lines of `blob`, split by `table`; `like` is a version it will be compared with, whose
   * lines at both ends it may share. Lines are compared as bytes, as git does, so an older
   * version an editor saved in Latin-1, or one that held a NUL byte for a while, keeps the walk
   * going; only the version shown (`utf8`) must be text (no NUL, UTF-8), since its lines are
   * decoded for display.
   */
  async function readLines(
    blob: string,
    table: LineTable,
    like?: Lines,
    utf8 = false,
  ): Promise<Lines | null> {
    const bytes = await repo.store.readBlob(blob)
    if (utf8 && !isLineText(bytes)) return null
    return like ? table.splitLike(bytes, like) : table.split(bytes)
  }

  /** The commit whose version a restore copied, when `entry` is one. */
  function restoreSource(entry: IndexEntry): string | null {
    if (!entry.restoredFrom) return null
    if (entry.command === 'revert') return repo.entry(entry.restoredFrom)?.parent ?? null
    if (
      entry.command === 'restore-file' ||
      entry.command === 'restore-deleted' ||
      entry.command === 'restore-all'
    ) {
      return entry.restoredFrom
    }
    return null
  }

  /** The file's name before `entry`, when `entry` renamed it (or a folder holding it). */
  function renamedFrom(entry: IndexEntry, path: string): string | null {
    const [from, to] = entry.paths
    if (entry.command !== 'rename' || !from || !to) return null
    if (path === to) return from
    if (path.startsWith(`${to}/`)) return from + path.slice(to.length)
    return null
  }

  /**
   * Where a file that `parent` does not have came from in it: a file the commit removed
   * whose content is exactly `blob`. For a merge, failing that, the removed file that shares
   * the most lines with it (at least half, as git's rename detection asks), so a file one
   * machine renamed and the other edited still leads to both histories.
   */
  async function movedFrom(
    entry: IndexEntry,
    parent: string,
    path: string,
    version: { readonly blob: string; readonly lines: Lines },
    table: LineTable,
  ): Promise<{ path: string; blob: string } | null> {
    const name = path.slice(path.lastIndexOf('/') + 1)
    const merge = Boolean(entry.otherParents?.length)
    // What the commit changed against this parent: its `files` for the first parent.
    const changed =
      parent === entry.parent
        ? entry.files
        : (await diffNodes(repo.store, await treeOf(repo, parent), await treeOf(repo, entry.oid)))
            .filter((delta) => delta.before !== null && delta.after === null)
            .map((delta) => toVirtual(delta.path))
    const candidates = changed
      .filter((file) => file !== path)
      .sort((a, b) => {
        // Git prefers a source with the same file name.
        const sameA = a.endsWith(`/${name}`) ? 0 : 1
        const sameB = b.endsWith(`/${name}`) ? 0 : 1
        return sameA - sameB || (a < b ? -1 : a > b ? 1 : 0)
      })
    const removed: Array<{ path: string; blob: string }> = []
    for (const file of candidates) {
      const segments = segmentsOf(toRelative(file))
      const before = await lookup.blobAt(parent, segments)
      if (!before || (await lookup.blobAt(entry.oid, segments)) !== null) continue
      if (before === version.blob) return { path: file, blob: before }
      removed.push({ path: file, blob: before })
    }
    if (!merge) return null
    let best: { path: string; blob: string; shared: number } | null = null
    for (const candidate of removed) {
      const lines = await readLines(candidate.blob, table, version.lines)
      if (!lines) continue
      const shared = sharedLines(lines, version.lines)
      if (shared * 2 < Math.max(lines.count, version.lines.count)) continue
      if (!best || shared > best.shared) best = { ...candidate, shared }
    }
    return best
  }

  async function blame(path: string, at?: string): Promise<ReadonlyArray<BlameLine>> {
    if (ancestry.generation() !== generation) {
      generation = ancestry.generation()
      cache.clear()
      saved.clear()
    }
    const relative = toRelative(path)
    if (relative === '') throw new CairnError('not-a-file', 'Choose a file to trace its lines.')
    const virtual = toVirtual(relative)
    const head = repo.head()
    const oid = at ?? head
    if (!oid) throw new CairnError('not-found', `${virtual} is not in the history.`)
    // A commit reset away outside Cairn (its objects still there) has no place in the index.
    if (!repo.entry(oid)) {
      return blameBeyondIndex(repo, lookup, blame, virtual, oid)
    }
    const atPosition = positionOf(oid) as number
    // Line ids for this walk: each version is compared with the next by numbers.
    const table = new LineTable()
    // Damage in the version traced is told as "the history is damaged at" it; damage met
    // further back only cuts the trace short (`damaged` on the lines).
    const { blob, lines } = await readingVersion(oid, async () => {
      const found = await lookup.blobAt(oid, segmentsOf(relative))
      if (!found) {
        throw new CairnError('not-found', `${virtual} is not a file in that version.`)
      }
      return { blob: found, lines: await readLines(found, table, undefined, true) }
    })
    if (!lines) throw notTextError(virtual)
    requireTraceableSize(virtual, lines.bytes.length, lines.count)
    const producer = producerOf(virtual, atPosition)
    const { owners, cut } =
      producer >= 0
        ? await walk({ position: producer, path: virtual, blob, lines }, table)
        : await unindexed(atPosition, relative, blob, lines.count)
    // A walk cut short by damage is not kept: its owners would outlive the flag.
    if (producer >= 0 && !cut) {
      remember(`${ancestry.oidAt(producer)}\0${virtual}`, { blob, owners })
      save(virtual, producer, { blob, owners })
    }

    const summaries = new Map<number, CommitSummary>()
    const text = Buffer.from(lines.bytes.buffer, lines.bytes.byteOffset, lines.bytes.length)
    const result: BlameLine[] = []
    for (let i = 0; i < lines.count; i++) {
      const position = owners[i] as number
      let summary = summaries.get(position)
      if (!summary) {
        summary = toSummary(ancestry.entry(position))
        summaries.set(position, summary)
      }
      result.push({
        line: i + 1,
        text: lineText(text, lines.starts, i),
        commit: summary,
        ...(cut?.[i] ? { damagedBefore: true } : {}),
      })
    }
    return result
  }

  /**
   * The lines of a file no commit in the index says it changed (one whose trees Cairn could
   * not read, holding a link or a submodule a tool wrote with git, is listed with no files):
   * all given to the oldest of `from`'s first parents that hold this very version, and marked
   * as possibly older, since the index cannot say what came before. Before stop 34 they went
   * to the first commit of the history, which may never have held the file.
   */
  async function unindexed(
    from: number,
    relative: string,
    blob: string,
    count: number,
  ): Promise<{ owners: Int32Array; cut: Uint8Array }> {
    const segments = segmentsOf(relative)
    let position = from
    for (;;) {
      const parent = ancestry.parentPositions(position)[0]
      if (parent === undefined) break
      const found = await orDamaged(() => lookup.blobAt(ancestry.oidAt(parent), segments))
      if (found !== blob) break
      position = parent
    }
    return { owners: new Int32Array(count).fill(position), cut: new Uint8Array(count).fill(1) }
  }

  /**
   * Walks back from `start` until every line of it has its commit: the newest waiting
   * version first, so that every line reaching a version (from each side of a merge) has
   * arrived before the version is looked at.
   */
  async function walk(
    start: Version,
    table: LineTable,
  ): Promise<{ owners: Int32Array; cut: Uint8Array | null }> {
    const owners = new Int32Array(start.lines.count).fill(-1)
    // Lines whose walk ended at a damaged version (created at the first such line).
    let cut: Uint8Array | null = null
    const cutShort = (group: ReadonlyArray<Pending>) => {
      cut ??= new Uint8Array(start.lines.count)
      for (const line of group) cut.fill(1, line.target, line.target + line.count)
    }
    const waiting = new Map<string, Waiting>()
    const wait = (version: Version, group: Pending[]) => {
      if (group.length === 0) return
      const key = `${version.position}\0${version.path}`
      const known = waiting.get(key)
      if (known) known.groups.push(group)
      else waiting.set(key, { version, groups: [group] })
    }
    if (start.lines.count > 0) wait(start, [{ target: 0, at: 0, count: start.lines.count }])

    while (waiting.size > 0) {
      let key = ''
      let next: Waiting | null = null
      for (const [k, item] of waiting) {
        if (!next || item.version.position > next.version.position) {
          key = k
          next = item
        }
      }
      waiting.delete(key)
      await step(next as Waiting, owners, wait, table, cutShort)
    }
    return { owners, cut }
  }

  /** Settles the lines waiting at one version, or hands them to the versions before it. */
  async function step(
    item: Waiting,
    owners: Int32Array,
    wait: (version: Version, group: Pending[]) => void,
    table: LineTable,
    cutShort: (group: ReadonlyArray<Pending>) => void,
  ): Promise<void> {
    const { version, groups } = item
    // The entry's details are read only for the commits that need them (restores, renames,
    // a parent without the file): most steps are plain edits.
    const command = ancestry.index().commandAt(version.position)
    let entry: IndexEntry | null = null
    const entryOf = () => (entry ??= ancestry.entry(version.position))
    const own = (group: ReadonlyArray<Pending>) => {
      for (const line of group) owners.fill(version.position, line.target, line.target + line.count)
    }

    const fromDisk = savedFor(version.path)
    const known =
      cache.get(`${ancestry.oidAt(version.position)}\0${version.path}`) ??
      (fromDisk?.position === version.position ? fromDisk.provenance : undefined)
    if (known && known.blob === version.blob && known.owners.length === version.lines.count) {
      for (const group of groups) {
        for (const line of group) {
          owners.set(known.owners.subarray(line.at, line.at + line.count), line.target)
        }
      }
      return
    }

    // A restore that copied an earlier version as it was: its lines belong to that version.
    const source = RESTORES.has(command) ? restoreSource(entryOf()) : null
    const sourcePosition = source ? positionOf(source) : undefined
    if (source && sourcePosition !== undefined && sourcePosition < version.position) {
      const segments = segmentsOf(toRelative(version.path))
      // A damaged tree there only hides the copy: the restore is then taken as an edit.
      const copied = await orDamaged(() => lookup.blobAt(source, segments))
      if (copied !== DAMAGED && copied === version.blob) {
        const producer = producerOf(version.path, sourcePosition)
        if (producer >= 0) {
          for (const group of groups) wait({ ...version, position: producer }, group)
          return
        }
      }
    }

    // The file's version in each parent, first parent first.
    const parents: Version[] = []
    let damaged = false
    for (const position of ancestry.parentPositions(version.position)) {
      const found = await orDamaged(() => parentVersion(version, position, command, entryOf, table))
      if (found === DAMAGED) damaged = true
      else if (found) parents.push(found)
    }

    // A parent with the very same file takes every line (a merge that kept one side's file).
    const same = parents.find((parent) => parent.blob === version.blob)
    if (same) {
      for (const group of groups) wait(same, group)
      return
    }
    // Each line goes to the first parent that has it unchanged; the rest are this commit's.
    let left = groups
    for (const parent of parents) {
      const hunks = diffLines(parent.lines, version.lines)
      const kept: Pending[][] = []
      for (const group of left) {
        const passed = pass(group, hunks)
        wait(parent, passed.older)
        if (passed.kept.length > 0) kept.push(passed.kept)
      }
      left = kept
    }
    for (const group of left) {
      own(group)
      if (damaged) cutShort(group)
    }
  }

  /** The file's version in the parent at `position` of `version`'s commit, if it has one. */
  async function parentVersion(
    version: Version,
    position: number,
    command: string,
    entryOf: () => IndexEntry,
    table: LineTable,
  ): Promise<Version | null> {
    const parent = ancestry.oidAt(position)
    let path =
      (command === 'rename' && parent === entryOf().parent
        ? renamedFrom(entryOf(), version.path)
        : null) ?? version.path
    let blob = await lookup.blobAt(parent, segmentsOf(toRelative(path)))
    if (!blob && path === version.path) {
      const moved = await movedFrom(entryOf(), parent, version.path, version, table)
      if (moved) ({ path, blob } = moved)
    }
    const lines = !blob
      ? null
      : blob === version.blob
        ? version.lines
        : await readLines(blob, table, version.lines)
    const producer = blob && lines ? producerOf(path, position) : -1
    return blob && lines && producer >= 0 ? { position: producer, path, blob, lines } : null
  }

  return { blame }
}

const DAMAGED = Symbol('damaged')

/** What `read` gives, or DAMAGED when the history's copy of something it read is damaged. */
async function orDamaged<T>(read: () => Promise<T>): Promise<T | typeof DAMAGED> {
  try {
    return await read()
  } catch (error) {
    if (error instanceof DamagedHistoryError) return DAMAGED
    throw error
  }
}

/** The commands whose commit may be a plain copy of an earlier version (`restoreSource`). */
const RESTORES: ReadonlySet<string> = new Set([
  'revert',
  'restore-file',
  'restore-deleted',
  'restore-all',
])

/** How many lines two texts have in common, each line counted as often as both hold it. */
function sharedLines(a: Lines, b: Lines): number {
  const text = (lines: Lines, i: number) =>
    Buffer.from(lines.bytes.buffer, lines.bytes.byteOffset, lines.bytes.length).toString(
      'latin1',
      lines.starts[i],
      lines.starts[i + 1],
    )
  const counts = new Map<string, number>()
  for (let i = 0; i < a.count; i++) counts.set(text(a, i), (counts.get(text(a, i)) ?? 0) + 1)
  let shared = 0
  for (let i = 0; i < b.count; i++) {
    const line = text(b, i)
    const left = counts.get(line) ?? 0
    if (left > 0) {
      shared++
      counts.set(line, left - 1)
    }
  }
  return shared
}

/**
 * Splits the pending lines of a version by the hunks that made it from the older one: the
 * lines inside a hunk were written by this commit (`kept`), the others move to their place
 * in the older version (`older`).
 */
export function pass(
  pending: ReadonlyArray<Pending>,
  hunks: ReadonlyArray<Hunk>,
): { readonly kept: Pending[]; readonly older: Pending[] } {
  const kept: Pending[] = []
  const older: Pending[] = []
  let h = 0
  // Old line = new line + shift, for unchanged lines after the hunks passed so far.
  let shift = 0
  for (const item of pending) {
    let { target, at, count } = item
    while (count > 0) {
      for (;;) {
        const hunk = hunks[h]
        if (!hunk) break
        const end = hunk.newStart + hunk.newCount
        if (hunk.newCount === 0 ? hunk.newStart > at : end > at) break
        shift += hunk.oldCount - hunk.newCount
        h++
      }
      const hunk = hunks[h]
      if (hunk && hunk.newCount > 0 && hunk.newStart <= at) {
        const take = Math.min(count, hunk.newStart + hunk.newCount - at)
        kept.push({ target, at, count: take })
        target += take
        at += take
        count -= take
        continue
      }
      const boundary = hunk ? hunk.newStart : Number.POSITIVE_INFINITY
      const take = Math.min(count, boundary - at)
      const last = older.at(-1)
      if (last && last.target + last.count === target && last.at + last.count === at + shift) {
        older[older.length - 1] = { ...last, count: last.count + take }
      } else {
        older.push({ target, at: at + shift, count: take })
      }
      target += take
      at += take
      count -= take
    }
  }
  return { kept, older }
}
