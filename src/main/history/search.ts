/**
 * "When did this text appear or disappear?": the commits whose diff adds or removes a text,
 * like `git log -S` (a commit matches when a file it changed holds the text a different
 * number of times after it than before; a pure rename matches nothing). Read side only.
 *
 * A merge commit (sync) matches only for a file whose count differs from what every parent
 * had: taking a text from the other machine is not adding it (the commit that wrote it there
 * is the one found), but the markers of a conflict kept in the file, or a line the merge had
 * to write, are the merge's own.
 *
 * A search runs in pages, newest commits first in the timeline's order: each call scans for
 * about `budgetMs` and says where to go on, so the caller shows progress and can stop at any
 * time. What was counted (per blob) is kept for the search's next page.
 *
 * A version the history's copy of is damaged (missing or corrupt) cannot be counted: the
 * search passes over that file in the commits that wrote or replaced it, goes on with the
 * rest, and says in `damaged` how many such file changes it passed over.
 */
import type { HistorySearchHit, HistorySearchPage } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { DamagedHistoryError } from './damage'
import type { Ancestry } from './ancestry'
import type { ChangeLog, FileBlobs } from './change-log'
import { toSummary } from './queries'
import type { RepoView } from './read'
import type { SearchQuery } from './types'

/**
 * A file version's bytes (null: damaged), with its text without case once a search that
 * ignores case asked for it. A search that minds case counts the bytes themselves, as
 * `git log -S` does: nothing is decoded.
 */
interface Version {
  readonly bytes: Buffer | null
  lower?: string
  readonly damaged?: boolean
}

/** The count kept for a version that cannot be read. */
const DAMAGED = -1

/** Time one page may scan before it returns what it found so far. */
export const SEARCH_PAGE_MS = 120

export interface HistorySearcher {
  search(query: SearchQuery): Promise<HistorySearchPage>
}

/** Most bytes of file text kept between searches (the texts searched most recently). */
export const SEARCH_TEXT_CACHE = 16_000_000

/**
 * A searcher over one history; remembers the counts of the latest search it ran, and the
 * texts of the versions it read (bounded), so that searching again reads little.
 */
export function createSearcher(
  repo: RepoView,
  ancestry: Ancestry,
  changes: ChangeLog,
): HistorySearcher {
  // Occurrences per blob for the text searched last (the next page reuses them).
  let counted: { readonly key: string; readonly counts: Map<string, number> } | null = null
  const texts = new Map<string, Version>()
  let cachedBytes = 0

  async function textOf(blob: string): Promise<Version> {
    const known = texts.get(blob)
    if (known) {
      texts.delete(blob)
      texts.set(blob, known)
      return known
    }
    let entry: Version
    try {
      // A version holding a NUL byte is counted too, as `git log -S` counts it: taken as no
      // text, turning a file binary read as removing every text in it, and deleting it later
      // as removing nothing.
      entry = { bytes: Buffer.from(await repo.store.readBlob(blob)) }
    } catch (error) {
      if (!(error instanceof DamagedHistoryError)) throw error
      // Not kept: a repaired history (sync brings the object back) is read again.
      return { bytes: null, damaged: true }
    }
    texts.set(blob, entry)
    cachedBytes += entry.bytes?.length ?? 0
    while (cachedBytes > SEARCH_TEXT_CACHE && texts.size > 1) {
      const [oldest, value] = texts.entries().next().value as [string, Version]
      texts.delete(oldest)
      cachedBytes -= value.bytes?.length ?? 0
    }
    return entry
  }

  function countsFor(query: SearchQuery): Map<string, number> {
    const key = `${query.matchCase ? 'case' : 'nocase'}\0${query.text}`
    if (counted?.key !== key) counted = { key, counts: new Map() }
    return counted.counts
  }

  /**
   * The blobs of the files the commit at `position` changed. A commit with one parent in the
   * index is answered from its id, its parent's and its file ids alone: its entry's details (a
   * read, a checksum and a parse each, for every commit of every search, and for the first
   * search its record besides) are read for a hit only. Anything else (a merge, a first commit,
   * one whose parent is beyond the index) goes through its whole entry.
   */
  function changesAt(
    position: number,
  ): Promise<ReadonlyArray<FileBlobs>> | ReadonlyArray<FileBlobs> {
    const index = ancestry.index()
    if (!index.isMergeAt(position)) {
      const oid = index.oidAt(position)
      const files = index.filesAt(position)
      const kept = changes.kept(oid, files)
      if (kept) return kept
      const parent = index.parentAt(position)
      if (parent >= 0) return changes.of({ oid, parent: index.oidAt(parent), files })
    }
    return changes.of(ancestry.entry(position))
  }

  return {
    async search(query) {
      const budgetMs = query.budgetMs ?? SEARCH_PAGE_MS
      const order = ancestry.newestFirst()
      const total = order.length
      // `k`: how many commits of the timeline's order are behind (newest first).
      let k = 0
      if (query.before !== undefined) {
        const shown = order.indexOf(ancestry.positionOf(query.before))
        if (shown < 0) {
          throw new CairnError('not-found', 'That search can no longer go on: search again.')
        }
        k = shown + 1
      }
      const counts = countsFor(query)
      const needle = query.matchCase ? query.text : foldCase(query.text)
      // The text as UTF-8, for a search that minds case; a text that is not whole Unicode (a
      // lone surrogate) has no UTF-8 of its own and is looked for in the decoded text.
      const needleBytes = Buffer.from(needle, 'utf8')
      const byBytes = query.matchCase && needleBytes.toString('utf8') === needle
      // The count of a version, or DAMAGED when the history's copy of it cannot be read.
      const occurrences = async (blob: string | null): Promise<number> => {
        if (!blob) return 0
        const known = counts.get(blob)
        if (known !== undefined) return known
        const version = await textOf(blob)
        let count = version.damaged ? DAMAGED : 0
        if (version.bytes !== null) {
          if (byBytes) count = countText<Buffer>(version.bytes, needleBytes)
          else if (query.matchCase) count = countText(version.bytes.toString('utf8'), needle)
          else {
            version.lower ??= foldCase(version.bytes.toString('utf8'))
            count = countText(version.lower, needle)
          }
        }
        counts.set(blob, count)
        return count
      }

      const hits: HistorySearchHit[] = []
      let damaged = 0
      const started = performance.now()
      for (; k < total; k++) {
        const position = order.at(k)
        const files: Array<{ path: string; change: 'added' | 'removed' }> = []
        for (const side of movedUnchanged(await changesAt(position))) {
          const before = await occurrences(side.before)
          const after = await occurrences(side.after)
          if (before === DAMAGED || after === DAMAGED) {
            damaged++
            continue
          }
          if (before === after) continue
          // A merge that took this file's text as another parent had it added nothing.
          let taken = false
          for (const other of side.others ?? []) {
            // A damaged other side cannot show the text was taken from it.
            if ((await occurrences(other)) === after) taken = true
          }
          if (!taken) files.push({ path: side.path, change: after > before ? 'added' : 'removed' })
        }
        if (files.length > 0) hits.push({ commit: toSummary(ancestry.entry(position)), files })
        if (performance.now() - started >= budgetMs && k < total - 1) {
          k++
          break
        }
      }
      changes.flush()
      const done = k >= total
      return {
        hits,
        // The page stopped before this commit: the next one starts with the one older.
        next: done ? null : ancestry.oidAt(order.at(k - 1)),
        scanned: k,
        total,
        damaged,
      }
    },
  }
}

