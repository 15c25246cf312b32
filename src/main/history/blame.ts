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
 */
import type { BlameLine, CommitSummary } from '../../shared/types'
import { CairnError } from '../lib/errors'
import type { Logger } from '../lib/logger'
import { decodeUtf8 } from '../lib/text'
import { loadBlame, saveBlame } from './blame-store'
import { diffLines, splitLines, type Hunk, type Lines } from './line-diff'
import type { Lookup } from './lookup'
import { segmentsOf, toRelative, toVirtual } from './paths'
import { toSummary } from './queries'
import { requireEntry, type RepoView } from './read'
import type { IndexEntry } from './side-index'

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

export interface Blamer {
  blame(path: string, at?: string): Promise<ReadonlyArray<BlameLine>>
}

export interface BlamerOptions {
  /** Where provenance is kept between sessions (`blameDirOf(gitdir)`); null keeps none. */
  readonly saveDir: string | null
  readonly logger: Logger
}

/** Blame over one history; keeps what it found for the next call (and the next session). */
export function createBlamer(repo: RepoView, lookup: Lookup, options: BlamerOptions): Blamer {
  const cache = new Map<string, Provenance>()
  // What the save folder holds per path: the position of its version and its provenance.
  const saved = new Map<string, { readonly position: number; readonly provenance: Provenance }>()
  let saveFailed = false
  // Positions found so far (the index has no lookup by position of its own).
  const positions = new Map<string, number>()

  /** Where commit `oid` is in the history (undefined when it is not there). */
  function positionOf(oid: string): number | undefined {
    return positionsOf(new Set([oid])).get(oid)
  }

  /** The positions of `oids`, in one pass back from the newest commit. */
  function positionsOf(oids: ReadonlySet<string>): Map<string, number> {
    const entries = repo.entries()
    const found = new Map<string, number>()
    const wanted = new Set<string>()
    for (const oid of oids) {
      const known = positions.get(oid)
      if (known !== undefined && entries[known]?.oid === oid) found.set(oid, known)
      else wanted.add(oid)
    }
    for (let i = entries.length - 1; i >= 0 && wanted.size > 0; i--) {
      const oid = (entries[i] as IndexEntry).oid
      if (!wanted.delete(oid)) continue
      found.set(oid, i)
      positions.set(oid, i)
    }
    return found
  }

  /** The newest commit at or before `from` that changed `path`, or -1. */
  function producerOf(path: string, from: number): number {
    // `touches`, inlined: this loop may cross a whole 100,000-commit index.
    const entries = repo.entries()
    const prefix = `${path}/`
    for (let i = Math.min(from, entries.length - 1); i >= 0; i--) {
      const files = (entries[i] as IndexEntry).files
      for (let k = 0; k < files.length; k++) {
        const file = files[k] as string
        if (file === path || file.startsWith(prefix)) return i
      }
    }
    return -1
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
    const entries = repo.entries()
    try {
      saveBlame(options.saveDir, {
        path,
        commit: (entries[position] as IndexEntry).oid,
        blob: provenance.blob,
        owners: Array.from(provenance.owners, (owner) => (entries[owner] as IndexEntry).oid),
      })
      saved.set(path, { position, provenance })
    } catch (error) {
      // Only a later session's speed depends on it; say so once.
      saveFailed = true
      options.logger.warn('Could not keep line provenance for later sessions', error)
    }
  }

  async function readLines(blob: string): Promise<Lines | null> {
    const bytes = await repo.store.readBlob(blob)
    return decodeUtf8(bytes) === null ? null : splitLines(bytes)
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

  /** A file `entry` removed whose content is exactly `blob`: where a moved file came from. */
  async function movedFrom(entry: IndexEntry, path: string, blob: string): Promise<string | null> {
    if (!entry.parent) return null
    const name = path.slice(path.lastIndexOf('/') + 1)
    const candidates = entry.files
      .filter((file) => file !== path)
      .sort((a, b) => {
        // Git prefers a source with the same file name.
        const sameA = a.endsWith(`/${name}`) ? 0 : 1
        const sameB = b.endsWith(`/${name}`) ? 0 : 1
        return sameA - sameB || (a < b ? -1 : a > b ? 1 : 0)
      })
    for (const file of candidates) {
      const segments = segmentsOf(toRelative(file))
      if ((await lookup.blobAt(entry.parent, segments)) !== blob) continue
      if ((await lookup.blobAt(entry.oid, segments)) !== null) continue
      return file
    }
    return null
  }

  async function blame(path: string, at?: string): Promise<ReadonlyArray<BlameLine>> {
    const relative = toRelative(path)
    if (relative === '') throw new CairnError('not-a-file', 'Choose a file to trace its lines.')
    const virtual = toVirtual(relative)
    const head = repo.head()
    const oid = at ?? head
    if (!oid) throw new CairnError('not-found', `${virtual} is not in the history.`)
    requireEntry(repo, oid)
    const atPosition = positionOf(oid) as number
    const blob = await lookup.blobAt(oid, segmentsOf(relative))
    if (!blob) {
      throw new CairnError('not-found', `${virtual} is not a file in that version.`)
    }
    const lines = await readLines(blob)
    if (!lines) {
      throw new CairnError(
        'not-text',
        `${virtual} is not a text file, so it has no lines to trace.`,
      )
    }
    const producer = producerOf(virtual, atPosition)
    const owners = await walk({ position: Math.max(producer, 0), path: virtual, blob, lines })
    if (producer >= 0) {
      remember(`${repo.entries()[producer]?.oid}\0${virtual}`, { blob, owners })
      save(virtual, producer, { blob, owners })
    }

    const entries = repo.entries()
    const summaries = new Map<number, CommitSummary>()
    const text = Buffer.from(lines.bytes.buffer, lines.bytes.byteOffset, lines.bytes.length)
    const result: BlameLine[] = []
    for (let i = 0; i < lines.count; i++) {
      const position = owners[i] as number
      let summary = summaries.get(position)
      if (!summary) {
        summary = toSummary(entries[position] as IndexEntry)
        summaries.set(position, summary)
      }
      let end = lines.starts[i + 1] as number
      if (end > (lines.starts[i] as number) && text[end - 1] === 0x0a) end--
      result.push({
        line: i + 1,
        text: text.toString('utf8', lines.starts[i], end),
        commit: summary,
      })
    }
    return result
  }

  /** Walks back from `start` until every line of it has its commit. */
  async function walk(start: Version): Promise<Int32Array> {
    const owners = new Int32Array(start.lines.count).fill(-1)
    let pending: Pending[] =
      start.lines.count > 0 ? [{ target: 0, at: 0, count: start.lines.count }] : []
    let version = start
    const entries = repo.entries()
    const own = (items: ReadonlyArray<Pending>, position: number) => {
      for (const item of items) owners.fill(position, item.target, item.target + item.count)
    }

    while (pending.length > 0) {
      const entry = entries[version.position] as IndexEntry
      const fromDisk = savedFor(version.path)
      const known =
        cache.get(`${entry.oid}\0${version.path}`) ??
        (fromDisk?.position === version.position ? fromDisk.provenance : undefined)
      if (known && known.blob === version.blob && known.owners.length === version.lines.count) {
        for (const item of pending) {
          owners.set(known.owners.subarray(item.at, item.at + item.count), item.target)
        }
        break
      }

      // A restore that copied an earlier version as it was: its lines belong to that version.
      const source = restoreSource(entry)
      const sourcePosition = source ? positionOf(source) : undefined
      if (source && sourcePosition !== undefined && sourcePosition < version.position) {
        const segments = segmentsOf(toRelative(version.path))
        if ((await lookup.blobAt(source, segments)) === version.blob) {
          const producer = producerOf(version.path, sourcePosition)
          if (producer >= 0) {
            version = { ...version, position: producer }
            continue
          }
        }
      }

      let parentPath = renamedFrom(entry, version.path) ?? version.path
      let parentBlob = entry.parent
        ? await lookup.blobAt(entry.parent, segmentsOf(toRelative(parentPath)))
        : null
      if (!parentBlob && parentPath === version.path) {
        const moved = await movedFrom(entry, version.path, version.blob)
        if (moved) {
          parentPath = moved
          parentBlob = version.blob
        }
      }
      const parentLines = !parentBlob
        ? null
        : parentBlob === version.blob
          ? version.lines
          : await readLines(parentBlob)
      const producer = parentLines ? producerOf(parentPath, version.position - 1) : -1
      if (!parentBlob || !parentLines || producer < 0) {
        // The file starts here (or was binary before): every line left is this commit's.
        own(pending, version.position)
        break
      }
      const hunks = parentLines === version.lines ? [] : diffLines(parentLines, version.lines)
      const passed = pass(pending, hunks)
      own(passed.kept, version.position)
      pending = passed.older
      version = { position: producer, path: parentPath, blob: parentBlob, lines: parentLines }
    }
    return owners
  }

  return { blame }
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
