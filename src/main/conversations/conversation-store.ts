import { randomUUID } from 'node:crypto'
import { lstat, mkdir, readdir, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import type { Conversation, ConversationSearchHit, ConversationSummary } from '../../shared/types'
import { writeJsonAtomic } from '../lib/atomic-json'
import { atomicWrite } from '../lib/atomic-write'
import { CairnError } from '../lib/errors'
import {
  closeQuietly,
  disk,
  isMissing,
  isNotPlainFile,
  OPEN,
  readOpenPlainFile,
  readPlainFileAsync,
} from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { diskProblem, isDiskProblem } from '../lib/disk-errors'
import { consoleLogger, type Logger } from '../lib/logger'
import { createSerialQueue } from '../lib/serial-queue'
import {
  CONVERSATION_ID,
  deriveTitle,
  parseConversation,
  readBackProblem,
  salvageSummary,
  serializeConversation,
} from './conversation-file'
import { matchConversation, summarize } from './search'

export interface ConversationStoreOptions {
  readonly dataDir: string
  /** Milliseconds since the epoch; injectable so tests control ordering. */
  readonly now?: () => number
  /** New conversation ids; injectable for tests. */
  readonly newId?: () => string
  /** Told about conversation files that cannot be read (default: the console). */
  readonly logger?: Logger
  /**
   * Told when a conversation's file was found changed by another program, and that version
   * taken up (`ConversationSummary.changedOutside`): the list and an open view may show the old.
   */
  readonly onChangedOutside?: (id: string) => void
  /**
   * Whether a turn is running in the conversation (the chat service's `isRunning`): while one
   * is, another program's version is never taken up (the rest of the turn belongs after its
   * own question), and a file removed meanwhile is written back with the turn.
   */
  readonly busy?: (id: string) => boolean
}

/**
 * Conversations, one JSON file each in `<dataDir>/conversations/`, written atomically.
 * All changes go through one queue, so a rename while a turn is saving loses neither.
 */
export interface ConversationStore {
  /** Starts a conversation titled after its first message (nothing stored yet but the file). */
  create(firstText: string): Promise<Conversation>
  get(id: string): Promise<Conversation>
  /**
   * Applies `change` to the latest stored version and saves it (updatedAt is set here, unless
   * `touch` is false: a change that is no news, such as a dismissed notice, keeps the
   * conversation's place in the list). A `change` that returns `current` itself saves nothing.
   */
  update(
    id: string,
    change: (current: Conversation) => Conversation,
    options?: { readonly touch?: boolean },
  ): Promise<Conversation>
  rename(id: string, title: string): Promise<ConversationSummary>
  /**
   * Removes the conversation. An unreadable file is moved into `conversations/cairn-damaged/`
   * instead (never destroyed: it may be repaired by hand, or read by a newer build).
   */
  delete(id: string): Promise<void>
  /**
   * Newest first; with a query, only conversations whose title or text matches. A file that
   * cannot be read is listed too, as `unreadable`, so it never vanishes without a sign.
   */
  list(query?: string): Promise<ReadonlyArray<ConversationSearchHit>>
}

/** Opens the conversation store of `dataDir`. */
export function createConversationStore(options: ConversationStoreOptions): ConversationStore {
  const dir = path.join(options.dataDir, 'conversations')
  const now = options.now ?? Date.now
  const newId = options.newId ?? (() => `c_${randomUUID().replaceAll('-', '')}`)
  const logger = options.logger ?? consoleLogger
  const busy = options.busy ?? (() => false)
  // Each unreadable file is reported once, not at every listing.
  const reported = new Set<string>()
  const report = (id: string, message: string, error: unknown): void => {
    if (reported.has(id)) return
    reported.add(id)
    logger.warn(message, error)
  }
  // Loaded conversations. This process is the only writer Cairn knows of, but another program
  // (a sync tool, a hand edit) may still damage a file: the size and time each file had when it
  // was last read or written are kept, and checked again before the file is saved or deleted.
  const cache = new Map<string, Conversation>()
  const seen = new Map<string, FileStamp>()
  // Conversations whose file another program changed, and which Cairn then took up, this
  // session: said with each copy handed out, so the person is told (never silently).
  const outside = new Map<string, ChangedOutside>()
  const told = (conversation: Conversation): Conversation => {
    const changed = outside.get(conversation.id)
    return changed ? { ...conversation, changedOutside: changed } : conversation
  }
  const tell = (id: string, how: ChangedOutside['how'], keptAs: string | null): void => {
    outside.set(id, { at: now(), how, keptAs })
    options.onChangedOutside?.(id)
  }
  /**
   * Writes `text` (a version of `id`) into `cairn-replaced/`; returns its name for people, or
   * null when it could not be kept (said in the log). Never throws: a copy that cannot be kept
   * aside must not hide the conversation nor stop a turn from being saved.
   */
  const keepTextAside = async (id: string, text: string): Promise<string | null> => {
    try {
      return await keepCopyAside(dir, id, text)
    } catch (error) {
      logger.warn(`Could not keep a copy of conversation ${id} aside`, error)
      return null
    }
  }

  // One change at a time, in call order; a failed one does not block the next.
  const serial = createSerialQueue().run
  const fileOf = (id: string): string => path.join(dir, `${id}.json`)

  /**
   * The cached copy of `id`, unless another program wrote a valid version of the file since
   * Cairn last read or wrote it (another editor, a sync tool): when no turn is running, that
   * version is taken up then, as the file's newest word, and the copy Cairn had is kept aside
   * first when it holds something that version lacks, so neither side is lost (fix13b-conv's
   * gap). While a turn runs, Cairn's copy goes on (the rest of the turn belongs after its own
   * question) and the other version is kept aside instead (review14-review R2); a file removed
   * meanwhile is written back with the turn, never dropped with it (R1). A damaged file is left
   * to `keepAsideIfChanged`, which keeps it aside before the cached copy is saved.
   */
  const fresh = async (id: string, cached: Conversation): Promise<Conversation> => {
    const known = seen.get(id)
    if (!known) return cached
    let found: FileStamp
    let raw: string
    try {
      found = stampOf(await stat(fileOf(id)))
      if (sameStamp(found, known)) return cached
      raw = await readText(fileOf(id))
    } catch (error) {
      if (!isMissing(error)) throw error
      if (busy(id)) {
        logger.warn(
          `Conversation ${id}'s file was removed by another program while a turn ran; Cairn writes it back with the turn`,
          null,
        )
        seen.delete(id)
        tell(id, 'written-back', null)
        return cached
      }
      // Removed by another program while idle: it is gone for the list too.
      cache.delete(id)
      seen.delete(id)
      outside.delete(id)
      throw notFound()
    }
    let theirs: Conversation
    try {
      theirs = parseConversation(raw)
      if (theirs.id !== id) return cached
    } catch {
      return cached
    }
    // Touched, not changed (a copy put back, its mode changed): nothing to take up or tell.
    if (sameContent(theirs, cached)) {
      seen.set(id, found)
      return cached
    }
    if (busy(id)) {
      const keptAs = await keepTextAside(id, raw)
      logger.warn(
        `Conversation ${id} was changed by another program while a turn ran; Cairn kept its own copy${keptAs ? ` and kept that version as ${keptAs}` : ' (that version could not be kept aside)'}`,
        null,
      )
      seen.set(id, found)
      tell(id, 'kept-own', keptAs)
      return cached
    }
    let keptAs: string | null = null
    if (holdsMore(cached, theirs)) {
      keptAs = await keepTextAside(id, conversationText(cached))
      // Cairn's copy could not be kept: it stays the one shown, and is tried again next time.
      if (keptAs === null) return cached
    }
    logger.warn(
      `Conversation ${id} was changed by another program; Cairn took up that version${keptAs ? ` and kept its own copy as ${keptAs}` : ''}`,
      null,
    )
    cache.set(id, theirs)
    seen.set(id, found)
    const before = outside.get(id)
    tell(id, 'taken-up', keptAs ?? (before?.how === 'taken-up' ? before.keptAs : null))
    return theirs
  }

  /** `id`'s conversation; `takeUp` false: the cached copy as it is (a delete needs no newer). */
  const load = async (id: string, takeUp = true): Promise<Conversation> => {
    if (!CONVERSATION_ID.test(id)) throw notFound()
    const cached = cache.get(id)
    if (cached) return takeUp ? fresh(id, cached) : cached
    let raw: string
    let found: FileStamp
    try {
      // Stamped before reading: a change made while it is read shows as a change later.
      found = stampOf(await stat(fileOf(id)))
      raw = await readText(fileOf(id))
    } catch (error) {
      if (isMissing(error)) throw notFound()
      // A disk that fails is not a damaged file: said as it is, nothing kept, so the next
      // read tries again (told as damage, the person was offered to delete a sound file).
      const problem = isDiskProblem(error) ? diskProblem(error) : null
      if (problem) {
        logger.warn(`Could not read conversation ${id}`, error)
        throw new CairnError(
          problem.code,
          `Cairn could not read this conversation because ${problem.reason}. Nothing was changed.`,
        )
      }
      report(id, `Could not read conversation ${id}`, error)
      throw corrupt()
    }
    let conversation: Conversation
    try {
      // A malformed mark of the last turn is left out, said once: the conversation reads. Both
      // marks bad are said in that one line (a line each, the second was lost to the once).
      const badMarks: string[] = []
      conversation = parseConversation(raw, (problem) => badMarks.push(problem))
      if (badMarks.length > 0) {
        const what = badMarks.length === 1 ? 'a malformed mark was' : 'malformed marks were'
        report(`${id}:mark`, `Conversation ${id}: ${what} ignored (${badMarks.join('; ')})`, null)
      }
    } catch (error) {
      report(id, `Conversation ${id} is not a valid conversation file`, error)
      throw corrupt()
    }
    // A copy under another name (a backup, a file renamed by hand): Cairn cannot open it under
    // its file's name nor save it under its own, so it is unreadable, listed and deletable.
    if (conversation.id !== id) {
      report(id, `Conversation file ${id}.json holds another conversation's id`, conversation.id)
      throw corrupt()
    }
    cache.set(id, conversation)
    seen.set(id, found)
    return conversation
  }

  /**
   * Before `id`'s file is written over (`saving`) or removed: when another program changed it
   * since Cairn read or wrote it, and it is no longer a conversation file of that id, it is
   * moved aside into `cairn-damaged/` (its cached copy is then still saved, or the deletion
   * goes on) and the person is told. Before a save, a changed file that is still a valid
   * version of the conversation is copied into `cairn-replaced/` first, never written over
   * without a trace (review14-review R3). Returns whether the file was moved aside.
   */
  const keepAsideIfChanged = async (id: string, saving: boolean): Promise<boolean> => {
    const known = seen.get(id)
    if (!known) return false
    let raw: string
    let found: FileStamp
    try {
      found = stampOf(await stat(fileOf(id)))
      if (sameStamp(found, known)) return false
      raw = await readText(fileOf(id))
    } catch (error) {
      if (isMissing(error)) return false
      throw error
    }
    let theirs: Conversation | null = null
    try {
      theirs = parseConversation(raw)
    } catch {
      // Damaged: moved aside below.
    }
    if (theirs?.id === id) {
      if (!saving) return false
      const cached = cache.get(id)
      if (!cached || !sameContent(theirs, cached)) {
        const keptAs = await keepTextAside(id, raw)
        logger.warn(
          `Conversation ${id} was changed by another program as Cairn saved it${keptAs ? `; that version is kept as ${keptAs}` : ''}`,
          null,
        )
        tell(id, 'kept-own', keptAs)
      }
      seen.set(id, found)
      return false
    }
    logger.warn(`Conversation ${id} was damaged by another program; kept aside`, null)
    const keptAs = await keepAside(dir, id)
    seen.delete(id)
    if (saving) tell(id, 'damaged', keptAs)
    return true
  }

  /**
   * After Cairn's rename: when the file it replaced (held open as `replaced`, a descriptor only
   * read, closed quietly: its close reports nothing about the save) was written to
   * since it was looked at (`looked`), that write is kept aside too, if it is a valid version
   * Cairn did not have (`before`): never overwritten without a trace (review14-review R3).
   */
  const keepLateWrite = async (
    id: string,
    replaced: number,
    looked: FileStamp,
    before: Conversation | undefined,
  ): Promise<void> => {
    try {
      const late = stampOf(disk.fstatSync(replaced))
      if (late.size === looked.size && late.mtimeMs === looked.mtimeMs) return
      if (late.size > OWN_FILE_CAP.CONVERSATION) {
        // Larger than any conversation: nothing of one to keep, and never read whole (rdisk30).
        logger.warn(
          `Conversation ${id}'s replaced file was made larger than any conversation as Cairn saved it; not read`,
          null,
        )
        return
      }
      // Capped too: a file grown past the cap after the look above is not read whole either.
      const raw = readOpenPlainFile(replaced, OWN_FILE_CAP.CONVERSATION).toString('utf8')
      const theirs = parseConversation(raw)
      if (theirs.id !== id || (before && sameContent(theirs, before))) return
      const keptAs = await keepTextAside(id, raw)
      logger.warn(
        `Conversation ${id} was changed by another program as Cairn saved it${keptAs ? `; that version is kept as ${keptAs}` : ''}`,
        null,
      )
      tell(id, 'kept-own', keptAs)
    } catch (error) {
      // Half written or not a conversation: nothing of the conversation to keep.
      logger.warn(`Could not look again at conversation ${id}'s replaced file`, error)
    }
  }

  const save = async (conversation: Conversation): Promise<Conversation> => {
    const stored = { ...conversation, messageCount: conversation.messages.length }
    const id = stored.id
    // Cairn's own stamp is taken from the temp file before the rename, so another program's
    // write just after it is never recorded as Cairn's (it shows as a change next time).
    const temp: { stamp?: FileStamp; replaced?: number; looked?: FileStamp } = {}
    const closeReplaced = () => {
      if (temp.replaced !== undefined) closeQuietly(temp.replaced)
      temp.replaced = undefined
    }
    const before = cache.get(id)
    // Checked by the reader's own rules before it is written: a version Cairn would refuse to
    // read is a fault in Cairn, said in the log and to the person, and the file keeps the last
    // good version (rather than become "damaged" at the next start). The reader checks each
    // message alone, so the messages of the version held (read, or checked when saved) are not
    // checked again: the cost is that of the new messages, not of the whole conversation.
    const checked = new Set(before?.messages ?? [])
    const unchecked = { ...stored, messages: stored.messages.filter((m) => !checked.has(m)) }
    const problem = readBackProblem(JSON.stringify(serializeConversation(unchecked)), id)
    if (problem !== null) {
      logger.error(`Conversation ${id} was not saved: Cairn could not read it back (${problem})`)
      throw unreadableVersion()
    }
    try {
      await writeJsonAtomic(fileOf(id), serializeConversation(stored), logger, {
        // The last look at the file before the rename, after the (slow) flush.
        beforeRename: async (stats) => {
          temp.stamp = stampOf(stats)
          try {
            // Held open across the rename: an outside write that lands on the file being
            // replaced after this look (or opened it before the rename and writes after) goes
            // to this inode, which is looked at again below.
            // Never through a link nor waiting on a fifo (either is damage, kept aside next).
            temp.replaced = disk.openSync(fileOf(id), OPEN.READ | OPEN.NOFOLLOW | OPEN.NONBLOCK)
            temp.looked = stampOf(disk.fstatSync(temp.replaced))
          } catch (error) {
            if (!isMissing(error) && !isNotPlainFile(error)) throw error
          }
          if (await keepAsideIfChanged(id, true)) closeReplaced()
        },
      })
      if (temp.replaced !== undefined && temp.looked) {
        await keepLateWrite(id, temp.replaced, temp.looked, before)
      }
    } finally {
      // Saved or not, what its close reports changes nothing: the save's own result stands.
      closeReplaced()
    }
    cache.set(id, stored)
    let after: FileStamp | null = null
    try {
      after = stampOf(await stat(fileOf(id)))
    } catch (error) {
      if (!isMissing(error)) throw error
    }
    const ours = temp.stamp
    // The rename itself changes the file's ctime: the file is Cairn's when its inode, size and
    // modification time are still the temp file's.
    const isOurs =
      after !== null &&
      (!ours ||
        (after.ino === ours.ino && after.size === ours.size && after.mtimeMs === ours.mtimeMs))
    if (isOurs && after) seen.set(id, after)
    else if (ours) seen.set(id, ours)
    else seen.delete(id)
    return stored
  }

  return {
    create: (firstText) =>
      serial(async () => {
        const time = now()
        return save({
          id: newId(),
          title: deriveTitle(firstText),
          createdAt: time,
          updatedAt: time,
          messageCount: 0,
          messages: [],
          toolCommits: {},
        })
      }),
    get: (id) => serial(async () => told(await load(id))),
    update: (id, change, { touch = true } = {}) =>
      serial(async () => {
        const current = await load(id)
        const next = change(current)
        if (next === current) return told(current)
        const updatedAt = touch ? Math.max(now(), next.updatedAt) : next.updatedAt
        return told(await save({ ...next, id, updatedAt }))
      }),
    rename: (id, title) =>
      serial(async () => {
        const current = await load(id)
        return summarize(told(await save({ ...current, title: title.trim(), updatedAt: now() })))
      }),
    delete: (id) =>
      serial(async () => {
        try {
          await load(id, false)
        } catch (error) {
          if (!isCorrupt(error)) throw error
          await keepAside(dir, id)
          reported.delete(id)
          return
        }
        const keptAside = await keepAsideIfChanged(id, false)
        if (!keptAside) await rm(fileOf(id), { force: true })
        cache.delete(id)
        seen.delete(id)
        outside.delete(id)
      }),
    list: (query) =>
      serial(async () => {
        let names: string[]
        try {
          names = await readdir(dir)
        } catch (error) {
          // No folder yet: no conversation has been started.
          if (!isMissing(error)) logger.warn('Could not list the conversations folder', error)
          return []
        }
        const hits: ConversationSearchHit[] = []
        for (const name of names) {
          const id = name.endsWith('.json') ? name.slice(0, -'.json'.length) : ''
          if (!CONVERSATION_ID.test(id)) continue
          let conversation: Conversation
          try {
            conversation = await load(id)
          } catch (error) {
            // Gone since the listing, or a disk that failed its read (logged by load; listed
            // again by the next list, never as damaged): nothing to show now.
            if (!isCorrupt(error)) continue
            // A corrupt file (reported by load) is shown as such, for the person to delete; it
            // must not hide the others.
            const summary = await unreadableSummary(fileOf(id), id)
            const needle = (query ?? '').trim().toLowerCase()
            if (!needle || summary.title.toLowerCase().includes(needle)) {
              hits.push({ conversation: summary, excerpt: null })
            }
            continue
          }
          // No query (or a blank one) matches every conversation, without an excerpt.
          const hit = matchConversation(told(conversation), query ?? '')
          if (hit) hits.push(hit)
        }
        return hits.sort(
          (a, b) =>
            b.conversation.updatedAt - a.conversation.updatedAt ||
            b.conversation.createdAt - a.conversation.createdAt,
        )
      }),
  }
}

/** The title an unreadable conversation is listed under when its own cannot be recovered. */
export const UNREADABLE_TITLE = 'Unreadable conversation'

/** What can be told of an unreadable conversation file: see `salvageSummary`. */
async function unreadableSummary(file: string, id: string): Promise<ConversationSummary> {
  let raw = ''
  let modified = 0
  try {
    modified = (await stat(file)).mtimeMs
    raw = await readText(file)
  } catch {
    // Nothing more can be recovered; the entry still stands, under the fallback title.
  }
  const salvaged = salvageSummary(raw)
  const updatedAt = salvaged.updatedAt ?? modified
  return {
    id,
    title: salvaged.title ?? UNREADABLE_TITLE,
    createdAt: salvaged.createdAt ?? updatedAt,
    updatedAt,
    messageCount: 0,
    unreadable: true,
  }
}

type ChangedOutside = NonNullable<ConversationSummary['changedOutside']>

/**
 * What Cairn last saw of a file: another program's write changes at least one of these (an
 * editor saving through a new file changes the inode; a same-size write in the same
 * millisecond the change time, which no program sets by hand).
 */
interface FileStamp {
  readonly size: number
  readonly mtimeMs: number
  readonly ctimeMs: number
  readonly ino: number
}

function stampOf(stats: {
  size: number
  mtimeMs: number
  ctimeMs: number
  ino: number
}): FileStamp {
  return { size: stats.size, mtimeMs: stats.mtimeMs, ctimeMs: stats.ctimeMs, ino: stats.ino }
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino
}

function sameContent(a: Conversation, b: Conversation): boolean {
  return JSON.stringify(serializeConversation(a)) === JSON.stringify(serializeConversation(b))
}

/**
 * True when `ours` holds something `theirs` does not: a message (theirs is not ours with more
 * after it), its title, or a tool call's commit link.
 */
function holdsMore(ours: Conversation, theirs: Conversation): boolean {
  if (ours.title !== theirs.title || ours.messages.length > theirs.messages.length) return true
  if (Object.entries(ours.toolCommits).some(([tool, oid]) => theirs.toolCommits[tool] !== oid)) {
    return true
  }
  return ours.messages.some(
    (message, i) => JSON.stringify(message) !== JSON.stringify(theirs.messages[i]),
  )
}

/** Where a version of a conversation that another program's change replaced is kept. */
export const REPLACED_FOLDER = 'cairn-replaced'

/** The whole file text Cairn writes for `conversation`. */
function conversationText(conversation: Conversation): string {
  return `${JSON.stringify(serializeConversation(conversation), null, 2)}\n`
}

/**
 * Writes `text`, a version of conversation `id`, into `conversations/cairn-replaced/` (as
 * `<id>.json`, or `<id>-2.json`… never over an earlier one; `cairn-replaced-2/`… when a file
 * holds the folder's name). Returns its name, for people (relative to the conversations
 * folder: no host path).
 */
async function keepCopyAside(dir: string, id: string, text: string): Promise<string> {
  const folder = await asideFolder(dir, REPLACED_FOLDER)
  const name = await freeName(path.join(dir, folder), id)
  await atomicWrite(path.join(dir, folder, name), text)
  return `${folder}/${name}`
}

/**
 * Moves the unreadable `<id>.json` into `conversations/cairn-damaged/` (as `<id>.json`, or
 * `<id>-2.json`… when an earlier one of that name is kept there already). When something that is
 * not a folder holds that name, `cairn-damaged-2/`… is used instead. Returns its name, for
 * people (relative to the conversations folder).
 */
async function keepAside(dir: string, id: string): Promise<string> {
  const folder = await asideFolder(dir, DAMAGED_FOLDER)
  const name = await freeName(path.join(dir, folder), id)
  await rename(path.join(dir, `${id}.json`), path.join(dir, folder, name))
  return `${folder}/${name}`
}

/**
 * A conversation file's text, read as `readPlainFile` reads (never through a link, never
 * waiting on a fifo nor reading a device without end). Anything but a plain file reads as
 * empty: damage, which no conversation parses from (listed unreadable, kept aside on delete).
 */
async function readText(file: string): Promise<string> {
  try {
    return (await readPlainFileAsync(file, OWN_FILE_CAP.CONVERSATION)).toString('utf8')
  } catch (error) {
    if (isNotPlainFile(error)) return ''
    throw error
  }
}

/** The first of `<id>.json`, `<id>-2.json`… that nothing has in `folder` (a link counts). */
async function freeName(folder: string, id: string): Promise<string> {
  for (let n = 1; ; n++) {
    const name = n === 1 ? `${id}.json` : `${id}-${n}.json`
    try {
      await lstat(path.join(folder, name))
    } catch (error) {
      if (isMissing(error)) return name
      throw error
    }
  }
}

/** Where deleted unreadable conversation files are kept, inside `conversations/`. */
export const DAMAGED_FOLDER = 'cairn-damaged'

/** How many names (`cairn-damaged`, `cairn-damaged-2`…) are tried for a kept-aside folder. */
const ASIDE_FOLDER_TRIES = 20

/**
 * The first of `<base>/`, `<base>-2/`… in `dir` that is (or can be made) a folder; its name.
 * A file or a link holding one of these names (review13-ui R5, review14-review R4) is passed over.
 *
 * Unlike history.git's `cairn-damaged/` (history/objects/damaged-folder.ts), whose non-folder
 * is moved out of the way: everything in history.git is Cairn's, so a file at that name is
 * itself damage, while the conversations folder is one the person browses and a sync tool may
 * fill, where Cairn moves only the conversation files it judged damaged, never a file it did
 * not make (so it passes the name over, and says so when twenty are taken).
 */
async function asideFolder(dir: string, base: string): Promise<string> {
  for (let n = 1; n <= ASIDE_FOLDER_TRIES; n++) {
    const name = n === 1 ? base : `${base}-${n}`
    try {
      await mkdir(path.join(dir, name), { mode: 0o700 })
      return name
    } catch (error) {
      if (!isAlreadyThere(error)) throw error
    }
    // Never followed: a link there (to a folder outside the data folder) is passed over as a
    // file is, so nothing kept aside leaves the conversations folder (disk29).
    if ((await lstat(path.join(dir, name))).isDirectory()) return name
  }
  throw new CairnError(
    'conversation-corrupt',
    base === DAMAGED_FOLDER
      ? `This damaged conversation cannot be kept aside: the names “${base}” to “${base}-${ASIDE_FOLDER_TRIES}” in the conversations folder are all taken by files. Move those files away, then delete it again.`
      : `A copy of this conversation cannot be kept aside: the names “${base}” to “${base}-${ASIDE_FOLDER_TRIES}” in the conversations folder are all taken by files.`,
  )
}

function isAlreadyThere(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'EEXIST'
}

function isCorrupt(error: unknown): boolean {
  return error instanceof CairnError && error.code === 'conversation-corrupt'
}

function corrupt(): CairnError {
  return new CairnError(
    'conversation-corrupt',
    'This conversation’s file is damaged (cut short, or not a conversation file), so it cannot be shown. You can delete it: the file is then kept aside in the conversations folder, not destroyed.',
  )
}

function unreadableVersion(): CairnError {
  return new CairnError(
    'internal',
    'This conversation could not be saved: Cairn made a version of it that it could not read back, a fault in Cairn (it is in the log). The conversation keeps what it had before.',
  )
}

function notFound(): CairnError {
  return new CairnError('conversation-not-found', 'This conversation does not exist any more.')
}
