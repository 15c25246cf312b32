/**
 * Finding the newest commit of a history whose `refs/heads/main` is missing, empty, garbage or
 * points at a damaged commit: from the side index, then from the commit objects themselves.
 */

import path from 'node:path'
import { constants, inflateSync } from 'node:zlib'
import { disk, isCode, isNotPlainFile, listNames, readPlainFile } from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { DamagedHistoryError } from './damage'
import { isOid, readTextOrNull } from './main-ref'
import type { ObjectStore, RawCommit } from './object-store'

/** True when `oid` is a commit that can be read. */
export async function isReadableCommit(store: ObjectStore, oid: string): Promise<RawCommit | null> {
  try {
    return await store.readCommit(oid)
  } catch (error) {
    if (error instanceof DamagedHistoryError) return null
    throw error
  }
}

/**
 * The newest commit that can be found without the ref: the newest intact commit of the side
 * index, followed forward through commit objects the index had not recorded yet (a kill
 * between the ref update and the index append); without an index, the tip of the longest
 * chain among all commit objects. Null when there is no commit to find.
 *
 * A history that syncs holds other machines' commits too: a remote-tracking ref may be ahead
 * of `main` (fetched, not merged yet) and `refs/cairn/backups/*` keep older histories. Their
 * tips are never taken for this machine's while one of its own is there: going forward, a
 * child the other refs do not reach is preferred; among tips, one no other ref names wins,
 * then one the remote-tracking ref names (main after a push or a fast-forward), a backup last.
 * Nothing is removed: the other refs and what they reach stay as they were.
 */
export async function findLostTip(
  store: ObjectStore,
  gitdir: string,
  index: { readonly size: number; oidAt(i: number): string } | null,
): Promise<string | null> {
  let base: string | null = null
  for (let i = (index?.size ?? 0) - 1; i >= 0; i--) {
    const oid = index!.oidAt(i)
    if (await isReadableCommit(store, oid)) {
      base = oid
      break
    }
  }
  // Descendants of the base were written after it: only objects as new as its file are read.
  const since = base ? mtimeOf(gitdir, base) : null
  const commits = await commitObjects(store, gitdir, since)
  const children = new Map<string, RawCommit[]>()
  // A merge commit is a child of each of its parents: found from either side.
  for (const commit of commits.values()) {
    for (const parent of commit.parents) {
      const list = children.get(parent) ?? []
      list.push(commit)
      children.set(parent, list)
    }
  }
  const others = otherRefs(gitdir)
  if (base) return followChildren(base, children, reachedFrom(others, commits))
  // No index: every commit that is nobody's parent is a tip; the one no other ref names wins,
  // then the longest chain (of first parents), then the newest.
  const named = new Map<string, number>()
  for (const ref of others) named.set(ref.oid, Math.max(named.get(ref.oid) ?? 0, ref.rank))
  let best: { oid: string; rank: number; length: number; time: number } | null = null
  for (const commit of commits.values()) {
    if (children.has(commit.oid)) continue
    const rank = named.get(commit.oid) ?? 0
    let length = 0
    for (
      let at: RawCommit | undefined = commit;
      at;
      at = at.parent ? commits.get(at.parent) : undefined
    ) {
      length++
    }
    const better =
      !best ||
      rank < best.rank ||
      (rank === best.rank &&
        (length > best.length || (length === best.length && commit.timestamp > best.time)))
    if (better) best = { oid: commit.oid, rank, length, time: commit.timestamp }
  }
  return best?.oid ?? null
}

/**
 * The newest commit of this history when `main` names one of its older commits: the side
 * index holds newer commits that descend from it (its newest entry's chain of first parents
 * passes through `main`'s), and the newest entry can be read. That is a `main` left behind
 * its own history, never Cairn's doing (each of Cairn's moves of `main` appends to the index
 * or replaces it): the loose ref file lost and `packed-refs`' stale value read in its place,
 * or the ref put back by hand or by a restored backup. Null when `main` is the newest, or not
 * in the index, or the newer entries do not descend from it (another history).
 */
export async function newerDescendant(
  store: ObjectStore,
  gitdir: string,
  index: {
    readonly size: number
    oidAt(i: number): string
    positionOf(oid: string): number
    parentAt(i: number): number
  },
  head: string,
): Promise<string | null> {
  const newest = index.size - 1
  // The usual open: `main` is the newest entry (no hash table of positions is built for it).
  if (newest < 0 || index.oidAt(newest) === head) return null
  const at = index.positionOf(head)
  if (at < 0 || at >= newest) return null
  let i = newest
  while (i > at) {
    const parent = index.parentAt(i)
    // A record naming a parent that is not older than itself is damage: no walk forward.
    if (parent >= i) return null
    i = parent
  }
  if (i !== at || !(await isReadableCommit(store, index.oidAt(newest)))) return null
  // Commits newer than the index (a kill between the ref and the index append) too.
  const tip = await findLostTip(store, gitdir, index)
  return tip && tip !== head ? tip : null
}

