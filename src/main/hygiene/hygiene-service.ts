/**
 * Memory hygiene: what Claude reads and changes (the read log), the size meter, expiring a
 * file, and, when the setting asks for it, proposing to expire files Claude has left unread
 * for a number of days. Proposals are never carried out silently: each waits for the person as
 * a pending change from Cairn.
 */
import type { ChangeResult, CommitSummary, MemoryStats, PendingChange } from '../../shared/types'
import { keepsNoCopy, MAX_VERSIONED_BYTES, type VersionedMemory } from '../history'
import { CairnError } from '../lib/errors'
import { FolderTree, type Found } from '../lib/folders'
import { consoleLogger, type Logger } from '../lib/logger'
import { parseMemoryPath } from '../memory'
import { listTree, type TreeReader } from '../memory-browser'
import type { ReviewService } from '../review'
import { consistentRead, type Breather } from '../lib/time-slices'
import type { ReadLog } from './read-log'
import { memoryStats, type MeasureCache } from './stats'

/** The subject of an expiry's commit (a delete, restorable like any other). */
export const EXPIRE_SUBJECT = 'expire'

/** Most expiry proposals waiting at once; more follow as these are decided. */
export const MAX_PROPOSALS = 25

/** How often the unread files are looked for, while the setting is on. */
export const EXPIRY_CHECK_MS = 60 * 60 * 1000

const DAY_MS = 24 * 60 * 60 * 1000

export interface HygieneServiceOptions {
  readonly memory: Pick<VersionedMemory, 'execute' | 'folder' | 'changeStamp' | 'changeEnded'>
  readonly readLog: ReadLog
  readonly review: Pick<ReviewService, 'propose' | 'list'>
  readonly now?: () => number
  readonly logger?: Logger
  /** How often to look for unread files while proposals are on (default hourly). */
  readonly checkEveryMs?: number
  /** How the size meter's walk of the folder gives the loop back (default: every few ms). */
  readonly slices?: () => Breather
  /**
   * The live folder's tree (default: walked for the meter alone): the core passes the memory
   * tree's reader, so a meter asked with the tree waits for the same walk.
   */
  readonly readTree?: TreeReader
}

export interface HygieneService {
  /** Claude viewed `path` (normalized): recorded when it is a file. Never rejects. */
  noteViewed(path: string): Promise<void>
  noteCommit(commit: CommitSummary): void
  stats(): Promise<MemoryStats>
  /** Deletes a file as an expiry: one commit with the subject "expire", by the person. */
  expire(path: string): Promise<ChangeResult>
  /** Turns proposals on (after `days` unread) or off (null); on, it looks at once. */
  setExpireAfterDays(days: number | null): void
  /** Proposes expiring each file unread for the set number of days; resolves with the new ones. */
  proposeExpiries(): Promise<ReadonlyArray<PendingChange>>
  close(): Promise<void>
}

