/**
 * Whether a history reaches an object: the question a sync asks when an object is missing
 * (is it one this machine's own `main` needs, or only the remote's?). The other walk over
 * reachable objects, maintenance's pack walk (repack.ts), follows paths through trees read in
 * place to pick delta bases and reads every object on its way; this one only needs the ids a
 * commit or tree names, and stops at the first match.
 */
import type { ObjectStore } from '../object-store'

/**
 * True when `oid` is one of the objects `head` reaches: one of its commits, or a tree or file
 * of one (what `git rev-list --objects head` lists). Each commit and tree is read once; an
 * object is found where it is named, before it is read, so a missing one is found without
 * reading it. An object on the way that cannot be read throws as its read does (code
 * `EDAMAGED` for one missing or damaged): what lies beyond it is unknown.
 */
export async function reaches(
  objects: Pick<ObjectStore, 'readCommit' | 'readTree'>,
  head: string,
  oid: string,
): Promise<boolean> {
  if (head === oid) return true
  const seen = new Set<string>([head])
  const commits = [head]
  const trees: string[] = []
  // Each commit's trees before the next commit: a change's files are looked at near it.
  while (commits.length > 0 || trees.length > 0) {
    const tree = trees.pop()
    if (tree !== undefined) {
      for (const entry of await objects.readTree(tree)) {
        if (entry.oid === oid) return true
        if (entry.kind === 'tree' && !seen.has(entry.oid)) {
          seen.add(entry.oid)
          trees.push(entry.oid)
        }
      }
      continue
    }
    const commit = await objects.readCommit(commits.pop()!)
    if (commit.tree === oid) return true
    if (!seen.has(commit.tree)) {
      seen.add(commit.tree)
      trees.push(commit.tree)
    }
    for (const parent of commit.parents) {
      if (parent === oid) return true
      if (!seen.has(parent)) {
        seen.add(parent)
        commits.push(parent)
      }
    }
  }
  return false
}
