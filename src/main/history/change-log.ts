/**
 * Which blob each file a commit changed had before and after it: what a history search
 * needs for every commit, read once from the trees and then kept. A commit never changes,
 * so neither does its record; records are kept in memory for the session and appended to
 * `<git dir>/cairn-changes.jsonl` for the next one (derived data like the side index: a
 * line for a commit not in this history, or unreadable, is ignored; safe to delete).
 *
 *   {"c":"<commit oid>","f":[["/memories/a.md","<blob before>",null],…]}
 *
 * A merge commit's files (what it changed against its first parent) also carry their blob in
 * each other parent, after the first three: `["/memories/a.md","<before>","<after>","<other>"]`.
 */
import { appendPlainFile } from '../lib/disk'
import { readOwnRecord } from './objects/damaged-folder'
import path from 'node:path'
import type { Logger } from '../lib/logger'
import type { Lookup } from './lookup'
import { segmentsOf, toRelative } from './paths'
import type { RepoView } from './read'
import type { IndexEntry } from './side-index'

/** One file a commit changed: its blob before and after (null: absent, or a folder). */
export interface FileBlobs {
  readonly path: string
  readonly before: string | null
  readonly after: string | null
  /** For a merge: the file's blob in each parent after the first. */
  readonly others?: ReadonlyArray<string | null>
}

/** What `of` needs of a commit's entry: its id, its parents and the files it changed. */
export type ChangedFiles = Pick<IndexEntry, 'oid' | 'parent' | 'otherParents' | 'files'>

const OID = /^[0-9a-f]{40}$/

/** Where the records live inside a git directory. */
export function changeLogOf(gitdir: string): string {
  return path.join(gitdir, 'cairn-changes.jsonl')
}

export interface ChangeLog {
  /** The blobs of every file `entry` changed (read from its trees the first time). */
  of(entry: ChangedFiles): Promise<ReadonlyArray<FileBlobs>>
  /**
   * The record kept for commit `oid`, a commit with one parent that changed `files`, without
   * reading anything: undefined when none is kept for exactly those files (then `of`).
   */
  kept(oid: string, files: ReadonlyArray<string>): ReadonlyArray<FileBlobs> | undefined
  /** Writes the records found since the last flush to the file. */
  flush(): void
}

export function createChangeLog(
  repo: RepoView,
  lookup: Lookup,
  options: { readonly file: string | null; readonly logger: Logger },
): ChangeLog {
  let known: Map<string, ReadonlyArray<FileBlobs>> | null = null
  let unsaved: string[] = []
  let saveFailed = false
  // A kill in the middle of an append leaves a torn last line: the next append starts on a
  // line of its own, so its first record is not joined to the torn one and lost with it.
  let tornTail = false

  function load(): Map<string, ReadonlyArray<FileBlobs>> {
    if (known) return known
    known = new Map()
    if (!options.file) return known
    let text: string
    try {
      // Anything but a plain file in its place is kept aside (never read through nor waited
      // on), so that the next flush makes a fresh one.
      const bytes = readOwnRecord(path.dirname(options.file), options.file)
      if (bytes === null) return known
      text = bytes.toString('utf8')
    } catch {
      return known
    }
    tornTail = text.length > 0 && !text.endsWith('\n')
    for (const line of text.split('\n')) {
      const record = parse(line)
      if (record && repo.index.positionOf(record.commit) >= 0)
        known.set(record.commit, record.files)
    }
    return known
  }

  return {
    async of(entry) {
      const records = load()
      const found = records.get(entry.oid)
      const others = entry.otherParents ?? []
      if (found && samePaths(found, entry.files, others.length)) return found
      const files: FileBlobs[] = []
      for (const file of entry.files) {
        const segments = segmentsOf(toRelative(file))
        const sides: FileBlobs = {
          path: file,
          before: entry.parent ? await lookup.blobAt(entry.parent, segments) : null,
          after: await lookup.blobAt(entry.oid, segments),
        }
        if (others.length === 0) files.push(sides)
        else {
          const blobs: Array<string | null> = []
          for (const other of others) blobs.push(await lookup.blobAt(other, segments))
          files.push({ ...sides, others: blobs })
        }
      }
      records.set(entry.oid, files)
      unsaved.push(
        JSON.stringify({
          c: entry.oid,
          f: files.map((f) => [f.path, f.before, f.after, ...(f.others ?? [])]),
        }),
      )
      return files
    },
    kept(oid, files) {
      const found = load().get(oid)
      return found && samePaths(found, files, 0) ? found : undefined
    },
    flush() {
      if (!options.file || unsaved.length === 0 || saveFailed) return
      const lines = `${tornTail ? '\n' : ''}${unsaved.join('\n')}\n`
      unsaved = []
      try {
        appendPlainFile(options.file, lines)
        tornTail = false
      } catch (error) {
        // Only the next session's first search is slower for it; say so once.
        saveFailed = true
        options.logger.warn('Could not keep the history search records', error)
      }
    },
  }
}

function parse(line: string): { commit: string; files: FileBlobs[] } | null {
  if (line === '') return null
  let raw: unknown
  try {
    raw = JSON.parse(line)
  } catch {
    return null
  }
  const record = raw as { c?: unknown; f?: unknown }
  if (typeof record?.c !== 'string' || !OID.test(record.c) || !Array.isArray(record.f)) {
    return null
  }
  const files: FileBlobs[] = []
  for (const item of record.f as unknown[]) {
    if (!Array.isArray(item) || item.length < 3) return null
    const [file, before, after, ...others] = item as unknown[]
    const blob = (value: unknown) =>
      value === null || (typeof value === 'string' && OID.test(value))
    if (typeof file !== 'string' || !blob(before) || !blob(after) || !others.every(blob)) {
      return null
    }
    const sides = { path: file, before: before as string | null, after: after as string | null }
    files.push(others.length > 0 ? { ...sides, others: others as Array<string | null> } : sides)
  }
  return { commit: record.c, files }
}

/** A record made for this very commit: the same files, each with every parent's blob. */
function samePaths(
  files: ReadonlyArray<FileBlobs>,
  paths: ReadonlyArray<string>,
  others: number,
): boolean {
  return (
    files.length === paths.length &&
    files.every((file, i) => file.path === paths[i] && (file.others?.length ?? 0) === others)
  )
}
