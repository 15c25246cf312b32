/**
 * Which blob each file a commit changed had before and after it: what a history search
 * needs for every commit, read once from the trees and then kept. A commit never changes,
 * so neither does its record; records are kept in memory for the session and appended to
 * `<git dir>/cairn-changes.jsonl` for the next one (derived data like the side index: a
 * line for a commit not in this history, or unreadable, is ignored; safe to delete).
 *
 *   {"c":"<commit oid>","f":[["/memories/a.md","<blob before>",null],…]}
 */
import { appendFileSync, readFileSync } from 'node:fs'
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
}

const OID = /^[0-9a-f]{40}$/

/** Where the records live inside a git directory. */
export function changeLogOf(gitdir: string): string {
  return path.join(gitdir, 'cairn-changes.jsonl')
}

export interface ChangeLog {
  /** The blobs of every file `entry` changed (read from its trees the first time). */
  of(entry: IndexEntry): Promise<ReadonlyArray<FileBlobs>>
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

  function load(): Map<string, ReadonlyArray<FileBlobs>> {
    if (known) return known
    known = new Map()
    if (!options.file) return known
    let text: string
    try {
      text = readFileSync(options.file, 'utf8')
    } catch {
      return known
    }
    for (const line of text.split('\n')) {
      const record = parse(line)
      if (record && repo.entry(record.commit)) known.set(record.commit, record.files)
    }
    return known
  }

  return {
    async of(entry) {
      const records = load()
      const found = records.get(entry.oid)
      if (found && samePaths(found, entry.files)) return found
      const files: FileBlobs[] = []
      for (const file of entry.files) {
        const segments = segmentsOf(toRelative(file))
        files.push({
          path: file,
          before: entry.parent ? await lookup.blobAt(entry.parent, segments) : null,
          after: await lookup.blobAt(entry.oid, segments),
        })
      }
      records.set(entry.oid, files)
      unsaved.push(
        JSON.stringify({ c: entry.oid, f: files.map((f) => [f.path, f.before, f.after]) }),
      )
      return files
    },
    flush() {
      if (!options.file || unsaved.length === 0 || saveFailed) return
      const lines = `${unsaved.join('\n')}\n`
      unsaved = []
      try {
        appendFileSync(options.file, lines, { mode: 0o600 })
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
    if (!Array.isArray(item) || item.length !== 3) return null
    const [file, before, after] = item as unknown[]
    const blob = (value: unknown) =>
      value === null || (typeof value === 'string' && OID.test(value))
    if (typeof file !== 'string' || !blob(before) || !blob(after)) return null
    files.push({ path: file, before: before as string | null, after: after as string | null })
  }
  return { commit: record.c, files }
}

function samePaths(files: ReadonlyArray<FileBlobs>, paths: ReadonlyArray<string>): boolean {
  return files.length === paths.length && files.every((file, i) => file.path === paths[i])
}
