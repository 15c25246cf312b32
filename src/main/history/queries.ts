import type { CommitSummary, LogPage } from '../../shared/types'
import { reviewFactsOf } from './commit-message'
import type { IndexFile } from './index-file'
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

/**
 * One page of the timeline, newest first, with the number of matching entries. Filters run
 * on the index's fixed records (actor, conversation, file ids); only the page's entries are
 * read in full.
 */
export function queryLog(index: IndexFile, query: LogQuery): LogPage {
  const page: CommitSummary[] = []
  const end = query.offset + query.limit
  const unfiltered = !query.path && !query.conversationId && !query.actor
  if (unfiltered) {
    for (let i = index.size - 1 - query.offset; i >= 0 && page.length < query.limit; i--) {
      page.push(toSummary(index.at(i)))
    }
    return { entries: page, total: index.size }
  }
  const conversation = query.conversationId ? index.conversationKey(query.conversationId) : null
  if (conversation === -1) return { entries: [], total: 0 }
  const matchesPath = query.path ? index.pathMatcher(query.path) : null
  let total = 0
  for (let i = index.size - 1; i >= 0; i--) {
    if (query.actor && index.actorAt(i) !== query.actor) continue
    if (conversation !== null && index.conversationKeyAt(i) !== conversation) continue
    if (matchesPath && !matchesPath(i)) continue
    if (total >= query.offset && total < end) page.push(toSummary(index.at(i)))
    total++
  }
  return { entries: page, total }
}

/**
 * Every commit that changed the file at `path`, newest first, following it back through
 * renames (of the file or of a folder holding it); the deletion is included.
 */
export function fileHistoryOf(index: IndexFile, path: string): ReadonlyArray<CommitSummary> {
  const result: CommitSummary[] = []
  let current = path
  let matches = index.pathMatcher(current)
  for (let i = index.size - 1; i >= 0; i--) {
    if (!matches(i)) continue
    const entry = index.at(i)
    result.push(toSummary(entry))
    const [from, to] = entry.paths
    if (entry.command === 'rename' && from && to) {
      const before = current
      if (current === to) current = from
      else if (current.startsWith(`${to}/`)) current = from + current.slice(to.length)
      if (current !== before) matches = index.pathMatcher(current)
    }
  }
  return result
}

/**
 * The commits made at `since` or later that changed `path` (or anything under it), newest
 * first. Reads back from the newest commit and stops at the first older one, so its cost is
 * the recent history only (times and file ids come from the index's records).
 */
export function changesSince(
  index: IndexFile,
  path: string,
  since: number,
): ReadonlyArray<CommitSummary> {
  const found: CommitSummary[] = []
  const matches = index.pathMatcher(path)
  for (let i = index.size - 1; i >= 0; i--) {
    if (index.timeAt(i) < since) break
    if (matches(i)) found.push(toSummary(index.at(i)))
  }
  return found
}
