import { randomUUID } from 'node:crypto'
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import type { Conversation, ConversationSearchHit, ConversationSummary } from '../../shared/types'
import { writeJsonAtomic } from '../lib/atomic-json'
import { CairnError } from '../lib/errors'
import { isMissing } from '../lib/disk'
import { consoleLogger, type Logger } from '../lib/logger'
import { createSerialQueue } from '../lib/serial-queue'
import {
  CONVERSATION_ID,
  deriveTitle,
  parseConversation,
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
}

/**
 * Conversations, one JSON file each in `<dataDir>/conversations/`, written atomically.
 * All changes go through one queue, so a rename while a turn is saving loses neither.
 */
export interface ConversationStore {
  /** Starts a conversation titled after its first message (nothing stored yet but the file). */
  create(firstText: string): Promise<Conversation>
  get(id: string): Promise<Conversation>
  /** Applies `change` to the latest stored version and saves it (updatedAt is set here). */
  update(id: string, change: (current: Conversation) => Conversation): Promise<Conversation>
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

  // One change at a time, in call order; a failed one does not block the next.
  const serial = createSerialQueue().run
  const fileOf = (id: string): string => path.join(dir, `${id}.json`)

  /**
   * The cached copy of `id`, unless another program wrote a valid version of the file since
   * Cairn last read or wrote it (another editor, a sync tool): that version is taken up then,
   * as the file's newest word, and the copy Cairn had is kept aside first when it holds
   * something that version lacks, so neither side is lost (fix13b-conv's gap). A damaged file
   * is left to `keepAsideIfDamaged`, which keeps it aside before the cached copy is saved.
   */
  const fresh = async (id: string, cached: Conversation): Promise<Conversation> => {
    const known = seen.get(id)
    if (!known) return cached
    let found: FileStamp
    let raw: string
    try {
      found = stampOf(await stat(fileOf(id)))
      if (sameStamp(found, known)) return cached
      raw = await readFile(fileOf(id), 'utf8')
    } catch (error) {
      if (isMissing(error)) {
        // Removed by another program: it is gone for the list too.
        cache.delete(id)
        seen.delete(id)
        throw notFound()
      }
      throw error
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
    const keptAs = holdsMore(cached, theirs) ? await keepCopyAside(dir, cached) : null
    logger.warn(
      `Conversation ${id} was changed by another program; Cairn took up that version${keptAs ? ` and kept its own copy as ${keptAs}` : ''}`,
      null,
    )
    cache.set(id, theirs)
    seen.set(id, found)
    outside.set(id, { at: now(), keptAs: keptAs ?? outside.get(id)?.keptAs ?? null })
    options.onChangedOutside?.(id)
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
      raw = await readFile(fileOf(id), 'utf8')
    } catch (error) {
      if (isMissing(error)) throw notFound()
      report(id, `Could not read conversation ${id}`, error)
      throw corrupt()
    }
    let conversation: Conversation
    try {
      conversation = parseConversation(raw)
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
   * Before `id`'s file is written over or removed: when another program changed it since Cairn
   * read or wrote it, and it is no longer a conversation file of that id, it is kept aside first
   * (its cached copy is then still saved, or the deletion goes on). Returns whether it was.
   */
  const keepAsideIfDamaged = async (id: string): Promise<boolean> => {
    const known = seen.get(id)
    if (!known) return false
    let raw: string
    try {
      const current = stampOf(await stat(fileOf(id)))
      if (sameStamp(current, known)) return false
      raw = await readFile(fileOf(id), 'utf8')
    } catch (error) {
      if (isMissing(error)) return false
      throw error
    }
    try {
      if (parseConversation(raw).id === id) return false
    } catch {
      // Damaged: kept aside below.
    }
    logger.warn(`Conversation ${id} was damaged by another program; kept aside`, null)
    await keepAside(dir, id)
    seen.delete(id)
    return true
  }

  const save = async (conversation: Conversation): Promise<Conversation> => {
    const stored = { ...conversation, messageCount: conversation.messages.length }
    await keepAsideIfDamaged(stored.id)
    await writeJsonAtomic(fileOf(stored.id), serializeConversation(stored), logger)
    cache.set(stored.id, stored)
    seen.set(stored.id, stampOf(await stat(fileOf(stored.id))))
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
    update: (id, change) =>
      serial(async () => {
        const next = change(await load(id))
        return told(await save({ ...next, id, updatedAt: Math.max(now(), next.updatedAt) }))
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
        const keptAside = await keepAsideIfDamaged(id)
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
            // Gone since the listing: nothing to show.
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
    raw = await readFile(file, 'utf8')
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

/** Where the copy Cairn had of a conversation another program replaced is kept. */
export const REPLACED_FOLDER = 'cairn-replaced'

/**
 * Writes Cairn's copy of `conversation` into `conversations/cairn-replaced/` (as `<id>.json`, or
 * `<id>-2.json`… never over an earlier one; the folder made as needed). Returns its name, for
 * people (relative to the conversations folder: no host path).
 */
async function keepCopyAside(dir: string, conversation: Conversation): Promise<string> {
  const aside = path.join(dir, REPLACED_FOLDER)
  for (let n = 1; ; n++) {
    const name = n === 1 ? `${conversation.id}.json` : `${conversation.id}-${n}.json`
    try {
      await stat(path.join(aside, name))
      continue
    } catch (error) {
      if (!isMissing(error)) throw error
    }
    await writeJsonAtomic(path.join(aside, name), serializeConversation(conversation))
    return `${REPLACED_FOLDER}/${name}`
  }
}

/**
 * Moves the unreadable `<id>.json` into `conversations/cairn-damaged/` (as `<id>.json`, or
 * `<id>-2.json`… when an earlier one of that name is kept there already). When something that is
 * not a folder holds that name, `cairn-damaged-2/`… is used instead.
 */
async function keepAside(dir: string, id: string): Promise<void> {
  const aside = await damagedFolder(dir)
  for (let n = 1; ; n++) {
    const target = path.join(aside, n === 1 ? `${id}.json` : `${id}-${n}.json`)
    try {
      await stat(target)
      continue
    } catch (error) {
      if (!isMissing(error)) throw error
    }
    await rename(path.join(dir, `${id}.json`), target)
    return
  }
}

/** Where deleted unreadable conversation files are kept, inside `conversations/`. */
export const DAMAGED_FOLDER = 'cairn-damaged'

/** How many names (`cairn-damaged`, `cairn-damaged-2`…) are tried for the kept folder. */
const DAMAGED_FOLDER_TRIES = 20

/** The first of `cairn-damaged/`, `cairn-damaged-2/`… that is (or can be made) a folder. */
async function damagedFolder(dir: string): Promise<string> {
  for (let n = 1; n <= DAMAGED_FOLDER_TRIES; n++) {
    const aside = path.join(dir, n === 1 ? DAMAGED_FOLDER : `${DAMAGED_FOLDER}-${n}`)
    try {
      await mkdir(aside, { mode: 0o700 })
      return aside
    } catch (error) {
      if (!isAlreadyThere(error)) throw error
    }
    if ((await stat(aside)).isDirectory()) return aside
  }
  throw new CairnError(
    'conversation-corrupt',
    `This damaged conversation cannot be kept aside: the names “${DAMAGED_FOLDER}” to “${DAMAGED_FOLDER}-${DAMAGED_FOLDER_TRIES}” in the conversations folder are all taken by files. Move those files away, then delete it again.`,
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

function notFound(): CairnError {
  return new CairnError('conversation-not-found', 'This conversation does not exist any more.')
}
