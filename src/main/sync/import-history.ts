/**
 * Copies a whole git history (a bundle's, or an existing repository's) into memory's
 * repository, commit by commit, each file passing the history import checks
 * (`checkHistoryFile`). A history whose every
 * file passes keeps its commits exactly (same ids); files that do not pass are left out of
 * every commit, which then get new ids. The repository root becomes `/memories`.
 */
import fs from 'node:fs'
import git from 'isomorphic-git'
import {
  EMPTY_TREE_OID,
  entryNameAt,
  serializeCommit,
  serializeTree,
  type HistoryGit,
  type RawTreeEntry,
} from '../history'
import { unsafeEntry } from './file-map'
import { checkHistoryFile, type ImportPolicy, type Skipped } from './import-checks'

/** Most commits one import copies (a memory history is far smaller; this bounds a hostile one). */
export const MAX_IMPORTED_COMMITS = 200_000

export interface ImportedHistory {
  /** The last commit, as copied into memory's repository. */
  readonly tip: string
  readonly commits: number
  readonly skipped: ReadonlyArray<Skipped>
  /** True when every commit kept its id (nothing had to be left out). */
  readonly unchanged: boolean
}

/** The source history is damaged (an object does not hash to its id). */
export class ImportDamagedError extends Error {}

/** Reads the repository at `gitdir` (bare, or a `.git` folder). */
export async function importHistory(
  source: string,
  tip: string,
  history: HistoryGit,
  policy: ImportPolicy,
): Promise<ImportedHistory> {
  const cache = {}
  const read = (oid: string) =>
    git.readObject({ fs, gitdir: source, oid, cache, format: 'content' })
  const order = await commitsOldestFirst(source, tip, cache)
  const skipped = new Map<string, string>()
  const mapped = new Map<string, string>()
  const trees = new Map<string, string | null>()
  const checked = new Map<string, boolean>()
  let unchanged = true

  // A tree filtered to what may enter memory, written into memory's repository; null when
  // nothing in it may. Memoized by place and id: unchanged folders are filtered once.
  async function copyTree(oid: string, prefix: string): Promise<string | null> {
    const key = `${prefix}\0${oid}`
    if (trees.has(key)) return trees.get(key) ?? null
    const { object, type } = await read(oid)
    if (type !== 'tree') throw new ImportDamagedError('a folder of the history is not a folder')
    const kept: RawTreeEntry[] = []
    const names = new Set<string>()
    for (const entry of foreignListing(Buffer.from(object as Uint8Array))) {
      // An empty name is shown as such: as a path, it was nothing at all.
      const shown = entry.path === '' ? '(no name)' : entry.path
      const path = prefix ? `${prefix}/${shown}` : shown
      // A name holding `/` would pass the checks of each of its parts and be damage in
      // memory's repository, as would an empty one (a top folder's files' paths lost it);
      // every other name (`.git`, `..`) is judged with its files' paths.
      const problem =
        entry.name === null
          ? 'a file name that is not UTF-8'
          : entry.name.includes('/') || entry.name === ''
            ? 'not a valid file name'
            : null
      if (problem) {
        if (!skipped.has(path)) skipped.set(path, problem)
        continue
      }
      // A folder listing one name twice (git fsck's duplicateEntries, which no history may
      // hold): the first is kept and the second left out, named, as a ZIP's second file of
      // one name is. Written as it was, the tree would be damage in memory's repository.
      if (names.has(entry.path)) {
        if (!skipped.has(path)) skipped.set(path, 'a second entry of the same name')
        continue
      }
      names.add(entry.path)
      if (entry.type === 'tree') {
        const sub = await copyTree(entry.oid, path)
        if (sub) kept.push({ name: entry.path, kind: 'tree', oid: sub, mode: '40000' })
        continue
      }
      const fileKey = `${path}\0${entry.oid}`
      let ok = checked.get(fileKey)
      if (ok === undefined) {
        ok = await checkBlob(path, entry.type, entry.mode, entry.oid)
        checked.set(fileKey, ok)
      }
      if (ok) kept.push({ name: entry.path, kind: 'blob', oid: entry.oid, mode: entry.mode })
    }
    const written =
      kept.length > 0 ? await history.objects.write('tree', serializeTree(kept)) : null
    if (written !== oid) unchanged = false
    trees.set(key, written)
    return written
  }

  async function checkBlob(
    path: string,
    type: string,
    mode: string,
    oid: string,
  ): Promise<boolean> {
    const refuse = (reason: string) => {
      if (!skipped.has(path)) skipped.set(path, reason)
      return false
    }
    if (type !== 'blob') return refuse('a link to another repository')
    const unsafe = unsafeEntry(path, mode)
    if (unsafe) return refuse(unsafe)
    const { object } = await read(oid)
    const bytes = object as Uint8Array
    // The history's own rules, not the Memory tool's: what the folder versioned (a hidden
    // settings file, a large note edited outside Cairn) comes back, commit for commit.
    const check = await checkHistoryFile(path, bytes, policy)
    if (!check.ok) return refuse(check.reason)
    if ((await history.objects.write('blob', bytes)) !== oid) {
      throw new ImportDamagedError('an object of the history does not match its id')
    }
    return true
  }

  for (const oid of order) {
    const { object, type } = await read(oid)
    if (type !== 'commit') throw new Error(`${oid} is not a commit`)
    const { commit } = await git.readCommit({ fs, gitdir: source, oid, cache })
    const tree = (await copyTree(commit.tree, '')) ?? (await emptyTree(history))
    const parents = commit.parent.map((parent) => mapped.get(parent) as string)
    const same = tree === commit.tree && parents.every((parent, i) => parent === commit.parent[i])
    if (same) {
      if ((await history.objects.write('commit', object as Uint8Array)) !== oid) {
        throw new ImportDamagedError('a commit of the history does not match its id')
      }
      mapped.set(oid, oid)
      continue
    }
    unchanged = false
    const [first, ...others] = parents
    mapped.set(
      oid,
      await history.objects.write(
        'commit',
        serializeCommit({
          tree,
          parent: first ?? null,
          otherParents: others,
          author: { name: commit.author.name, email: commit.author.email },
          timestamp: commit.author.timestamp,
          // Its own committer: with the author's in its place, Claude's commit amended with
          // git by Ann would read as Claude's, its trailers trusted (docs/history.md).
          committer: {
            name: commit.committer.name,
            email: commit.committer.email,
            timestamp: commit.committer.timestamp,
          },
          message: commit.message,
        }),
      ),
    )
  }
  return {
    tip: mapped.get(tip) as string,
    commits: order.length,
    skipped: [...skipped].map(([path, reason]) => ({ path, reason })),
    unchanged,
  }
}