/**
 * The changes of a commit without the files that only moved: a removed file and an added
 * one with the same content are one file renamed (git pairs them the same way), so the
 * text in it was neither removed nor added.
 */
function movedUnchanged<T extends { before: string | null; after: string | null }>(
  sides: ReadonlyArray<T>,
): ReadonlyArray<T> {
  const added = new Map<string, number[]>()
  sides.forEach((side, i) => {
    if (!side.before && side.after) added.set(side.after, [...(added.get(side.after) ?? []), i])
  })
  const moved = new Set<number>()
  sides.forEach((side, i) => {
    if (!side.before || side.after) return
    const target = added.get(side.before)?.shift()
    if (target === undefined) return
    moved.add(target)
    moved.add(i)
  })
  return sides.filter((_, i) => !moved.has(i))
}

/** Occurrences of `needle` in `haystack`, not overlapping (as git's pickaxe counts). */
/** The two capitals whose JavaScript lower case is not one letter for one letter. */
const NOT_ONE_FOR_ONE = /[\u0130\u03a3]/

/**
 * Text without case, one letter for one letter, as `git log -S -i` compares it (each character
 * by its own lower case, as the C library's towlower does): "İ" (U+0130) stays itself rather
 * than becoming "i" plus a combining dot, so "i̇stanbul" does not find "İstanbul" (git finds
 * nothing either), and "Σ" is always "σ", never the final "ς" that JavaScript picks at a
 * word's end. Everything else is `toLowerCase`, which maps one for one.
 */
export function foldCase(text: string): string {
  if (!NOT_ONE_FOR_ONE.test(text)) return text.toLowerCase()
  return text
    .split(/([\u0130\u03a3])/)
    .map((part, i) => (i % 2 === 0 ? part.toLowerCase() : part === '\u03a3' ? '\u03c3' : part))
    .join('')
}

/** Occurrences of `needle` in `haystack` (text, or bytes as `git log -S` counts them), not overlapping. */
function countText<N extends { readonly length: number }>(
  haystack: { indexOf(needle: N, from?: number): number },
  needle: N,
): number {
  let count = 0
  for (
    let at = haystack.indexOf(needle);
    at >= 0;
    at = haystack.indexOf(needle, at + needle.length)
  ) {
    count++
  }
  return count
}
