/**
 * The intent of the `delete` or `rename` in flight, kept on disk while it runs: a kill between
 * the move and its commit left it for the next open, which saved it as Cairn's "Save changes
 * found at start-up" — no conversation, no `tool_use` id, and the conversation's tool card
 * without its commit (hunt13-tool D1). About 40% of random kills landed there: the folder
 * fsyncs come after the change.
 *
 * Once the tool has checked the command and just before it touches the folder,
 * `history.git/cairn-command` gets its commit's facts (actor, conversation, tool_use id,
 * command, subject), its paths and `main` as it was. Not fsynced: a kill leaves the page cache
 * to the kernel, and a power cut losing it only loses the attribution (the open's commit is
 * then a `recovery`, as before). It is written in place, padded, without truncating or
 * renaming (each would wait for a discard on this file system), and blanked once the command's
 * commit is made, and by the next open.
 *
 * The open credits the command only with exactly its outcome, with `main` still where the
 * command started: a delete's path gone (it was in `HEAD`); a rename's old path gone and its
 * new one holding exactly what `HEAD` holds at the old (the same blob, or the same subtree).
 * Anything else — the move not made, or made and then edited by a person while Cairn was down
 * — is the open's `recovery` commit, never Claude's (review13-tool R1).
 *
 * Writes (create, str_replace, insert) have no note: their commit is made before the file is
 * renamed into place, so a kill either leaves the folder unchanged or the rename to redo
 * (redo-renames.ts); whatever else differs there after a kill is someone else's change.
 */

import path from 'node:path'
import { closeQuietly, disk, isCode, OPEN } from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { readOwnRecord } from './objects/damaged-folder'
import { isDiskProblem } from '../lib/disk-errors'
import type { Logger } from '../lib/logger'
import { entryNameProblem } from './damage'
import { isOid } from './main-ref'
import { hashObject } from './objects/object-database'
import { segmentsOf } from './paths'
import type { CommitIntent, Repo } from './repo'
import type { IndexEntry } from './side-index'
import { nodeAt, type Node } from './tree-state'
import { scanPath, type ScanReport } from './work-tree'

/** The intent file's name in the git directory. */
export const COMMAND_INTENT_FILE = 'cairn-command'

/** Written sizes are rounded up to this, so that a shorter record overwrites a longer one. */
const BLOCK = 4096

interface CommandIntent {
  readonly version: 2
  /** `main` when the command started: its change is uncommitted only while it still is. */
  readonly base: string | null
  readonly intent: CommitIntent
  /** Relative paths: a delete's one, a rename's old and new. */
  readonly paths: ReadonlyArray<string>
  /** A create's: the blob id of the text it writes. */
  readonly blob?: string
}

/** Records and clears the intent of the move in flight (one at a time, in the queue). */
export interface CommandIntents {
  record(
    base: string | null,
    intent: CommitIntent,
    paths: ReadonlyArray<string>,
    text?: string,
  ): void
  clear(): void
}

/**
 * The command intents of the history at `gitdir`. Starts by removing any left from before
 * (the open has used it): an old record never speaks for a later command.
 */
export function commandIntents(gitdir: string, logger: Logger): CommandIntents {
  const file = path.join(gitdir, COMMAND_INTENT_FILE)
  // Bytes written so far: a clear blanks them all. `live`: a record is there to clear. One
  // left from before (the open has used it) is blanked now, not unlinked (an unlink waits for
  // a discard): an old record never speaks for a later open or command.
  // Anything but a plain file in its place (which the open's read kept aside, unless it came
  // since) would fail every record and clear: kept aside too, and a fresh one made. So is one
  // larger than any note (a sparse file of gigabytes), whose clear would write all of it.
  // Never failing the open for it (a record lost only loses an attribution).
  try {
    const there = disk.lstatIfThere(file)
    if (there && (!there.isFile() || there.size > OWN_FILE_CAP.RECORDS)) {
      readOwnRecord(gitdir, file)
    }
  } catch (error) {
    logger.warn('Could not look at the note of the command in flight', error)
  }
  let written = sizeOf(file)
  let live = written > 0
  const writeAt0 = (bytes: Buffer): void => {
    // In place: never emptied (`O_TRUNC` frees its block, which waits for a discard).
    let fd: number
    try {
      fd = disk.openSync(file, OPEN.READ_WRITE | OPEN.NOFOLLOW)
    } catch (error) {
      if (!isCode(error, 'ENOENT')) throw error
      fd = disk.openSync(file, OPEN.READ_WRITE_NEW | OPEN.NOFOLLOW, 0o600)
    }
    try {
      let done = 0
      while (done < bytes.length) done += disk.writeSync(fd, bytes.subarray(done), done)
    } finally {
      // Never fsynced (a record lost only loses an attribution), so its close reports nothing
      // relied on: one that threw after the write left the record taken as unwritten, never
      // blanked after its commit, and the next shorter record read as garbage.
      closeQuietly(fd)
    }
  }
  const clear = (): void => {
    if (!live) return
    live = false
    try {
      writeAt0(Buffer.alloc(written, 0x20))
    } catch (error) {
      // A record left behind names `main` before its commit: the open sees it is done.
      logger.warn('Could not clear the note of the command in flight', error)
    }
  }
  clear()
  return {
    record(base, intent, paths, text) {
      const record: CommandIntent = {
        version: 2,
        base,
        intent,
        paths,
        ...(text === undefined ? {} : { blob: hashObject('blob', Buffer.from(text, 'utf8')) }),
      }
      const json = Buffer.from(JSON.stringify(record), 'utf8')
      const size = Math.max(written, Math.ceil((json.length + 1) / BLOCK) * BLOCK)
      const bytes = Buffer.alloc(size, 0x20)
      json.copy(bytes)
      try {
        writeAt0(bytes)
        written = size
        live = true
      } catch (error) {
        // Only the attribution after a kill depends on it: the command runs all the same.
        logger.warn(
          "Could not note the command in flight; a kill now would save it as Cairn's",
          error,
        )
      }
    },
    clear,
  }
}

