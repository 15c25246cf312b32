/**
 * Line provenance kept between sessions: for each file, the newest version blame has traced
 * and the commit of each of its lines, in `<git dir>/cairn-blame/`. It is derived data, like
 * the side index: never trusted blindly (its version must match the file's blob and line
 * count, its commits must be in this history), safe to delete, and written without fsync
 * (a torn file is simply not used).
 *
 *   {"v":1,"path":"/memories/a.md","commit":"<oid>","blob":"<oid>",
 *    "commits":["<oid>",…],"runs":[0,12,1,3,…]}     runs: (index in commits, line count) pairs
 */
import { createHash, randomBytes } from 'node:crypto'
import { disk, makeFolders, readPlainFile, removeFile } from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import path from 'node:path'

/** What was saved for one file: the version (commit that wrote it, blob) and each line's commit. */
export interface SavedBlame {
  readonly path: string
  readonly commit: string
  readonly blob: string
  /** The commit of each line, in order. */
  readonly owners: ReadonlyArray<string>
}

const OID = /^[0-9a-f]{40}$/

/** The folder of saved provenance inside a git directory. */
export function blameDirOf(gitdir: string): string {
  return path.join(gitdir, 'cairn-blame')
}

function fileOf(dir: string, virtual: string): string {
  return path.join(dir, `${createHash('sha1').update(virtual).digest('hex')}.json`)
}

/** The saved provenance of `virtual`, or null when none is saved or it cannot be read. */
export function loadBlame(dir: string, virtual: string): SavedBlame | null {
  let raw: unknown
  try {
    raw = JSON.parse(readPlainFile(fileOf(dir, virtual), OWN_FILE_CAP.RECORDS).toString('utf8'))
  } catch {
    return null
  }
  const saved = raw as {
    v?: unknown
    path?: unknown
    commit?: unknown
    blob?: unknown
    commits?: unknown
    runs?: unknown
  }
  if (
    saved?.v !== 1 ||
    saved.path !== virtual ||
    typeof saved.commit !== 'string' ||
    !OID.test(saved.commit) ||
    typeof saved.blob !== 'string' ||
    !OID.test(saved.blob) ||
    !Array.isArray(saved.commits) ||
    !Array.isArray(saved.runs) ||
    saved.runs.length % 2 !== 0
  ) {
    return null
  }
  const commits = saved.commits as unknown[]
  if (!commits.every((oid) => typeof oid === 'string' && OID.test(oid))) return null
  const owners: string[] = []
  const runs = saved.runs as unknown[]
  for (let i = 0; i < runs.length; i += 2) {
    const index = runs[i]
    const count = runs[i + 1]
    if (!Number.isInteger(index) || !Number.isInteger(count) || (count as number) < 1) return null
    const oid = commits[index as number] as string | undefined
    if (oid === undefined || owners.length + (count as number) > 10_000_000) return null
    for (let k = 0; k < (count as number); k++) owners.push(oid)
  }
  return { path: virtual, commit: saved.commit, blob: saved.blob, owners }
}

/** Saves `blame` for its path (best effort: a failure leaves the previous file or none). */
export function saveBlame(dir: string, blame: SavedBlame): void {
  const commits: string[] = []
  const index = new Map<string, number>()
  const runs: number[] = []
  for (const oid of blame.owners) {
    let at = index.get(oid)
    if (at === undefined) {
      at = commits.length
      index.set(oid, at)
      commits.push(oid)
    }
    if (runs.length > 0 && runs[runs.length - 2] === at) runs[runs.length - 1]++
    else runs.push(at, 1)
  }
  const body = JSON.stringify({
    v: 1,
    path: blame.path,
    commit: blame.commit,
    blob: blame.blob,
    commits,
    runs,
  })
  const file = fileOf(dir, blame.path)
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`
  makeFolders(dir, 0o700)
  try {
    disk.writeFileSync(temp, body, { mode: 0o600 })
    disk.renameSync(temp, file)
  } catch (error) {
    try {
      removeFile(temp)
    } catch {
      // Left behind, harmless: only `<hash>.json` files are ever read as saved blame.
    }
    throw error
  }
}