/** An entry of a foreign folder listing: its mode as git reads it (`100664` is `100644`). */
interface ForeignEntry {
  readonly mode: string
  readonly type: 'blob' | 'tree' | 'commit'
  /** The name as it shows in messages; `name` is null when it is not UTF-8. */
  readonly path: string
  readonly name: string | null
  readonly oid: string
}

/**
 * Every entry of a tree made elsewhere, as git lists it, names unchecked: what may enter
 * memory is judged per file (`checkBlob`), so a hostile name (`.git`, `..`, one holding `/`)
 * is left out and named. isomorphic-git's `readTree` throws on such a name, and the whole
 * import failed as "could not be read as a git history".
 *
 * Sample: `100644 notes.md\0<20-byte id>`, `40000 .git\0<20-byte id>`.
 */
function foreignListing(bytes: Buffer): ForeignEntry[] {
  const entries: ForeignEntry[] = []
  let at = 0
  while (at < bytes.length) {
    const space = bytes.indexOf(0x20, at)
    const nul = space < 0 ? -1 : bytes.indexOf(0, space + 1)
    if (space < 0 || nul < 0 || nul + 21 > bytes.length) {
      throw new ImportDamagedError('a folder listing of the history cannot be read')
    }
    const octal = Number.parseInt(bytes.toString('latin1', at, space), 8)
    const name = entryNameAt(bytes, space + 1, nul)
    // git's own reading of old or odd modes (`canon_mode`): a folder, a link, a submodule,
    // else a file, executable or not.
    const kind = octal & 0o170000
    const [mode, type]: [string, ForeignEntry['type']] =
      kind === 0o040000
        ? ['40000', 'tree']
        : kind === 0o120000
          ? ['120000', 'blob']
          : kind === 0o160000
            ? ['160000', 'commit']
            : kind === 0o100000
              ? [octal & 0o111 ? '100755' : '100644', 'blob']
              : [bytes.toString('latin1', at, space), 'blob']
    const oid = bytes.toString('hex', nul + 1, nul + 21)
    entries.push({ mode, type, name, path: name ?? bytes.toString('latin1', space + 1, nul), oid })
    at = nul + 21
  }
  return entries
}

async function emptyTree(history: HistoryGit): Promise<string> {
  return history.objects.write('tree', serializeTree([]), EMPTY_TREE_OID)
}

// Every commit reachable from `tip`, parents before children.
async function commitsOldestFirst(source: string, tip: string, cache: object): Promise<string[]> {
  const ordered: string[] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: Array<{ oid: string; expanded: boolean }> = [{ oid: tip, expanded: false }]
  while (stack.length > 0) {
    const top = stack.pop() as { oid: string; expanded: boolean }
    if (top.expanded) {
      state.set(top.oid, 'done')
      ordered.push(top.oid)
      continue
    }
    if (state.has(top.oid)) continue
    state.set(top.oid, 'open')
    if (state.size > MAX_IMPORTED_COMMITS) throw new Error('history too long to import')
    const { commit } = await git.readCommit({ fs, gitdir: source, oid: top.oid, cache })
    stack.push({ oid: top.oid, expanded: true })
    for (const parent of [...commit.parent].reverse()) {
      if (!state.has(parent)) stack.push({ oid: parent, expanded: false })
    }
  }
  return ordered
}
