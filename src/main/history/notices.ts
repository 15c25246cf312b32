/**
 * Notices about the memory folder, raised once per file and session: files too large to
 * version, and secrets that arrived in a file edited outside Cairn.
 */

import { noticeSlot } from '../../shared/notice-slot'
import { runIds } from '../../shared/run-ids'
import type { MemoryNotice } from '../../shared/types'
import { CairnError } from '../lib/errors'
import type { Logger } from '../lib/logger'
import { escapeInvisible } from '../lib/text'
import { newSecrets } from '../memory'
import { DamagedHistoryError } from './damage'
import { isWithin, segmentsOf, toRelative, toVirtual } from './paths'
import type { Repo } from './repo'
import type { IndexEntry } from './side-index'
import { nodeAt, treeFromOid } from './tree-state'
import { MAX_VERSIONED_BYTES } from './work-tree'

/** The notices of one session. */
export interface Notices {
  /** The notices raised so far (and not resolved), oldest first, less those dismissed. */
  list(): ReadonlyArray<MemoryNotice>
  /** Every notice raised so far and not resolved, dismissed ones too. */
  kept(): ReadonlyArray<MemoryNotice>
  /**
   * Raises a notice, unless one of its kind for its path was raised already; a secret or a
   * keep-aside the person dismissed is replaced by a different one (another commit, another
   * name kept), which shows. `readClears: false` (a restore's refused write): a scan that reads
   * its file again does not clear it (`clearReadAgain`); a write of it does (`clearWritten`).
   */
  raise(notice: Omit<MemoryNotice, 'id'>, options?: { readonly readClears?: boolean }): void
  /** Drops the notice of `kind` for `path` (it was dealt with): raised again, it is new. */
  resolve(kind: MemoryNotice['kind'], path: string): void
  /**
   * Points `notice` at where its file went: resolved, and `to` raised in its place with
   * `notice`'s id (a dismissal of it, sent before the move, takes it there); one the person
   * dismissed stays dismissed (raised without telling anyone). A notice of its kind already at
   * `to` told of the file that was there, which the moved one took the place of: it goes
   * (cleared), and the moved one is kept.
   */
  move(
    notice: MemoryNotice,
    to: Omit<MemoryNotice, 'id'>,
    /** Whether a read clears it there; `notice`'s own rule when not given. */
    options?: { readonly readClears?: boolean },
  ): void
  /**
   * Hides the notice raised with `id` (that very raising, wherever its file went since),
   * dismissed by the person, from `list` until it is resolved; raised again meanwhile, it stays hidden (a different one raised for
   * its file replaces it, and shows). An id given in this run to a notice since resolved or
   * replaced changes nothing: the one in its place, even one that reads the same, was not the
   * one dismissed. An id never given is refused (`not-found`), and changes nothing.
   */
  dismiss(id: string): void
  /**
   * Clears the notices that tell of the state of a file (too large, name not allowed,
   * unreadable) or ask something of it (a secret to remove) whose file `isGone` (deleted outside
   * Cairn, by the tool or the Memory tab): each is resolved and its id told to the `onCleared`
   * listeners. A damaged copy (History's loss) and a keep-aside (what a sync did) stay.
   */
  clearGone(isGone: (path: string) => boolean): void
  /**
   * Clears the `unreadable` notices of `paths` (virtual), which a scan has just read: each is
   * resolved and its id told to the `onCleared` listeners.
   */
  clearReadAgain(paths: ReadonlyArray<string>): void
  /**
   * Clears the notices raised with `readClears: false` of `paths` (virtual), or of a folder
   * holding one of them, which a change of Cairn's has just written: Cairn may change them now.
   */
  clearWritten(paths: ReadonlyArray<string>): void
  /**
   * Clears the notices raised with `readClears: false` whose file or folder `isAsAsked` (virtual
   * path): a restore found it already as the person asked, or made it so. A restore asked
   * again and done is what such a notice waits for, whether or not it had to write.
   */
  clearSettled(isAsAsked: (path: string) => boolean): void
  onNotice(listener: (notice: MemoryNotice) => void): () => void
  /** Told the id of a notice the core no longer keeps because its file went (`clearGone`, `move`). */
  onCleared(listener: (id: string) => void): () => void
}

// Kinds that go when their file does: they tell of its state, or ask something of it.
const OF_THE_FILE: ReadonlySet<MemoryNotice['kind']> = new Set([
  'too-large',
  'name-not-allowed',
  'unreadable',
  'secret',
])

// Kinds that tell of something that happened (and may happen again) rather than of a state.
const HAPPENINGS: ReadonlySet<MemoryNotice['kind']> = new Set(['secret', 'kept-aside'])

