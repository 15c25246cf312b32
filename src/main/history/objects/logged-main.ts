/**
 * Where `main` goes when the write-ahead log is replayed at open (docs/durability.md,
 * "Opening"): a command's commit logs `main`'s new value with its objects, and renames the ref
 * file without `fsync`ing it, so a power cut may leave that file as it was before, empty or
 * gone. Open moves `main` to the newest value logged, but only forward: a sync or a switch
 * that moved `main` durably after the logged commit (whose ref was made durable, the log
 * checkpointed first) must win, and so must whatever git or a person did to it.
 */
import type { LoggedMain, LogRecord } from './object-log'

/**
 * The value `main` must be moved to after a replay, or null to leave it: the newest logged
 * value (largest sequence number) when `current` (the ref file's own value, null when it is
 * missing, empty or garbage) is none, or an ancestor of it through the logged commits (the
 * parents they name included, so the value durable before the first logged commit counts).
 * Never a value equal to `current`, and never null for "no value": `main` is never removed.
 */
export function mainAfterReplay(
  current: string | null,
  records: ReadonlyArray<LogRecord>,
  mains: ReadonlyArray<LoggedMain>,
): string | null {
  let newest: LoggedMain | null = null
  for (const main of mains) if (!newest || main.seq > newest.seq) newest = main
  if (!newest || newest.oid === null || newest.oid === current) return null
  if (current === null) return newest.oid
  return ancestorsThroughLog(newest.oid, records).has(current) ? newest.oid : null
}

/**
 * `tip` and every commit reached from it through the parents of the logged commits (a parent
 * that is not logged is included, not followed: it was durable before the log began).
 */
export function ancestorsThroughLog(tip: string, records: ReadonlyArray<LogRecord>): Set<string> {
  const parents = new Map<string, ReadonlyArray<string>>()
  for (const record of records) {
    if (record.type === 'commit') parents.set(record.oid, parentsOf(record.content))
  }
  const reached = new Set<string>()
  const stack = [tip]
  while (stack.length > 0) {
    const oid = stack.pop()!
    if (reached.has(oid)) continue
    reached.add(oid)
    stack.push(...(parents.get(oid) ?? []))
  }
  return reached
}

// The `parent` lines of a commit's header (before the first empty line).
//
// Sample: `tree <id>\nparent <id>\nparent <id>\nauthor …\n\nmessage`
function parentsOf(content: Buffer): string[] {
  const text = content.toString('latin1')
  const end = text.indexOf('\n\n')
  const found: string[] = []
  for (const line of (end < 0 ? text : text.slice(0, end)).split('\n')) {
    const match = /^parent ([0-9a-f]{40})$/.exec(line)
    if (match) found.push(match[1]!)
  }
  return found
}