function followChildren(
  base: string,
  children: ReadonlyMap<string, RawCommit[]>,
  foreign: ReadonlySet<string>,
): string {
  let tip = base
  const seen = new Set([base])
  for (;;) {
    const next = children.get(tip)
    if (!next || next.length === 0) return tip
    // Usually one child; should there be more (a merge and the commit it joined, or commits
    // fetched from another machine), one no other ref reaches is this machine's, and the
    // newest is the one Cairn made last.
    const child = [...next].sort(
      (a, b) =>
        Number(foreign.has(a.oid)) - Number(foreign.has(b.oid)) || b.timestamp - a.timestamp,
    )[0]!
    if (seen.has(child.oid)) return tip
    seen.add(child.oid)
    tip = child.oid
  }
}

/** A ref other than `main`: 1 for the remote-tracking ref (and any other), 2 for a backup. */
interface OtherRef {
  readonly name: string
  readonly oid: string
  readonly rank: 1 | 2
}

const BACKUPS = 'refs/cairn/backups/'

/** Every ref but `refs/heads/main` that names a commit id, loose or in `packed-refs`. */
export function otherRefs(gitdir: string): OtherRef[] {
  const found = new Map<string, string>()
  const walk = (relative: string): void => {
    for (const name of listNames(path.join(gitdir, relative))) {
      const child = `${relative}/${name}`
      // Null for a folder of refs.
      const text = readTextOrNull(path.join(gitdir, child))
      if (text === null) walk(child)
      else if (isOid(text.trim())) found.set(child, text.trim())
    }
  }
  walk('refs')
  const packed = readTextOrNull(path.join(gitdir, 'packed-refs'))
  for (const line of packed?.split('\n') ?? []) {
    const [oid, name] = line.trim().split(' ')
    if (oid && name && isOid(oid) && !found.has(name)) found.set(name, oid)
  }
  found.delete('refs/heads/main')
  return [...found].map(([name, oid]) => ({ name, oid, rank: name.startsWith(BACKUPS) ? 2 : 1 }))
}

// The commits among `commits` that the other refs reach, through every parent.
function reachedFrom(
  refs: ReadonlyArray<OtherRef>,
  commits: ReadonlyMap<string, RawCommit>,
): Set<string> {
  const reached = new Set<string>()
  const stack = refs.map((ref) => ref.oid)
  while (stack.length > 0) {
    const oid = stack.pop()!
    const commit = commits.get(oid)
    if (!commit || reached.has(oid)) continue
    reached.add(oid)
    stack.push(...commit.parents)
  }
  return reached
}

// Every readable commit among the loose objects (modified at or after `since`, when given)
// and, without `since`, the packed ones too.
async function commitObjects(
  store: ObjectStore,
  gitdir: string,
  since: number | null,
): Promise<Map<string, RawCommit>> {
  const found = new Map<string, RawCommit>()
  const objects = path.join(gitdir, 'objects')
  for (const oid of looseOids(objects)) {
    const file = path.join(objects, oid.slice(0, 2), oid.slice(2))
    if (since !== null && disk.lstatSync(file).mtimeMs < since) continue
    if (!isLooseCommit(file)) continue
    const commit = await isReadableCommit(store, oid)
    if (commit) found.set(oid, commit)
  }
  if (since === null) {
    for (const oid of packedOids(objects)) {
      if (found.has(oid)) continue
      const commit = await isReadableCommit(store, oid).catch(() => null)
      if (commit) found.set(oid, commit)
    }
  }
  return found
}

function looseOids(objects: string): string[] {
  const oids: string[] = []
  for (const dir of listNames(objects)) {
    if (!/^[0-9a-f]{2}$/.test(dir)) continue
    for (const name of listNames(path.join(objects, dir))) {
      if (/^[0-9a-f]{38}$/.test(name)) oids.push(dir + name)
    }
  }
  return oids
}

// The ids a pack index (v2) lists: after the header and the 256-entry fan-out table.
function packedOids(objects: string): string[] {
  const oids: string[] = []
  const packDir = path.join(objects, 'pack')
  for (const name of listNames(packDir)) {
    if (!name.endsWith('.idx')) continue
    let idx: Buffer
    try {
      idx = readPlainFile(path.join(packDir, name), OWN_FILE_CAP.OBJECTS)
    } catch (error) {
      if (isCode(error, 'ENOENT') || isNotPlainFile(error)) continue
      throw error
    }
    if (idx.length < 8 + 1024 || idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) {
      continue
    }
    const count = idx.readUInt32BE(8 + 255 * 4)
    const start = 8 + 1024
    for (let i = 0; i < count && start + (i + 1) * 20 <= idx.length; i++) {
      oids.push(idx.subarray(start + i * 20, start + (i + 1) * 20).toString('hex'))
    }
  }
  return oids
}

// Cheap type check: only the first bytes of the object are inflated.
function isLooseCommit(file: string): boolean {
  let bytes: Buffer
  try {
    bytes = readPlainFile(file, OWN_FILE_CAP.OBJECTS)
  } catch (error) {
    if (isCode(error, 'ENOENT') || isNotPlainFile(error)) return false
    throw error
  }
  try {
    const head = inflateSync(bytes.subarray(0, 64), { finishFlush: constants.Z_SYNC_FLUSH })
    return head.subarray(0, 7).toString('latin1') === 'commit '
  } catch {
    return false
  }
}

function mtimeOf(gitdir: string, oid: string): number | null {
  try {
    return disk.lstatSync(path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2))).mtimeMs
  } catch (error) {
    if (isCode(error, 'ENOENT')) return null
    throw error
  }
}
