/**
 * Removing the packs a sync's fetch brought when the sync refused what they hold (a hostile
 * remote's tree git calls damaged): kept, `git fsck --strict` reports their objects for good,
 * and maintenance keeps unreachable objects. Only what that fetch alone brought goes: a pack
 * holding an object stored nowhere else that anything kept reaches (`main`, a backup, the
 * remote's `main` last seen, a commit a command made while the fetch ran, which found the
 * object already stored and wrote none) stays whole.
 */
import { exists, syncFolder } from '../../lib/disk'
import type { ObjectStore } from '../object-store'
import { DROPPED, removePack } from './pack-writer'

/**
 * Removes each pack of `names` (`pack-<checksum>`) whose objects held nowhere else no commit of
 * `heads` reaches; returns the names removed. The caller holds the serial queue (no command
 * writes meanwhile) and the pack folder (no fetch, push or maintenance step), and passes every
 * ref's commit it keeps. An object on the way that cannot be read keeps every pack: what lies
 * beyond it is unknown.
 *
 * `since` are the commits every ref named before the fetch began (`main` and the rest): what
 * they reach was stored before these packs came (or was missing then, and is again after), so
 * no object only these packs hold is theirs, and the walk goes no further back than them. Only
 * the commits written since (a command racing the fetch, a backup) are read with their trees:
 * the walk of every commit ever made held commands for seconds (2 s at 10,000 commits, 35 s at
 * 100,000).
 */
export async function dropFetchedPacks(
  store: Pick<ObjectStore, 'db' | 'readCommit' | 'readForeignTree'>,
  names: ReadonlyArray<string>,
  heads: ReadonlyArray<string>,
  since: ReadonlyArray<string> = [],
): Promise<ReadonlyArray<string>> {
  const db = store.db
  db.refresh()
  const wanted = new Set(names)
  const own = db.packs().filter((open) => wanted.has(open.name))
  const others = db.packs().filter((open) => !wanted.has(open.name))
  // The objects only these packs hold, and which pack holds each.
  const only = new Map<string, Set<string>>()
  for (const open of own) {
    for (const entry of open.index.entries()) {
      if (others.some((other) => other.index.has(entry.oid))) continue
      const oid = entry.oid.toString('hex')
      if (exists(db.loosePath(oid))) continue
      const holders = only.get(oid) ?? new Set<string>()
      holders.add(open.name)
      only.set(oid, holders)
    }
  }
  const keep = new Set<string>()
  if (only.size > 0) {
    for (const oid of await reachedAmong(store, heads, only, since)) {
      for (const name of only.get(oid) ?? []) keep.add(name)
    }
  }
  const dropped: string[] = []
  for (const open of own) {
    if (keep.has(open.name)) continue
    // Marked as dropped, durably, before its index goes: a kill on the way leaves a pack the
    // next open removes whole (a `.folded` mark would have kept it, index and all).
    await removePack(db, open.name, undefined, DROPPED)
    dropped.push(open.name)
  }
  // The unlinks made durable once for them all (each pack's mark was, before its files went).
  if (dropped.length > 0) await syncFolder(db.packDir)
  return dropped
}

/**
 * The ids of `among` that some object of `heads` reaches (commits, trees, files; a tag through
 * what it names), not looking into the commits of `since` (none of `among` is theirs).
 */
async function reachedAmong(
  store: Pick<ObjectStore, 'db' | 'readCommit' | 'readForeignTree'>,
  heads: ReadonlyArray<string>,
  among: ReadonlyMap<string, unknown>,
  since: ReadonlyArray<string>,
): Promise<ReadonlyArray<string>> {
  const found = new Set<string>()
  const seen = new Set<string>(since)
  const commits: string[] = []
  const trees: string[] = []
  const note = (oid: string): boolean => {
    if (among.has(oid)) found.add(oid)
    if (seen.has(oid)) return false
    seen.add(oid)
    return true
  }
  for (const head of heads) {
    // A ref may name any object (`git tag -a`, `git update-ref` to a tree or a file), one made
    // while the fetch ran too: each is walked by its kind, a tag through what it names. Read
    // as a commit, it failed the check and every pack was kept.
    let at: string | null = head
    while (at !== null && note(at)) {
      const object = store.db.read(at)
      const oid: string = at
      at = null
      if (object.type === 'commit') commits.push(oid)
      else if (object.type === 'tree') trees.push(oid)
      else if (object.type === 'tag') at = tagTarget(oid, object.content)
    }
  }
  while (commits.length > 0 || trees.length > 0) {
    const tree = trees.pop()
    if (tree !== undefined) {
      for (const entry of await store.readForeignTree(tree)) {
        if (note(entry.oid) && entry.kind === 'tree') trees.push(entry.oid)
      }
      continue
    }
    const commit = await store.readCommit(commits.pop()!)
    if (note(commit.tree)) trees.push(commit.tree)
    for (const parent of commit.parents) if (note(parent)) commits.push(parent)
  }
  return [...found]
}

/**
 * What an annotated tag names (its first line, `object <id>`). One that names nothing readable
 * is thrown on: what lies beyond it is unknown, so every pack is kept.
 */
function tagTarget(oid: string, content: Buffer): string {
  const named = /^object ([0-9a-f]{40})\n/.exec(content.toString('latin1'))
  if (!named?.[1]) throw new Error(`tag ${oid} names no object`)
  return named[1]
}
