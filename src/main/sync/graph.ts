/**
 * How the remote's history relates to the local one. Local history is known whole (its
 * commits have positions, parents first); only the commits that came from the remote are
 * walked, so a sync costs what arrived, not the size of the history.
 */

/** What the graph queries need: parents of any stored commit, positions of local ones. */
export interface CommitGraph {
  parents(oid: string): Promise<ReadonlyArray<string>>
  /** Position in local history (parents before children), or -1 when not part of it. */
  position(oid: string): number
}

/** What walking down from a remote commit found. */
export interface Exploration {
  /** Commits reachable from the tip that local history lacks. */
  readonly fresh: ReadonlySet<string>
  /** The local commits the walk reached first (the newest shared history). */
  readonly frontier: ReadonlyArray<string>
}

export async function explore(graph: CommitGraph, tip: string): Promise<Exploration> {
  const fresh = new Set<string>()
  const frontier = new Set<string>()
  const stack = [tip]
  while (stack.length > 0) {
    const oid = stack.pop() as string
    if (graph.position(oid) >= 0) {
      frontier.add(oid)
      continue
    }
    if (fresh.has(oid)) continue
    fresh.add(oid)
    for (const parent of await graph.parents(oid)) stack.push(parent)
  }
  return { fresh, frontier: [...frontier] }
}

/**
 * The best common ancestor of local history and `tip` (null when they share nothing): the
 * latest of the shared commits the walk reached, which no other of them descends from.
 */
export function mergeBaseOf(graph: CommitGraph, found: Exploration): string | null {
  let best: string | null = null
  for (const oid of found.frontier) {
    if (best === null || graph.position(oid) > graph.position(best)) best = oid
  }
  return best
}

/** True when `ancestor` is `tip` or one of its ancestors. */
export async function descendsFrom(
  graph: CommitGraph,
  found: Exploration,
  ancestor: string,
): Promise<boolean> {
  if (found.fresh.has(ancestor)) return true
  const floor = graph.position(ancestor)
  if (floor < 0) return false
  // Down local history from the frontier, never below the ancestor's own position.
  const seen = new Set<string>()
  const stack = [...found.frontier]
  while (stack.length > 0) {
    const oid = stack.pop() as string
    if (oid === ancestor) return true
    if (seen.has(oid) || graph.position(oid) <= floor) continue
    seen.add(oid)
    for (const parent of await graph.parents(oid)) stack.push(parent)
  }
  return false
}

/** Commits walked at most to tell whether two merges know of each other. */
const MAX_RELATION_WALK = 10_000

/**
 * Whether one of two local commits is an ancestor of the other (or the same). Unknown (a
 * commit outside local history, or more commits between them than it walks) answers true:
 * the caller then keeps what it assumed before.
 */
export async function onOneLine(graph: CommitGraph, a: string, b: string): Promise<boolean> {
  if (a === b) return true
  const [older, newer] = graph.position(a) <= graph.position(b) ? [a, b] : [b, a]
  const floor = graph.position(older)
  if (floor < 0) return true
  const seen = new Set<string>()
  const stack = [...(await graph.parents(newer))]
  while (stack.length > 0) {
    const oid = stack.pop() as string
    if (oid === older) return true
    if (seen.has(oid) || graph.position(oid) <= floor) continue
    if (seen.size >= MAX_RELATION_WALK) return true
    seen.add(oid)
    for (const parent of await graph.parents(oid)) stack.push(parent)
  }
  return false
}
