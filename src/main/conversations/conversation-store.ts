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
  // Loaded conversations; this process is the only writer, so the cache stays true.
  const cache = new Map<string, Conversation>()

  // One change at a time, in call order; a failed one does not block the next.
  const serial = createSerialQueue().run
  const fileOf = (id: string): string => path.join(dir, `${id}.json`)

  const load = async (id: string): Promise<Conversation> => {
    if (!CONVERSATION_ID.test(id)) throw notFound()
    const cached = cache.get(id)
    if (cached) return cached
    let raw: string
    try {
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
    if (conversation.id !== id) throw notFound()
    cache.set(id, conversation)
    return conversation
  }

  const save = async (conversation: Conversation): Promise<Conversation> => {
    const stored = { ...conversation, messageCount: conversation.messages.length }
    await writeJsonAtomic(fileOf(stored.id), serializeConversation(stored), logger)
    cache.set(stored.id, stored)
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
    get: (id) => serial(() => load(id)),
    update: (id, change) =>
      serial(async () => {
        const next = change(await load(id))
        return save({ ...next, id, updatedAt: Math.max(now(), next.updatedAt) })
      }),
    rename: (id, title) =>
      serial(async () => {
        const current = await load(id)
        return summarize(await save({ ...current, title: title.trim(), updatedAt: now() }))
      }),
    delete: (id) =>
      serial(async () => {
        try {
          await load(id)
        } catch (error) {
          if (!isCorrupt(error)) throw error
          await keepAside(dir, id)
          reported.delete(id)
          return
        }
        await rm(fileOf(id), { force: true })
        cache.delete(id)
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
          const hit = matchConversation(conversation, query ?? '')
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

/**
 * Moves the unreadable `<id>.json` into `conversations/cairn-damaged/` (as `<id>.json`, or
 * `<id>-2.json`… when an earlier one of that name is kept there already).
 */
async function keepAside(dir: string, id: string): Promise<void> {
  const aside = path.join(dir, DAMAGED_FOLDER)
  await mkdir(aside, { recursive: true, mode: 0o700 })
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
