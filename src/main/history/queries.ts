import type { CommitSummary, LogPage } from '../../shared/types'
import type { NewestFirst } from './ancestry'
import { reviewFactsOf } from './commit-message'
import type { IndexEntry } from './side-index'
import type { LogQuery } from './types'

/** Drops the index-only fields. */
export function toSummary(entry: IndexEntry): CommitSummary {
  return {
    oid: entry.oid,
    parent: entry.parent,
    time: entry.time,
    actor: entry.actor,
    command: entry.command,
    subject: entry.subject,
    paths: entry.paths,
    conversationId: entry.conversationId,
    toolUseId: entry.toolUseId,
    overwrite: entry.overwrite,
    restoredFrom: entry.restoredFrom,
    ...(entry.otherParents?.length ? { otherParents: entry.otherParents } : {}),
    ...(entry.machine ? { machine: entry.machine } : {}),
    ...reviewFactsOf(entry),
  }
}

/** True when the commit changed `path` (a file) or anything under it (a folder). */
export function touches(entry: IndexEntry, path: string): boolean {
  const prefix = `${path}/`
  for (const file of entry.files) if (file === path || file.startsWith(prefix)) return true
  return false
}

/** The index's own order, newest last: right for a history that is one line of commits. */
export function indexOrder(entries: ReadonlyArray<IndexEntry>): NewestFirst {
  const length = entries.length
  return {
    length,
    at: (k) => length - 1 - k,
    indexOf: (position) => (position >= 0 && position < length ? length - 1 - position : -1),
  }
}

/**
 * One page of the timeline, newest first (in `order`, the timeline's order: see
 * `ancestry.ts`), with the number of matching entries.
 */
export function queryLog(
  entries: ReadonlyArray<IndexEntry>,
  query: LogQuery,
  order: NewestFirst = indexOrder(entries),
): LogPage {
  const page: CommitSummary[] = []
  const end = query.offset + query.limit
  const unfiltered = !query.path && !query.conversationId && !query.actor
  if (unfiltered) {
    for (let k = query.offset; k < order.length && page.length < query.limit; k++) {
      page.push(toSummary(entries[order.at(k)] as IndexEntry))
    }
    return { entries: page, total: entries.length }
  }
  let total = 0
  for (let k = 0; k < order.length; k++) {
    const entry = entries[order.at(k)] as IndexEntry
    if (query.actor && entry.actor !== query.actor) continue
    if (query.conversationId && entry.conversationId !== query.conversationId) continue
    if (query.path && !touches(entry, query.path)) continue
    if (total >= query.offset && total < end) page.push(toSummary(entry))
    total++
  }
  return { entries: page, total }
}

/**
 * Every commit that changed the file at `path`, newest first, following it back through
 * renames (of the file or of a folder holding it); the deletion is included.
 */
export function fileHistoryOf(
  entries: ReadonlyArray<IndexEntry>,
  path: string,
  order: NewestFirst = indexOrder(entries),
): ReadonlyArray<CommitSummary> {
  const result: CommitSummary[] = []
  let current = path
  for (let k = 0; k < order.length; k++) {
    const entry = entries[order.at(k)] as IndexEntry
    if (!touches(entry, current)) continue
    result.push(toSummary(entry))
    const [from, to] = entry.paths
    if (entry.command === 'rename' && from && to) {
      if (current === to) current = from
      else if (current.startsWith(`${to}/`)) current = from + current.slice(to.length)
    }
  }
  return result
}

/**
 * The commits made at `since` or later that changed `path` (or anything under it), newest
 * first. Reads back from the newest commit and stops at the first older one, so its cost is
 * the recent history only. In the timeline's order, so that commits another machine made
 * earlier, joined by a merge, do not hide this machine's recent ones.
 */
export function changesSince(
  entries: ReadonlyArray<IndexEntry>,
  path: string,
  since: number,
  order: NewestFirst = indexOrder(entries),
): ReadonlyArray<CommitSummary> {
  const found: CommitSummary[] = []
  for (let k = 0; k < order.length; k++) {
    const entry = entries[order.at(k)] as IndexEntry
    if (entry.time < since) break
    if (touches(entry, path)) found.push(toSummary(entry))
  }
  return found
}
