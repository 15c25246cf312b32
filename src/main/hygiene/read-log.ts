/**
 * The read log: per memory file, when Claude last read it (`view`) and last changed it, and
 * when the person last chose to keep it (declined its expiry). Kept beside the history in
 * `<dataDir>/read-log.json`, not as commits: reading is not a change. Written atomically a
 * moment after the last update (and at close), and bounded: past `MAX_FILES` entries, the
 * longest unused go first.
 *
 *   {"version":1,"since":1767225600000,
 *    "files":{"/memories/notes.md":{"read":1767312000000,"changed":1767225900000}}}
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { CommitSummary } from '../../shared/types'
import { writeJsonAtomic } from '../lib/atomic-json'
import { isMissing } from '../lib/disk'
import type { Logger } from '../lib/logger'
import { isRecord } from '../lib/records'

/** Most files the log remembers (the memory tool's own default limit of files). */
export const MAX_FILES = 20_000

/** How long after the last update the log is written. */
export const FLUSH_DELAY_MS = 1_000

/** What the log knows about one file (times in milliseconds since the epoch). */
export interface FileRecord {
  readonly read?: number
  readonly changed?: number
  readonly kept?: number
}

export interface ReadLog {
  /** When the log began: nothing is known about reads before. */
  readonly since: number
  get(path: string): FileRecord | undefined
  /** Claude viewed the file `path` (a virtual path of a file). */
  noteRead(path: string): void
  /** A commit happened: Claude's changes are recorded; renames (anyone's) carry records along. */
  noteCommit(commit: CommitSummary): void
  /** The person declined expiring `path`: it counts as fresh from now. */
  noteKept(path: string): void
  /** Writes what changed now (tests; close does it too). */
  flush(): Promise<void>
  close(): Promise<void>
}

const CHANGES: ReadonlySet<string> = new Set(['create', 'str_replace', 'insert', 'rename'])

/** Opens (or starts) the read log of `dataDir`; a damaged file is started over, and said so. */
export async function openReadLog(options: {
  readonly dataDir: string
  readonly now?: () => number
  readonly logger: Logger
  readonly flushDelayMs?: number
}): Promise<ReadLog> {
  const file = path.join(options.dataDir, 'read-log.json')
  const now = options.now ?? Date.now
  const { logger } = options
  const loaded = await load(file, logger)
  const since = loaded?.since ?? now()
  const files = new Map<string, FileRecord>(loaded ? Object.entries(loaded.files) : [])
  let dirty = loaded === null
  let timer: NodeJS.Timeout | null = null
  let writing: Promise<void> = Promise.resolve()
  let closed = false

  const update = (file: string, change: FileRecord): void => {
    files.set(file, { ...files.get(file), ...change })
    if (files.size > MAX_FILES) trim(files)
    dirty = true
    schedule()
  }

  const schedule = (): void => {
    if (timer || closed) return
    timer = setTimeout(() => {
      timer = null
      void flush()
    }, options.flushDelayMs ?? FLUSH_DELAY_MS)
    timer.unref?.()
  }

  const flush = (): Promise<void> => {
    writing = writing.then(async () => {
      if (!dirty) return
      dirty = false
      try {
        await writeJsonAtomic(file, { version: 1, since, files: Object.fromEntries(files) })
      } catch (error) {
        dirty = true
        logger.warn('Could not save the read log', error)
      }
    })
    return writing
  }

  const move = (from: string, to: string): void => {
    const prefix = `${from}/`
    for (const [key, record] of [...files]) {
      if (key !== from && !key.startsWith(prefix)) continue
      files.delete(key)
      files.set(to + key.slice(from.length), record)
    }
    dirty = true
    schedule()
  }

  // A log that could not be read is written afresh soon, so the damage does not linger.
  if (dirty) schedule()

  return {
    since,
    get: (file) => files.get(file),
    noteRead: (file) => update(file, { read: now() }),
    noteKept: (file) => update(file, { kept: now() }),
    noteCommit(commit) {
      const [from, to] = commit.paths
      if (commit.command === 'rename' && from && to) move(from, to)
      if (commit.actor !== 'claude' || !CHANGES.has(commit.command)) return
      const target = commit.command === 'rename' ? to : from
      if (target) update(target, { changed: commit.time })
    },
    flush,
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      timer = null
      await flush()
    },
  }
}

interface Stored {
  readonly since: number
  readonly files: Record<string, FileRecord>
}

async function load(file: string, logger: Logger): Promise<Stored | null> {
  let raw: string
  try {
    raw = await readFile(file, 'utf8')
  } catch (error) {
    if (!isMissing(error)) logger.warn('Could not read the read log; starting a new one', error)
    return null
  }
  try {
    const parsed = JSON.parse(raw) as Partial<Stored> & { version?: unknown }
    if (parsed.version !== 1 || !isTime(parsed.since) || !isRecord(parsed.files)) {
      throw new Error('not a read log')
    }
    const files: Record<string, FileRecord> = {}
    for (const [key, value] of Object.entries(parsed.files)) {
      if (!key.startsWith('/memories/') || !isRecord(value)) continue
      const record = value as Record<string, unknown>
      files[key] = {
        ...(isTime(record.read) ? { read: record.read } : {}),
        ...(isTime(record.changed) ? { changed: record.changed } : {}),
        ...(isTime(record.kept) ? { kept: record.kept } : {}),
      }
    }
    return { since: parsed.since, files }
  } catch (error) {
    logger.warn('The read log was damaged; starting a new one', error)
    return null
  }
}

/**
 * Drops the least recently used records, down to nine tenths of the bound (so the sort runs
 * once per many updates, not on each).
 */
function trim(files: Map<string, FileRecord>): void {
  const byAge = [...files].sort(([, a], [, b]) => lastUse(a) - lastUse(b))
  for (const [key] of byAge.slice(0, files.size - Math.floor(MAX_FILES * 0.9))) files.delete(key)
}

function lastUse(record: FileRecord): number {
  return Math.max(record.read ?? 0, record.changed ?? 0, record.kept ?? 0)
}

function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}
