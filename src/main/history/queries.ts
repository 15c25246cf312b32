import type { CommitSummary, LogPage } from '../../shared/types'
import type { NewestFirst } from './ancestry'
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
    ...(entry.author !== undefined ? { author: entry.author } : {}),
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
export function indexOrder(size: number): NewestFirst {
  return {
    length: size,
    at: (k) => size - 1 - k,
    indexOf: (position) => (position >= 0 && position < size ? size - 1 - position : -1),
  }
}

/**
 * One page of the timeline, newest first (in `order`, the timeline's order: see
 * `ancestry.ts`), with the number of matching entries. Filters run on the index's fixed
 * records (actor, conversation, file ids); only the page's entries are read in full.
 */
export function queryLog(
  index: IndexFile,
  query: LogQuery,
  order: NewestFirst = indexOrder(index.size),
): LogPage {
  const page: CommitSummary[] = []
  const end = query.offset + query.limit
  const unfiltered = !query.path && !query.conversationId && !query.actor
  if (unfiltered) {
    for (let k = query.offset; k < order.length && page.length < query.limit; k++) {
      page.push(toSummary(index.at(order.at(k))))
    }
    return { entries: page, total: index.size }
  }
  const conversation = query.conversationId ? index.conversationKey(query.conversationId) : null
  if (conversation === -1) return { entries: [], total: 0 }
  // A path filter follows the file (or folder) back through renames, as `fileHistoryOf` and
  // `git log --follow` do: "Show history" after Claude moved a note into a folder must still
  // list the edits made under its old name (review hunt12-story D1). The name is followed on
  // every commit, also those the actor or conversation filters leave out.
  let current = query.path ?? null
  let matchesPath = current ? index.pathMatcher(current) : null
  let total = 0
  for (let k = 0; k < order.length; k++) {
    const i = order.at(k)
    if (matchesPath && !matchesPath(i)) continue
    const shown =
      (!query.actor || index.actorAt(i) === query.actor) &&
      (conversation === null || index.conversationKeyAt(i) === conversation)
    if (shown) {
      if (total >= query.offset && total < end) page.push(toSummary(index.at(i)))
      total++
    }
    // Only a rename changes the name: the other entries' details are not read.
    if (current !== null && index.commandAt(i) === 'rename') {
      const before = nameBefore(index.at(i), current)
      if (before !== current) {
        current = before
        matchesPath = index.pathMatcher(current)
      }
    }
  }
  return { entries: page, total }
}

/**
 * Every commit that changed the file at `path`, newest first (in `order`), following it back
 * through renames (of the file or of a folder holding it); the deletion is included.
 */
export function fileHistoryOf(
  index: IndexFile,
  path: string,
  order: NewestFirst = indexOrder(index.size),
): ReadonlyArray<CommitSummary> {
  const result: CommitSummary[] = []
  let current = path
  let matches = index.pathMatcher(current)
  for (let k = 0; k < order.length; k++) {
    const i = order.at(k)
    if (!matches(i)) continue
    const entry = index.at(i)
    result.push(toSummary(entry))
    const before = nameBefore(entry, current)
    if (before !== current) {
      current = before
      matches = index.pathMatcher(current)
    }
  }
  return result
}

/**
 * The commits Claude's calls `toolUseIds` made in the conversation `conversationId`, by tool
 * use id (a call that made none is absent). Reads the side index newest first: the conversation
 * is matched on each entry's fixed record (one 32-bit read per commit, no details), and only
 * that conversation's own entries are read in full, until every id is found. A conversation
 * that made no commit is answered at once (its name is not in the index). The calls were made
 * at `since` (ms) or later: the walk stops after a run of `OLD_RUN_LIMIT` commits dated before
 * it (as `changesSince`: another machine's clock may date a commit on top far back), so a call
 * that made no commit costs the recent history only.
 */
export function toolUseCommitsOf(
  index: IndexFile,
  conversationId: string,
  toolUseIds: ReadonlyArray<string>,
  since = Number.NEGATIVE_INFINITY,
): ReadonlyMap<string, CommitSummary> {
  const found = new Map<string, CommitSummary>()
  const wanted = new Set(toolUseIds)
  const conversation = wanted.size > 0 ? index.conversationKey(conversationId) : -1
  if (conversation === -1) return found
  let older = 0
  for (let i = index.size - 1; i >= 0 && found.size < wanted.size; i--) {
    if (index.timeAt(i) >= since) older = 0
    else if (++older >= OLD_RUN_LIMIT) break
    if (index.conversationKeyAt(i) !== conversation) continue
    const entry = index.at(i)
    const id = entry.toolUseId
    // The newest commit of an id is its own: a call commits once (a retried commit is the same).
    if (id !== null && wanted.has(id) && !found.has(id)) found.set(id, toSummary(entry))
  }
  return found
}

/** `path`'s name before `entry`: the old name when `entry` renamed it or a folder above it. */
export function nameBefore(entry: IndexEntry, path: string): string {
  const [from, to] = entry.paths
  if (entry.command !== 'rename' || !from || !to) return path
  if (path === to) return from
  if (path.startsWith(`${to}/`)) return from + path.slice(to.length)
  return path
}

/**
 * How many commits in a row dated before the window `changesSince` reads past before it
 * stops. Commit times from other machines do not grow along ancestry (a clock days behind, or
 * a commit dated back on purpose): one such commit on top must not hide the person's edit
 * below it (review hunt11 D9). The run keeps the cost to the recent history.
 */
export const OLD_RUN_LIMIT = 1_000

/**
 * The commits made at `since` or later that changed `path` (or anything under it), newest
 * first, following it back through renames. Reads back from the newest commit and stops after
 * a run of `OLD_RUN_LIMIT` older ones, so its cost is the recent history only (times and file
 * ids come from the index's records). In the timeline's order, so that commits another machine
 * made earlier, joined by a merge, do not hide this machine's recent ones.
 */
export function changesSince(
  index: IndexFile,
  path: string,
  since: number,
  order: NewestFirst = indexOrder(index.size),
): ReadonlyArray<CommitSummary> {
  const found: CommitSummary[] = []
  let current = path
  let matches = index.pathMatcher(current)
  let oldRun = 0
  for (let k = 0; k < order.length; k++) {
    const i = order.at(k)
    if (index.timeAt(i) < since) {
      if (++oldRun >= OLD_RUN_LIMIT) break
      continue
    }
    oldRun = 0
    if (!matches(i)) continue
    const entry = index.at(i)
    found.push(toSummary(entry))
    // Followed back through renames, as a file's history is: what was written to it under its
    // old name (the person's edit, before Claude renamed it) counts.
    const before = nameBefore(entry, current)
    if (before !== current) {
      current = before
      matches = index.pathMatcher(current)
    }
  }
  return found
}