export function createHygieneService(options: HygieneServiceOptions): HygieneService {
  const { memory, readLog, review } = options
  const now = options.now ?? Date.now
  const logger = options.logger ?? consoleLogger
  const cache: MeasureCache = new Map()
  let days: number | null = null
  let timer: NodeJS.Timeout | null = null
  let running: Promise<ReadonlyArray<PendingChange>> | null = null
  let closed = false

  async function propose(): Promise<ReadonlyArray<PendingChange>> {
    if (days === null || closed) return []
    const cutoff = now() - days * DAY_MS
    const outstanding = new Set(
      review
        .list()
        .filter((change) => change.origin === 'cairn')
        .map((change) => change.path),
    )
    const proposed: PendingChange[] = []
    for (const entry of await listTree(memory.folder)) {
      if (outstanding.size >= MAX_PROPOSALS || closed) break
      if (entry.kind !== 'file' || outstanding.has(entry.path)) continue
      const record = readLog.get(entry.path)
      // Unknown before the log began, so never older than that; a file written since is fresh.
      const fresh = Math.max(
        record?.read ?? 0,
        record?.changed ?? 0,
        record?.kept ?? 0,
        readLog.since,
        entry.modifiedAt,
      )
      if (fresh > cutoff) continue
      const path = entry.path
      // Never proposed: expiring what History holds no copy of would lose it for good.
      if (notKept(memory.folder, path) !== null) continue
      const change = await review.propose(
        { command: 'delete', path },
        { subject: EXPIRE_SUBJECT, onDecline: () => readLog.noteKept(path) },
      )
      if (!change) continue
      outstanding.add(path)
      proposed.push(change)
    }
    return proposed
  }

  const proposeExpiries = (): Promise<ReadonlyArray<PendingChange>> => {
    running ??= propose().finally(() => (running = null))
    return running
  }

  const lookSoon = (): void => {
    proposeExpiries().catch((error: unknown) =>
      logger.warn('Could not look for memory files to expire', error),
    )
  }

  return {
    async noteViewed(path) {
      const parsed = parseMemoryPath(path)
      if (!parsed.ok || parsed.relative === '') return
      try {
        if (kindAt(memory.folder, parsed.relative) === 'file') readLog.noteRead(parsed.virtual)
      } catch (error) {
        logger.warn('Could not record a view in the read log', error)
      }
    },

    noteCommit: (commit) => readLog.noteCommit(commit),

    // In slices, so that the window's other questions are answered meanwhile: the first
    // meter of a big folder reads every file (20,000 files held the loop for seconds).
    stats: () =>
      consistentRead(
        memory.changeStamp,
        async (breathe) =>
          memoryStats(
            memory.folder,
            await (options.readTree ? options.readTree() : listTree(memory.folder, breathe)),
            readLog,
            cache,
            breathe,
          ),
        { slices: options.slices, changeEnded: memory.changeEnded },
      ),

    async expire(path) {
      const parsed = parseMemoryPath(path)
      if (!parsed.ok) throw new CairnError('invalid-path', parsed.message)
      const kind = parsed.relative === '' ? 'missing' : kindAt(memory.folder, parsed.relative)
      if (kind === 'missing' || kind === 'under-file') {
        throw new CairnError('not-found', `${parsed.virtual} does not exist.`)
      }
      if (kind !== 'file') {
        throw new CairnError(
          'not-a-file',
          `Only a file can be expired; ${parsed.virtual} is not one.`,
        )
      }
      const why = notKept(memory.folder, parsed.virtual)
      if (why !== null) {
        throw new CairnError(
          why === 'too large' ? 'too-large' : 'invalid-path',
          `${parsed.virtual} is not in History (${why === 'too large' ? `larger than ${MAX_VERSIONED_BYTES / (1024 * 1024)} MB` : 'History cannot track its name'}), so expiring it would lose it for good. It was kept; delete it yourself if you mean to.`,
        )
      }
      const outcome = await memory.execute(
        { command: 'delete', path: parsed.virtual },
        { actor: 'user' },
        { subject: EXPIRE_SUBJECT },
      )
      if (outcome.isError) {
        const text = typeof outcome.content === 'string' ? outcome.content : 'It was refused.'
        throw new CairnError(outcome.errorCode ?? 'io-error', text.replace(/^Error:\s*/, ''))
      }
      return {
        commit: outcome.commit,
        message: outcome.commit
          ? `Expired ${parsed.virtual}. History keeps it: you can bring it back from there.`
          : outcome.commitPending
            ? `Expired ${parsed.virtual}. It will appear in History with the next change, and can be brought back from there.`
            : `Expired ${parsed.virtual}.`,
      }
    },

    setExpireAfterDays(next) {
      if (next === days && (timer !== null || next === null)) return
      days = next
      if (timer) clearInterval(timer)
      timer = null
      if (days === null || closed) return
      timer = setInterval(lookSoon, options.checkEveryMs ?? EXPIRY_CHECK_MS)
      timer.unref?.()
      lookSoon()
    },

    proposeExpiries,

    async close() {
      closed = true
      if (timer) clearInterval(timer)
      timer = null
      await running?.catch(() => undefined)
      await readLog.close()
    },
  }
}

// What `relative` names in the memory folder, found through the folders' own handles (a
// folder swapped for a symlink is never followed).
function kindAt(folder: string, relative: string): Found['kind'] {
  const tree = new FolderTree(folder)
  try {
    return tree.find(relative).kind
  } finally {
    tree.close()
  }
}

/**
 * Why History holds no copy of the file at `virtual` (too large to version, or a name it
 * cannot track), or null when it does (or the file is gone).
 */
function notKept(folder: string, virtual: string): 'too large' | 'untracked name' | null {
  const parsed = parseMemoryPath(virtual)
  if (!parsed.ok || parsed.relative === '') return null
  const tree = new FolderTree(folder)
  try {
    const found = tree.find(parsed.relative)
    if (
      found.kind !== 'file' ||
      !keepsNoCopy(found.name, found.stats, found.parent.entry(found.name))
    )
      return null
    return found.stats.size > MAX_VERSIONED_BYTES ? 'too large' : 'untracked name'
  } finally {
    tree.close()
  }
}