/**
 * At open, before changes found in the folder are saved: commits the move of the command a
 * kill interrupted, with that command's facts (its conversation and `tool_use` id), when the
 * folder holds exactly its outcome, and returns that commit (null when there is none: no
 * record, `main` moved on since, the folder not exactly as the move left it). Everything else
 * the open finds stays its `recovery` commit.
 */
export async function commitInterruptedCommand(
  repo: Repo,
  report?: ScanReport,
  logger?: Logger,
): Promise<IndexEntry | null> {
  const file = path.join(repo.store.gitdir, COMMAND_INTENT_FILE)
  let raw: string
  try {
    // A fifo, a link or a folder in its place is kept aside and read as no record.
    const bytes = readOwnRecord(repo.store.gitdir, file)
    if (bytes === null) return null
    raw = bytes.toString('utf8').trim()
  } catch (error) {
    if (isDiskProblem(error)) throw error
    return null
  }
  if (raw === '') return null
  let record: CommandIntent
  try {
    record = JSON.parse(raw) as CommandIntent
  } catch {
    // Cut short by the kill while it was written: its command had not begun.
    return null
  }
  const problem = recordProblem(record)
  if (problem) {
    logger?.warn(`The record of an interrupted command was dropped: ${problem}`)
    return null
  }
  // Committed before the kill, or a history that moved on: nothing of it is unsaved.
  if (record.base !== repo.head()) return null
  if (!(await holdsOutcome(repo, record, report))) return null
  return repo.commit(record.paths, record.intent, report ? { report } : {})
}

// The folder holds exactly what the move makes of `HEAD`, nothing more, nothing less.
async function holdsOutcome(
  repo: Repo,
  record: CommandIntent,
  report: ScanReport | undefined,
): Promise<boolean> {
  const scan = (relative: string, committed: Node | null): Promise<Node | null> =>
    scanPath(repo.store, repo.workRoot, segmentsOf(relative), committed, {
      report,
      stats: repo.stats,
    })
  const root = repo.root()
  const [from, to] = record.paths
  if (record.intent.command === 'create') {
    if (!isEmpty(await nodeAt(repo.store, root, segmentsOf(from!)))) return false
    const made = await scan(from!, null)
    return made?.kind === 'blob' && made.oid === record.blob
  }
  const before = await nodeAt(repo.store, root, segmentsOf(from!))
  if (isEmpty(before)) return false
  if (!isEmpty(await scan(from!, before))) return false
  if (record.intent.command === 'delete') return to === undefined
  if (to === undefined) return false
  if (!isEmpty(await nodeAt(repo.store, root, segmentsOf(to)))) return false
  const after = await scan(to, before)
  if (!after || !before || after.kind !== before.kind) return false
  if (after.kind === 'blob' && before.kind === 'blob') {
    return after.oid === before.oid && after.mode === before.mode
  }
  return after.oid !== null && after.oid === before.oid
}

function isEmpty(node: Node | null): boolean {
  return node === null || (node.kind === 'tree' && node.children?.size === 0)
}

function sizeOf(file: string): number {
  try {
    return disk.lstatSync(file).size
  } catch {
    return 0
  }
}

// The file is only data: a damaged or crafted one must not name anything outside the folder,
// nor put what it likes in a commit's author and trailers.
function recordProblem(record: CommandIntent): string | null {
  if (typeof record !== 'object' || record === null || record.version !== 2) {
    return 'not a record'
  }
  if (record.base !== null && !isOid(record.base)) return 'a base that is not a commit id'
  if (!Array.isArray(record.paths) || record.paths.length === 0 || record.paths.length > 2) {
    return 'paths that are not a list of one or two'
  }
  const intent = record.intent as unknown as Record<string, unknown> | null
  const wanted = intent?.command === 'rename' ? 2 : 1
  if (record.paths.length !== wanted) return 'paths that do not fit the command'
  if (intent?.command === 'create' && !(typeof record.blob === 'string' && isOid(record.blob))) {
    return 'a create without its blob'
  }
  for (const where of record.paths as ReadonlyArray<unknown>) {
    if (typeof where !== 'string' || where === '') return 'a path that is not one'
    if (!where.split('/').every((name) => entryNameProblem(name) === null)) {
      return 'a path the history may not hold'
    }
  }
  if (typeof intent !== 'object' || intent === null) return 'no commit facts'
  if (intent.actor !== 'claude' && intent.actor !== 'user') return 'an actor that is not one'
  if (!COMMANDS.has(intent.command as string)) return 'a command that is not one'
  if (typeof intent.subject !== 'string') return 'no subject'
  for (const key of ['conversationId', 'toolUseId'] as const) {
    if (intent[key] !== null && typeof intent[key] !== 'string') return `a bad ${key}`
  }
  return null
}

// Only moves are noted (a write's commit comes before its rename into place).
const COMMANDS = new Set(['delete', 'rename', 'create'])