/**
 * Whether two notices are the same telling: one kind, one file, one message, one commit. A
 * secret or a keep-aside that tells something else than the one dismissed in its file's place
 * is news the person has not seen.
 */
function sameTelling(a: Omit<MemoryNotice, 'id'>, b: Omit<MemoryNotice, 'id'>): boolean {
  return (
    a.kind === b.kind && a.path === b.path && a.message === b.message && a.commitOid === b.commitOid
  )
}

export function createNotices(logger: Logger): Notices {
  // One notice of each kind per file (its slot, `too-large:/memories/big.bin`), kept under its
  // slot; each raising gets an id of its own (`notice-7`), counted from 1 in the run, and keeps
  // it when it follows its file to a new name (it is the same notice there).
  const raised = new Map<string, MemoryNotice>()
  const dismissed = new Set<string>()
  // Slots whose notice a read does not clear: a restore's write was refused there, and reading
  // the file says nothing of whether Cairn may change it (restore27).
  const notByReading = new Set<string>()
  const listeners = new Set<(notice: MemoryNotice) => void>()
  const clearedListeners = new Set<(id: string) => void>()
  const ids = runIds('notice')
  const resolve = (slot: string): void => {
    raised.delete(slot)
    dismissed.delete(slot)
    notByReading.delete(slot)
  }
  // Resolved, and every window told to take it down.
  const clear = (slot: string): void => {
    const kept = raised.get(slot)
    if (!kept) return
    resolve(slot)
    for (const listener of clearedListeners) {
      try {
        listener(kept.id)
      } catch (error) {
        logger.error('A notice listener failed', error)
      }
    }
  }
  const clearSettled = (isAsAsked: (path: string) => boolean): void => {
    for (const slot of [...notByReading]) {
      const at = raised.get(slot)?.path
      if (at !== undefined && isAsAsked(at)) clear(slot)
    }
  }
  const raise = (
    notice: Omit<MemoryNotice, 'id'>,
    hidden: boolean,
    id?: string,
    readClears = true,
  ): void => {
    const slot = noticeSlot(notice)
    const kept = raised.get(slot)
    // One the person dismissed gives way to a different telling of something that happened
    // again to its file (a new secret brought in by a later outside edit, a second keep-aside):
    // news they have not seen (redges2 R2). A state raised again (each scan raises a file too
    // large, unreadable), even in other words (the generic `unreadable` after a kept-aside
    // one's), stays hidden.
    if (
      kept &&
      !(dismissed.has(slot) && HAPPENINGS.has(notice.kind) && !sameTelling(kept, notice))
    ) {
      return
    }
    if (kept) resolve(slot)
    const full: MemoryNotice = { id: id ?? ids.next(), ...notice }
    raised.set(slot, full)
    if (!readClears) notByReading.add(slot)
    if (hidden) {
      dismissed.add(slot)
      return
    }
    for (const listener of listeners) {
      try {
        listener(full)
      } catch (error) {
        // A listener's failure must not stop the others.
        logger.error('A notice listener failed', error)
      }
    }
  }
  return {
    list: () => [...raised.entries()].filter(([slot]) => !dismissed.has(slot)).map(([, n]) => n),
    kept: () => [...raised.values()],
    raise: (notice, options) => raise(notice, false, undefined, options?.readClears ?? true),
    resolve: (kind, path) => resolve(noticeSlot({ kind, path })),
    move(notice, to, options) {
      const slot = noticeSlot(notice)
      const hidden = dismissed.has(slot)
      const readClears = options?.readClears ?? !notByReading.has(slot)
      resolve(slot)
      // The file now at `to` is the moved one: what the notice there told of is gone with the
      // file it was about, and the moved one's is what is true now (polish26).
      if (noticeSlot(to) !== slot) clear(noticeSlot(to))
      // With its id: a dismissal of it on its way from a window takes it where it went.
      raise(to, hidden, notice.id, readClears)
    },
    clearGone(isGone) {
      for (const [slot, kept] of [...raised]) {
        if (OF_THE_FILE.has(kept.kind) && isGone(kept.path)) clear(slot)
      }
    },
    clearReadAgain(paths) {
      const read = new Set(paths)
      for (const [slot, kept] of [...raised]) {
        if (kept.kind === 'unreadable' && read.has(kept.path) && !notByReading.has(slot)) {
          clear(slot)
        }
      }
    },
    clearWritten(paths) {
      clearSettled((at) => paths.some((written) => isWithin(written, at)))
    },
    clearSettled,
    dismiss(id) {
      if (!ids.wasGiven(id)) {
        throw new CairnError('not-found', `No notice ${id} was raised in this run.`)
      }
      for (const [slot, kept] of raised) if (kept.id === id) dismissed.add(slot)
    },
    onNotice(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    onCleared(listener) {
      clearedListeners.add(listener)
      return () => clearedListeners.delete(listener)
    },
  }
}

/** The notice for a file too large to version (relative path). */
export function tooLargeNotice(relative: string): Omit<MemoryNotice, 'id'> {
  const virtual = toVirtual(relative)
  const limit = Math.round(MAX_VERSIONED_BYTES / (1024 * 1024))
  return {
    kind: 'too-large',
    path: virtual,
    message: `${virtual} is not versioned: too large (over ${limit} MB). It stays in your memory folder, but its changes are not kept in the history and it cannot be restored.`,
    commitOid: null,
  }
}

/**
 * The notice for an entry whose name holds a character the history refuses (relative path):
 * the name is shown with those characters escaped, so the message stays one readable line.
 */
export function nameNotAllowedNotice(relative: string): Omit<MemoryNotice, 'id'> {
  const virtual = toVirtual(relative)
  return {
    kind: 'name-not-allowed',
    path: virtual,
    message: `${escapeInvisible(virtual)} is not versioned: name not allowed (it holds a line break, a tab, another control character or a backslash). It stays in your memory folder, but its changes are not kept in the history and Claude cannot see it; rename it to keep it.`,
    commitOid: null,
  }
}

/**
 * The notice for an interrupted restore given up at open because the system refused it the
 * file or folder at `relative`: an `unreadable` notice, raised with `readClears: false` (a read
 * says nothing of whether Cairn may change it), that goes once a change of Cairn's writes it.
 */
export function restoreRefusedNotice(relative: string): Omit<MemoryNotice, 'id'> {
  const virtual = toVirtual(relative)
  return {
    kind: 'unreadable',
    path: virtual,
    message: `An interrupted restore could not be finished: Cairn may not change ${escapeInvisible(virtual)} (permission denied; it may belong to another account). The memory folder was saved as it is, and the history keeps its last version Cairn could read; give your account access to it, then restore again.`,
    commitOid: null,
  }
}

/**
 * The notice for a file whose stored version was found damaged after open, once the file no
 * longer held that content to write it again from (relative path). It says what is lost (that
 * one version, from History) and what is not (the file as it is now), in the person's words.
 */
export function damagedCopyNotice(relative: string): Omit<MemoryNotice, 'id'> {
  const virtual = toVirtual(relative)
  return {
    kind: 'damaged',
    path: virtual,
    message: `The history's copy of ${escapeInvisible(virtual)} from when Cairn started is damaged on disk and could not be repaired, usually because the file was changed or deleted outside Cairn meanwhile. The file as it is now is not affected and is versioned as usual; only that earlier version is lost, so History cannot show or restore it. If you need it, look in a backup.`,
    commitOid: null,
  }
}

/** The notice for a file or folder the system denied Cairn reading (relative path). */
export function unreadableNotice(relative: string): Omit<MemoryNotice, 'id'> {
  const virtual = toVirtual(relative)
  return {
    kind: 'unreadable',
    path: virtual,
    message: `${escapeInvisible(virtual)} is not versioned: Cairn cannot read it (permission denied; it may belong to another account). It stays in your memory folder as it is, and the history keeps its last saved version; give your account read access to it to version it again.`,
    commitOid: null,
  }
}

// A file Cairn may not read, kept aside by a change: its new name was never in the history, and
// its last version is there (under its old name) only when it ever was readable.
function keptUnreadableMessage(from: string, to: string, versioned: boolean): string {
  const history = versioned
    ? `the history keeps its last version Cairn could read as ${escapeInvisible(from)}`
    : 'the history has no version of it'
  return `${escapeInvisible(to)} is not versioned: Cairn cannot read it (permission denied; it may belong to another account). It was kept aside under this name by a change to ${escapeInvisible(from)}, and ${history}. Give your account read access to it to version it.`
}

/**
 * Points the notices about a file History holds no copy of (too large, name not allowed,
 * unreadable) at where a change moved it: a delete or restore that kept it aside, a rename.
 * The old notice would name a path that now holds another file, or nothing. Virtual paths; a folder's move
 * carries the notices of what is inside it.
 */
export function followMoves(
  notices: Notices,
  moves: ReadonlyArray<{
    readonly from: string
    readonly to: string
    /** For a file kept aside because Cairn may not read it: whether history holds `from`. */
    readonly versioned?: boolean
  }>,
): void {
  for (const { from, to, versioned } of moves) {
    // Dismissed ones too: they stay dismissed where the file went.
    for (const notice of notices.kept()) {
      if (
        notice.kind !== 'too-large' &&
        notice.kind !== 'name-not-allowed' &&
        notice.kind !== 'unreadable'
      ) {
        continue
      }
      if (notice.path !== from && !notice.path.startsWith(`${from}/`)) continue
      // Text only (no path rules): such a name may be one the rules refuse (a backslash).
      const moved = to + notice.path.slice(from.length)
      const shown = notice.kind === 'too-large' ? (text: string) => text : escapeInvisible
      // Kept aside because Cairn may not read it: from now on it tells of a read refused (a
      // refused restore's notice that was, too), which a read clears.
      const keptUnreadable =
        notice.kind === 'unreadable' && versioned !== undefined && notice.path === from
      notices.move(
        notice,
        {
          kind: notice.kind,
          path: moved,
          message: keptUnreadable
            ? keptUnreadableMessage(from, moved, versioned)
            : notice.message.replace(shown(notice.path), shown(moved)),
          commitOid: null,
        },
        keptUnreadable ? { readClears: true } : {},
      )
    }
  }
}

/** The notices for what a scan left out (too large, a name the history refuses, unreadable). */
export function scanNotices(report: {
  readonly tooLarge: ReadonlyArray<string>
  readonly nameNotAllowed: ReadonlyArray<string>
  readonly unreadable?: ReadonlyArray<string>
}): ReadonlyArray<Omit<MemoryNotice, 'id'>> {
  return [
    ...report.tooLarge.map(tooLargeNotice),
    ...report.nameNotAllowed.map(nameNotAllowedNotice),
    ...(report.unreadable ?? []).map(unreadableNotice),
  ]
}

/**
 * The notice for a file history never held that a sync found in its way (relative paths): it
 * was renamed, never written over.
 */
export function keptAsideNotice(
  relative: string,
  keptAs: string,
  changed = false,
): Omit<MemoryNotice, 'id'> {
  const virtual = toVirtual(relative)
  return {
    kind: 'kept-aside',
    path: virtual,
    message: changed
      ? `${virtual} was changed outside Cairn while a sync was bringing another machine's version of it, so your version was kept as ${toVirtual(keptAs)}, beside the synced one. Nothing was written over.`
      : `${virtual} was not in the history when a sync brought a file of that name from another machine, so your file was kept as ${toVirtual(keptAs)}. Nothing was written over.`,
    commitOid: null,
  }
}

// Larger texts are not scanned (secretlint on megabytes would stall the queue).
const MAX_SCANNED_BYTES = 1024 * 1024

/**
 * Secrets that a commit of changes made outside Cairn brought into files (those not already
 * in the file's previous version), one notice per file. Never the secret itself.
 */
export async function secretNotices(
  repo: Repo,
  entry: IndexEntry,
): Promise<ReadonlyArray<Omit<MemoryNotice, 'id'>>> {
  const notices: Array<Omit<MemoryNotice, 'id'>> = []
  const after = treeFromOid((await repo.store.readCommit(entry.oid)).tree)
  const before = entry.parent ? treeFromOid((await repo.store.readCommit(entry.parent)).tree) : null
  for (const file of entry.files) {
    const segments = segmentsOf(toRelative(file))
    const text = await textAt(repo, after, segments)
    if (text === null) continue
    const found = await newSecrets(
      text,
      async () => (before ? textAt(repo, before, segments) : null),
      file,
    )
    if (found.length === 0) continue
    const kinds = [...new Set(found.map((finding) => finding.kind))].join(', ')
    notices.push({
      kind: 'secret',
      path: file,
      message: `${file} was changed outside Cairn and now holds what looks like a secret (${kinds}). It was saved in the history (version ${entry.oid.slice(0, 7)}); remove it from the file so later versions do not carry it.`,
      commitOid: entry.oid,
    })
  }
  return notices
}

async function textAt(
  repo: Repo,
  root: ReturnType<typeof treeFromOid>,
  segments: ReadonlyArray<string>,
): Promise<string | null> {
  try {
    const node = await nodeAt(repo.store, root, segments)
    if (node?.kind !== 'blob') return null
    const bytes = await repo.store.readBlob(node.oid)
    if (bytes.byteLength > MAX_SCANNED_BYTES || bytes.includes(0)) return null
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch (error) {
    if (error instanceof DamagedHistoryError || error instanceof TypeError) return null
    throw error
  }
}
