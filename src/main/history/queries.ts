import type { CommitSummary, LogPage } from '../../shared/types'
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

/** One page of the timeline, newest first, with the number of matching entries. */
export function queryLog(entries: ReadonlyArray<IndexEntry>, query: LogQuery): LogPage {
  const page: CommitSummary[] = []
  const end = query.offset + query.limit
  const unfiltered = !query.path && !query.conversationId && !query.actor
  if (unfiltered) {
    for (let i = entries.length - 1 - query.offset; i >= 0 && page.length < query.limit; i--) {
      page.push(toSummary(entries[i] as IndexEntry))
    }
    return { entries: page, total: entries.length }
  }
  let total = 0
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as IndexEntry
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
): ReadonlyArray<CommitSummary> {
  const result: CommitSummary[] = []
  let current = path
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as IndexEntry
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
 * the recent history only.
 */
export function changesSince(
  entries: ReadonlyArray<IndexEntry>,
  path: string,
  since: number,
): ReadonlyArray<CommitSummary> {
  const found: CommitSummary[] = []
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as IndexEntry
    if (entry.time < since) break
    if (touches(entry, path)) found.push(toSummary(entry))
  }
  return found
}
