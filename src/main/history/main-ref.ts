/**
 * Reading `refs/heads/main` as git does (loose file, else `packed-refs`), without trusting it.
 * Apart from find-tip.ts so the object store's log replay can read it too without a circle.
 */
import path from 'node:path'
import { disk, readPlainFileOrNull } from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'

/**
 * What `main` says, read without trusting it: a commit id, or why there is none. `symbolic`:
 * `main` is a link to another branch (`ref: refs/heads/x`, what `git symbolic-ref
 * refs/heads/main refs/heads/x` writes), whose commit `oid` is; the branch it names.
 */
export type RefReading =
  | { readonly kind: 'ok'; readonly oid: string; readonly symbolic?: string }
  | { readonly kind: 'empty-history' }
  | { readonly kind: 'lost'; readonly why: 'missing' | 'garbage' }

/**
 * Reads `refs/heads/main` (loose, else from `packed-refs`). `empty-history` when neither names
 * it and the repository has never had a commit; the caller decides that by finding none.
 * `expected`, the value the caller holds: a loose file saying just that is taken at its first
 * read (see `readSettled`).
 */
export function readMainRef(gitdir: string, expected?: string | null): RefReading {
  return readBranch(gitdir, 'refs/heads/main', expected ?? null, 0)
}

// git follows at most this many links (refs.h, SYMREF_MAXDEPTH).
const MAX_LINKS = 5

const MISSING: RefReading = { kind: 'lost', why: 'missing' }

/**
 * The branch `name` (loose, else from `packed-refs`), through its links; `depth`: how many
 * links were followed to reach it (0: `main` itself). Only `main` is read as a file system
 * link, and only there does an I/O error throw: a branch a link names is taken as having no
 * loose file when it cannot be read. A link to a branch that names no commit (git takes `main`
 * as unborn), back to `main`, or deeper than git follows leaves `main` missing.
 */
function readBranch(
  gitdir: string,
  name: string,
  expected: string | null,
  depth: number,
): RefReading {
  const file = path.join(gitdir, ...name.split('/'))
  let loose: string | null
  if (depth === 0) {
    // A link git made as a file system link (`core.preferSymlinkRefs`): read as its text form.
    loose = readSettled(file, expected) ?? symlinkRef(file)
  } else {
    try {
      loose = readSettled(file, null)
    } catch {
      loose = null
    }
  }
  if (loose === null) {
    const packed = packedValue(gitdir, name)
    return packed === null ? MISSING : { kind: 'ok', oid: packed }
  }
  const value = loose.trim()
  if (isOid(value)) return { kind: 'ok', oid: value }
  const named = linkedBranch(value)
  if (named === null) return { kind: 'lost', why: 'garbage' }
  if (named === 'refs/heads/main' || depth >= MAX_LINKS) return MISSING
  const target = readBranch(gitdir, named, null, depth + 1)
  return target.kind === 'ok' ? { kind: 'ok', oid: target.oid, symbolic: named } : MISSING
}

// `ref: refs/heads/<name>` (a link to a branch): the branch's full name, else null. The name
// follows git's own rule for a ref's name (`git check-ref-format`: `+`, `@`, `#` and letters
// beyond ASCII are allowed); names that could leave refs/heads (`..`, a leading or doubled
// `/`, a part starting with `.`) or hold control characters, spaces or `~^:?*[\` are not links.
function linkedBranch(value: string): string | null {
  // git skips any white space after `ref:` (none, a tab, several: refs/files-backend.c).
  const match = /^ref:[ \t\n\v\f\r]*(refs\/heads\/.+)$/.exec(value)
  if (!match) return null
  const name = match[1]!
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f~^:?*[\\]|\.\.|@\{|\.$/.test(name)) return null
  const parts = name.split('/')
  return parts.some((part) => part === '' || part.startsWith('.') || part.endsWith('.lock'))
    ? null
    : name
}

// `ref: <target>` when `file` is a file system link whose target is a ref's name (git writes
// `main -> refs/heads/x` under `core.preferSymlinkRefs` and reads it as a link to that branch,
// never through it); null for anything else, which stays damage (`readTextOrNull`).
function symlinkRef(file: string): string | null {
  if (!disk.lstatIfThere(file)?.isSymbolicLink()) return null
  let target: string
  try {
    target = disk.readlinkSync(file)
  } catch {
    return null
  }
  return target.startsWith('refs/') ? `ref: ${target}` : null
}

// The id `packed-refs` gives the ref `name`, or null.
function packedValue(gitdir: string, name: string): string | null {
  const packed = readTextOrNull(path.join(gitdir, 'packed-refs'))
  if (packed === null) return null
  for (const line of packed.split('\n')) {
    const [oid, ref] = line.trim().split(' ')
    if (ref === name && oid && isOid(oid)) return oid
  }
  return null
}

/** How many reads of the ref file `readSettled` makes at most. */
const MAX_REF_READS = 4

/**
 * The ref file's text, read until two reads in a row agree. Cairn writes the file in place
 * (docs/durability.md): a read racing that write may see part of each value, which is still
 * 40 hex digits and a newline (a commit that does not exist). Two equal reads in a row are
 * the value (the same torn mix twice in a row is not a thing to expect); after
 * `MAX_REF_READS` the last read stands, and a value naming no commit is judged as before.
 * A first read that says `expected` (the value the caller holds) is the value at once: a mix
 * of two values that is exactly one of them is that value, so the second read could only
 * agree. The check before every change meets that case (stop 30: two reads a check, five
 * system calls each, against one).
 */
function readSettled(file: string, expected: string | null): string | null {
  let last = readTextOrNull(file)
  if (expected !== null && last !== null && last.trim() === expected) return last
  for (let reads = 1; reads < MAX_REF_READS; reads++) {
    const again = readTextOrNull(file)
    if (again === last) return again
    last = again
  }
  return last
}

/**
 * A ref file's text, or null when there is no such file, or when what has its name is not a
 * plain file (a folder of refs; a link, a fifo or a device: damage, never read through nor
 * waited on, so `main` is then lost and found again). I/O errors are thrown.
 */
export function readTextOrNull(file: string): string | null {
  return readPlainFileOrNull(file, OWN_FILE_CAP.TINY)?.toString('utf8') ?? null
}

/** True for a full 40-digit hex object id. */
export function isOid(value: string): boolean {
  return /^[0-9a-f]{40}$/.test(value)
}
