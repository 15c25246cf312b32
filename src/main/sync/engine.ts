/**
 * One sync: fetch the remote's `main`, bring it into local history (fast-forward, or a merge
 * commit by Cairn), push the result. Local history is never rewritten: a remote that does
 * not continue what was synced before, or that holds another machine's unrelated memory, is
 * not taken until the person answers the join question.
 *
 * Network work happens outside the serial queue; everything that changes `main` or the
 * folder happens inside it (`HistoryGit.exclusive`), so the folder always equals `main`.
 */
import git from 'isomorphic-git'
import type { CommitSummary, SyncJoinQuestion } from '../../shared/types'
import {
  AUTHORS,
  formatCommitMessage,
  MAX_VERSIONED_BYTES,
  parseCommitMessage,
  reaches,
  serializeCommit,
  type HistoryGit,
  type HistorySession,
  wrongKindDetail,
} from '../history'
import { CairnError } from '../lib/errors'
import { cutWithEllipsis, escapeInvisible, foldedName } from '../lib/text'
import { MARKER_SIZE, MAX_MARKER_SIZE } from './conflict-markers'
import {
  clearRefWay,
  gitFs,
  leaveFetchedPacks,
  readRef,
  refCommits,
  refTips,
  releaseFetchedPacks,
  type UnjudgedPack,
} from './git-fs'
import {
  commitFiles,
  foldedCollisions,
  NAMES_FOLD_CASE,
  unsafeEntry,
  writeFileMap,
  type FileEntry,
  type FileMap,
} from './file-map'
import { descendsFrom, explore, mergeBaseOf, type CommitGraph } from './graph'
import { mergeTrees, type MergeConflict } from './merge-trees'
import type { ConflictRecord } from './store'
import {
  fetchMain,
  forgetTracking,
  pushMain,
  remoteHead,
  setTracking,
  TRACKING_REF,
  unjudgedPacks,
  type RemoteSpec,
} from './transport'
import { appendAll } from '../lib/arrays'

/** How often a push that lost a race with another machine is retried within one sync. */
const PUSH_ATTEMPTS = 4

/** Where histories kept aside live. */
export const BACKUP_PREFIX = 'refs/cairn/backups/'

export interface EngineContext {
  readonly git: HistoryGit
  readonly remote: RemoteSpec
  /** This machine's name, for merge commits and conflict markers. */
  readonly machine: string
  /** This machine's id, in the `Merged-On:` trailer of a merge that raised conflicts. */
  readonly machineId?: string
  /** The remote's `main` when the last sync with this remote finished. */
  readonly lastRemote: string | null
  readonly now: () => number
  /** Whether names in the memory folder ignore case (default: macOS and Windows). */
  readonly namesFoldCase?: boolean
  /**
   * The remote's `main` a sync with this remote last refused for what it holds, and why: while
   * the remote's `main` is still that commit, the sync refuses it again without fetching it.
   */
  readonly refused?: RefusedRemote | null
}

/** A remote commit refused for its own content (whatever this machine holds), and why. */
export interface RefusedRemote {
  readonly commit: string
  readonly message: string
}

/**
 * A refusal of what a version from elsewhere holds (a link, a name that leaves the folder, a
 * file too large to version, a listing git calls damaged), whatever this machine holds: the
 * same commit is refused again every time. `commit`: the remote's `main` refused, once known.
 */
export class RefusedContentError extends CairnError {
  constructor(
    message: string,
    readonly commit: string | null = null,
  ) {
    super('sync-unsafe-content', message)
  }
}

/** How a refusal of the remote's files begins and ends (`checkFiles`). */
const FILES_REFUSED = [
  'The remote holds files Cairn will not put in your memory folder: ',
  '. Nothing was changed; remove them from the remote to sync.',
] as const

/** How a refusal of a version git calls damaged begins and ends. */
const UNREADABLE_REFUSED = [
  'The remote holds a version Cairn cannot read (',
  '). Nothing was changed; remove that version from the remote to sync.',
] as const

/**
 * Whether `message` is one a refusal of the remote's content says, as `RefusedContentError`s
 * are made here: a remembered one (the sync state, a file a person may edit) is said again only
 * then, never a text of any other shape (a line break, a bidi control, a sentence of its own).
 */
export function isRefusalMessage(message: string): boolean {
  if (message.length > MAX_REFUSAL_MESSAGE || escapeInvisible(message) !== message) return false
  return [FILES_REFUSED, UNREADABLE_REFUSED].some(
    ([start, end]) =>
      message.length > start.length + end.length &&
      message.startsWith(start) &&
      message.endsWith(end),
  )
}

/** The longest refusal said again (the sync state keeps none longer). */
const MAX_REFUSAL_MESSAGE = 8000

/** Added to a refusal said again without fetching the commit again. */
const NOT_FETCHED_AGAIN =
  ' Cairn refused this version of the remote before and did not download it again; it looks again once the remote changes.'

export type SyncOutcome =
  | {
      readonly kind: 'synced'
      /** The remote's `main` now (what this machine pushed or took). */
      readonly remote: string | null
      /** Conflicts raised here or learnt from merges made elsewhere. */
      readonly conflicts: ReadonlyArray<ConflictRecord>
    }
  | { readonly kind: 'question'; readonly question: SyncJoinQuestion }

export type JoinChoice = 'merge' | 'use-remote'

/** Runs one sync. Throws a `CairnError` (code `sync-*`) when the remote cannot be used. */
export async function syncOnce(ctx: EngineContext): Promise<SyncOutcome> {
  return run(ctx, null)
}

/** Answers the join question, then completes the sync. */
export async function joinRemote(ctx: EngineContext, choice: JoinChoice): Promise<SyncOutcome> {
  return run(ctx, choice)
}

async function run(ctx: EngineContext, choice: JoinChoice | null): Promise<SyncOutcome> {
  const conflicts: ConflictRecord[] = []
  let refetched = false
  // Whether `main` and the folder moved in this sync (a fast-forward, a merge, a switch): the
  // point after which a Stop leaves that move whole rather than undone.
  let moved = false
  const signal = ctx.remote.signal
  // The network work a Stop aborted, or a step it came before: nothing of it is applied.
  const stopping = <T>(work: () => Promise<T>, pushing = false): Promise<T> =>
    work().catch((error: unknown) => {
      throw signal?.aborted ? stoppedError(moved, pushing) : error
    })
  const checkStopped = (pushing = false) => {
    if (signal?.aborted) throw stoppedError(moved, pushing)
  }
  for (let attempt = 1; ; attempt++) {
    // Only the Cairn that holds the data folder writes to its repository (the fetch stores
    // objects and refs outside the serial queue).
    ctx.git.assertWriter()
    checkStopped()
    // A commit refused before is refused again as it stands, unfetched: its content is what was
    // refused, and its pack came in full at every sync (a link beside a large file, each time).
    // Only the advertisement of the remote's refs is asked for.
    if (ctx.refused && !refetched) {
      const refused = ctx.refused
      const now = await stopping(() => remoteHead(ctx.remote))
      if (now === refused.commit) {
        // Packs an earlier fetch left unjudged (a kill or a Stop after it) are judged now, as
        // this refusal's: no fetch comes to take them, and their `.keep`s kept them from every
        // maintenance fold for as long as the refusal lasted.
        await judgeLeftPacks(ctx, now)
        throw new RefusedContentError(`${refused.message}${NOT_FETCHED_AGAIN}`, now)
      }
    }
    // The remote's `main` seen before this fetch, every ref's commit then (what they reach was
    // stored before the fetch: the walk of a refusal's removal stops there), and the packs the
    // fetch wrote: what a refusal of the remote's content sets back and removes. Packs earlier
    // fetches left unjudged (`left`: a sync killed, stopped or failing after its fetch, a Test
    // connection) are judged with them: that fetch may have moved the tracking ref already, so
    // this one brings nothing new to remove should it refuse.
    let seenBefore: string | null = null
    let refsBefore: ReadonlyArray<string> = []
    let left: ReadonlyArray<UnjudgedPack> = []
    const packs: string[] = []
    // Whether this sync judged its packs (took them in, or removed them as refused): else
    // their `.keep`s stay for the next sync to judge.
    let judged = false
    let remote: string | null
    let step: Step
    try {
      remote = await stopping(() =>
        ctx.git.transfer(async () => {
          left = await unjudgedPacks(ctx.git.gitdir)
          for (const pack of left) packs.push(pack.name)
          seenBefore = await readRef(ctx.git.gitdir, TRACKING_REF)
          refsBefore = await refCommits(ctx.git.gitdir, ctx.git.head())
          return fetchMain(ctx.git.gitdir, ctx.remote, {
            onPack: (name) => packs.push(name),
            since: refsBefore,
          })
        }),
      )
      step = await ctx.git
        .exclusive(async (session) => {
          // The last moment a Stop changes nothing: once integrating starts, it is done whole.
          checkStopped()
          const before = session.head()
          try {
            // The person's answer covers the remote they were asked about; a later attempt (another
            // machine pushed meanwhile) asks again if the remote turned into something else.
            return await integrate(ctx, session, remote, attempt === 1 ? choice : null)
          } catch (error) {
            // A version git itself calls damaged (one name twice in a folder, a name holding `/`)
            // that this machine's `main` does not reach came from the remote: said as the remote's,
            // never as damage to this machine's history, which git fsck finds whole.
            // So is a remote `main` naming a folder or a file, not a commit: this machine's
            // history may well hold that object (the remote's tree it synced before), whole.
            if (
              remote !== null &&
              isUnreadableObject(error) &&
              ((error.oid === remote && error.detail === wrongKindDetail('commit')) ||
                !(await localReaches(ctx.git, session.head(), error.oid)))
            ) {
              throw new RefusedContentError(
                `${UNREADABLE_REFUSED[0]}${cutWithEllipsis(escapeInvisible(error.detail), 200)}${UNREADABLE_REFUSED[1]}`,
              )
            }
            if (remote === null || !isMissingObject(error)) throw error
            // The second time, whose object it is decides what the person is told.
            const local = refetched && (await localReaches(ctx.git, session.head(), error.oid))
            return { kind: 'incomplete', local } as const
          } finally {
            moved ||= session.head() !== before
          }
        })
        .catch(async (error: unknown) => {
          if (error instanceof CairnError && error.code === 'sync-stopped' && !moved) {
            // Stopped between the fetch and the move: the tracking ref goes back to where it
            // was, as a Stop before the fetch leaves it, and the fetched packs wait, kept, for
            // the next sync to judge (left on the commit, a refused one's objects stayed).
            await ctx.git
              .transfer(() => setTracking(ctx.git.gitdir, seenBefore, ctx.remote.logger))
              .catch((failure: unknown) =>
                ctx.remote.logger?.warn('The tracking ref could not be set back', failure),
              )
          }
          if (error instanceof CairnError && error.code === 'sync-unsafe-content') {
            // The tracking ref goes back to the remote's `main` seen before, unless an earlier
            // fetch may have moved it onto what is refused now (it then goes).
            const back = left.length > 0 || seenBefore === remote ? null : seenBefore
            judged = await dropRefusedFetch(
              ctx,
              packs,
              back,
              sinceOf([refsBefore, ...left.map((pack) => pack.since)]),
            )
          }
          // Which commit was refused, so that the next sync need not fetch it again.
          if (error instanceof RefusedContentError && remote !== null) {
            throw new RefusedContentError(error.message, remote)
          }
          throw error
        })
      // Taken in. A version lacking objects is fetched again; a question (an unrelated or
      // rewritten history) was asked before their content was read, and the answer's sync judges
      // them: released here, its fetch brought nothing, and a refusal then removed nothing.
      judged ||= step.kind === 'ready'
    } finally {
      // Maintenance may fold them now: taken in, or removed as refused (see `fetchFs`). A
      // `.keep` left (a disk that fails the unlink) is judged again by the next sync, as is one
      // of packs this sync did not judge.
      settleFetchedPacks(ctx, packs, judged)
    }
    if (step.kind === 'incomplete') {
      // A remote that sent part of what its `main` needs (a pack lacking an object its
      // commits name) left the tracking ref on a commit this repository cannot read whole.
      // Kept, every later fetch would tell the server it has that commit, never receive what
      // is missing, and fail again: the ref is dropped (nothing else names those objects) and
      // the fetch made once more, from local `main`.
      await ctx.git.transfer(() => forgetTracking(ctx.git.gitdir, ctx.remote.logger))
      if (refetched && step.local) {
        throw new CairnError(
          'history-damaged',
          'The memory history is damaged; that version cannot be read.',
        )
      }
      if (refetched) {
        // The fetch from local `main` was sent everything `main` does not reach: an object
        // missing that `main` does not reach is the remote's to send, not this machine's.
        throw new CairnError(
          'sync-interrupted',
          'The remote’s answer lacked part of its history. Nothing was changed; Cairn tries again on the next sync.',
        )
      }
      refetched = true
      attempt--
      continue
    }
    if (step.kind === 'question') return step
    appendAll(conflicts, step.conflicts)
    const local = ctx.git.head()
    if (!local || local === remote) return { kind: 'synced', remote, conflicts }
    try {
      ctx.git.assertWriter()
      checkStopped()
      await stopping(
        () =>
          ctx.git.transfer(() =>
            pushMain(ctx.git.gitdir, ctx.remote, local, remote, {
              lastAttempt: attempt === PUSH_ATTEMPTS,
            }),
          ),
        true,
      )
    } catch (error) {
      // Another machine pushed between the fetch and the push: fetch and merge again.
      if (
        error instanceof CairnError &&
        error.code === 'sync-rejected' &&
        attempt < PUSH_ATTEMPTS
      ) {
        continue
      }
      throw error
    }
    return { kind: 'synced', remote: await pushedHead(ctx.git.gitdir, local), conflicts }
  }
}

/**
 * Judges, as refused, the packs earlier fetches left unjudged, when a sync refuses the remote's
 * `main` (`refused`) again without fetching: what nothing kept reaches goes, the rest is left to
 * maintenance. The tracking ref goes should it name the refused commit (a fetch killed before
 * its refusal moved it there).
 */
async function judgeLeftPacks(ctx: EngineContext, refused: string): Promise<void> {
  const gitdir = ctx.git.gitdir
  let left: ReadonlyArray<UnjudgedPack> = []
  let judged = false
  try {
    left = await ctx.git.transfer(() => unjudgedPacks(gitdir))
    if (left.length === 0) return
    const tracking = await readRef(gitdir, TRACKING_REF)
    judged = await dropRefusedFetch(
      ctx,
      left.map((pack) => pack.name),
      tracking === refused ? null : tracking,
      sinceOf(left.map((pack) => pack.since)),
    )
  } catch (failure) {
    ctx.remote.logger?.warn('Packs an earlier fetch left could not be judged', failure)
  } finally {
    // A `.keep` the disk would not delete is logged, never the sync's error: the refusal is.
    settleFetchedPacks(
      ctx,
      left.map((pack) => pack.name),
      judged,
    )
  }
}

/**
 * Releases the packs `names` a sync is done with (`judged`: taken in, or removed as refused) to
 * maintenance, or leaves them to the next sync. A `.keep` left (a disk that fails the unlink) is
 * judged again by the next sync: logged, never the sync's error.
 */
function settleFetchedPacks(
  ctx: EngineContext,
  names: ReadonlyArray<string>,
  judged: boolean,
): void {
  try {
    if (judged) releaseFetchedPacks(ctx.git.gitdir, names)
    else leaveFetchedPacks(ctx.git.gitdir, names)
  } catch (failure) {
    ctx.remote.logger?.warn('A fetched pack could not be left to maintenance yet', failure)
  }
}

/**
 * The commits a removal's walk may stop at for packs fetched when each of `notes` was read
 * (the refs' commits before a fetch; null: not known, so none): only those all of them name.
 * Each set reaches only objects stored before its fetch, so a commit in every set reaches
 * only objects stored before the earliest of them.
 */
function sinceOf(notes: ReadonlyArray<ReadonlyArray<string> | null>): ReadonlyArray<string> {
  if (notes.some((set) => set === null)) return []
  const [first = [], ...rest] = notes as ReadonlyArray<ReadonlyArray<string>>
  return first.filter((oid) => rest.every((set) => set.includes(oid)))
}

/**
 * Removes what a fetch brought whose content the sync refused (a version git calls damaged, a
 * link, a name that leaves the folder): kept, `git fsck --strict` reported it for good and the
 * tracking ref pointed at it. The tracking ref goes back to the remote's `main` seen before the
 * fetch; each pack the fetch wrote goes unless an object only it holds is reached by `main` or
 * any other ref (a backup, the last `main` seen) — alone in the queue, so no command writes
 * meanwhile (one that ran while the fetch did and found an object already stored made `main`
 * reach it). Anything that fails here is logged; the refusal is what the person is told.
 */
async function dropRefusedFetch(
  ctx: EngineContext,
  packs: ReadonlyArray<string>,
  seenBefore: string | null,
  refsBefore: ReadonlyArray<string>,
): Promise<boolean> {
  const gitdir = ctx.git.gitdir
  try {
    // The pack folder before the queue, as a fetch takes them: the other way round, a
    // maintenance step holding the folder and waiting for the queue to go idle (its pauses)
    // and this waiting for the folder with the queue held would wait for each other for good.
    await ctx.git.transfer(() =>
      ctx.git.exclusive(async (session) => {
        await setTracking(gitdir, seenBefore, ctx.remote.logger)
        if (packs.length === 0) return
        // A ref that cannot be read keeps every pack (the failure is logged below).
        const heads = [
          ...(seenBefore === null ? [] : [seenBefore]),
          ...(await refTips(gitdir, TRACKING_REF)),
        ]
        const dropped = await session.dropFetchedPacks(packs, heads, refsBefore)
        if (dropped.length < packs.length) {
          ctx.remote.logger?.warn(
            `A refused fetch's ${packs.length - dropped.length} pack(s) were kept: something this machine keeps reaches an object only they hold`,
          )
        }
      }),
    )
    return true
  } catch (failure) {
    ctx.remote.logger?.warn('What a refused fetch brought could not be removed', failure)
    return false
  }
}

/**
 * What a Stop left, said plainly: nothing changed (stopped before `main` moved), the remote's
 * changes taken in whole but this machine's not sent, or stopped while sending them.
 */
function stoppedError(moved: boolean, pushing: boolean): CairnError {
  const taken = moved
    ? ' The remote’s changes had been taken in already, and that part was finished whole;'
    : ' Memory and its history here are as they were before it;'
  const sent = pushing
    ? ' this machine’s changes may or may not have reached the remote: the next sync finishes either way.'
    : moved
      ? ' this machine’s changes were not sent yet: the next sync sends them.'
      : ' nothing was sent to the remote, and the next sync starts again.'
  return new CairnError('sync-stopped', `Sync stopped.${taken}${sent}`)
}

/** Damage other than a missing object: an object present but not readable as git's. */
function isUnreadableObject(error: unknown): error is { oid: string; detail: string } {
  const e = error as { code?: unknown; detail?: unknown; oid?: unknown } | null
  return (
    e?.code === 'EDAMAGED' &&
    typeof e.detail === 'string' &&
    e.detail !== 'missing' &&
    typeof e.oid === 'string'
  )
}

function isMissingObject(error: unknown): error is { oid: string } {
  const e = error as { code?: unknown; detail?: unknown; oid?: unknown } | null
  return e?.code === 'EDAMAGED' && e.detail === 'missing' && typeof e.oid === 'string'
}

/**
 * Whether `missing` is an object `head` reaches (its commits, trees or files): then this
 * machine's history is damaged. A part of that history that cannot be read says so too.
 */
async function localReaches(
  history: HistoryGit,
  head: string | null,
  missing: string,
): Promise<boolean> {
  if (head === null) return false
  try {
    return await reaches(history.objects, head, missing)
  } catch (error) {
    // Missing or damaged (`isMissingObject` is one kind of it).
    if ((error as { code?: unknown } | null)?.code === 'EDAMAGED') return true
    throw error
  }
}

type Step =
  | { readonly kind: 'ready'; readonly conflicts: ReadonlyArray<ConflictRecord> }
  /** A version the sync needs lacks an object; `local`: one local `main` reaches. */
  | { readonly kind: 'incomplete'; readonly local: boolean }
  | { readonly kind: 'question'; readonly question: SyncJoinQuestion }

async function integrate(
  ctx: EngineContext,
  session: HistorySession,
  remote: string | null,
  choice: JoinChoice | null,
): Promise<Step> {
  const local = session.head()
  const none: Step = { kind: 'ready', conflicts: [] }
  if (remote === null || remote === local) return none
  const objects = ctx.git.objects
  if (local === null) {
    await checkSafe(objects, remote, local, ctx.namesFoldCase)
    return { kind: 'ready', conflicts: await learn(ctx, await session.moveMain(remote, 'forward')) }
  }
  const graph = graphOf(ctx.git)
  const found = await explore(graph, remote)
  const rewritten =
    ctx.lastRemote !== null &&
    ctx.lastRemote !== remote &&
    !(await descendsFrom(graph, found, ctx.lastRemote))
  const base = mergeBaseOf(graph, found)
  if (choice === null && (rewritten || base === null)) {
    return {
      kind: 'question',
      question: await questionOf(ctx, local, remote, rewritten ? 'rewritten' : 'unrelated'),
    }
  }
  if (choice === 'use-remote') {
    await checkSafe(objects, remote, local, ctx.namesFoldCase)
    await keepBackup(ctx, local)
    return { kind: 'ready', conflicts: await learn(ctx, await session.moveMain(remote, 'switch')) }
  }
  // The remote has nothing this machine lacks: only a push is needed.
  if (found.fresh.size === 0) return none
  if (found.frontier.includes(local)) {
    await checkSafe(objects, remote, local, ctx.namesFoldCase)
    return { kind: 'ready', conflicts: await learn(ctx, await session.moveMain(remote, 'forward')) }
  }
  const style = choice === 'merge' && base === null ? 'join' : 'sync'
  const merge = await mergeCommit(ctx, local, remote, base, style)
  const added = await session.moveMain(merge.oid, 'forward')
  // The merge's own conflicts are known already; the rest came from other machines' merges.
  const learnt = await learn(
    ctx,
    added.filter((commit) => commit.oid !== merge.oid),
  )
  return { kind: 'ready', conflicts: [...merge.conflicts, ...learnt] }
}

/** Who a merge commit is by and what it says, by why it was made. */
export type MergeStyle = 'sync' | 'join' | 'restore-backup' | 'import'

/**
 * Makes the merge commit of `local` and `other` (first parent local): by Cairn for a sync,
 * by You when the person chose to join two memories or bring back a backup.
 */
export async function mergeCommit(
  ctx: Pick<EngineContext, 'git' | 'machine' | 'machineId' | 'now' | 'namesFoldCase'>,
  local: string,
  other: string,
  base: string | null,
  style: MergeStyle,
  subjectOverride?: string,
): Promise<{ oid: string; conflicts: ConflictRecord[] }> {
  const objects = ctx.git.objects
  const foldCase = ctx.namesFoldCase ?? NAMES_FOLD_CASE
  const baseFiles = await commitFiles(objects, base)
  const oursFiles = await commitFiles(objects, local)
  const otherFiles = await commitFiles(objects, other)
  await checkFiles(objects, otherFiles, oursFiles, foldCase)
  const theirsFiles = foldCase ? onOurNames(baseFiles, oursFiles, otherFiles) : otherFiles
  const otherMachine = await machineOf(ctx.git, other)
  const labels = {
    ours: ctx.machine,
    theirs:
      style === 'restore-backup'
        ? 'backup'
        : style === 'import'
          ? 'imported'
          : otherMachine && otherMachine !== ctx.machine
            ? otherMachine
            : 'the other machine',
  }
  const result = await mergeTrees({
    base: baseFiles,
    ours: oursFiles,
    theirs: theirsFiles,
    labels,
    blobs: {
      read: (oid) => objects.readBlob(oid),
      write: (content) => objects.write('blob', content),
    },
  })
  const tree = await writeFileMap(objects, result.files)
  const changed = changedPaths(oursFiles, result.files)
  const subject =
    subjectOverride ??
    (style === 'join'
      ? `Join this machine’s memory with ${labels.theirs}’s`
      : style === 'restore-backup'
        ? 'Bring back the memory kept in a backup'
        : `Merge memory from ${labels.theirs}`)
  const trailers = formatCommitMessage({
    actor: style === 'sync' ? 'system' : 'user',
    command: style === 'import' ? 'import' : 'merge',
    subject,
    paths: changed.map(toVirtualPath),
    conversationId: null,
    toolUseId: null,
    overwrite: false,
    restoredFrom: null,
    machine: ctx.machine,
  })
  const message = withNotesAndConflicts(trailers, result.notes, result.conflicts, ctx.machineId)
  const oid = await objects.write(
    'commit',
    serializeCommit({
      tree,
      parent: local,
      otherParents: [other],
      author: style === 'sync' ? AUTHORS.system : AUTHORS.user,
      timestamp: Math.floor(ctx.now() / 1000),
      message,
    }),
  )
  return { oid, conflicts: result.conflicts.map((c) => recordOf(c, oid, ctx.machineId)) }
}

/**
 * Where names ignore case, a file the other side added under a name this side added too but
 * spelt otherwise (`Notes.md` there, `notes.md` here) is one file: it takes this side's
 * spelling, so the merge joins the two as a file both sides added (line by line, a conflict
 * where they differ) rather than writing two names the folder cannot hold apart. A folder
 * the other side spells otherwise (`docs/` there, `Docs/` here) takes this side's spelling too.
 */
function onOurNames(base: FileMap, ours: FileMap, theirs: FileMap): FileMap {
  const added = new Map<string, string>()
  // Folders are names too: `docs/b.md` there joins this side's `Docs/` (one folder here).
  const folders = new Map<string, string>()
  for (const path of ours.keys()) {
    if (!base.has(path) && !theirs.has(path)) added.set(foldedName(path), path)
    const segments = path.split('/')
    for (let i = 1; i < segments.length; i++) {
      const folder = segments.slice(0, i).join('/')
      folders.set(foldedName(folder), folder)
    }
  }
  let named: Map<string, FileEntry> | null = null
  for (const [path, entry] of theirs) {
    if (base.has(path) || ours.has(path)) continue
    const inOurFolder = inFolderOf(path, folders)
    const ourName = added.get(foldedName(inOurFolder)) ?? inOurFolder
    if (ourName === path) continue
    named ??= new Map(theirs)
    named.delete(path)
    named.set(ourName, entry)
    added.delete(foldedName(inOurFolder))
  }
  return named ?? theirs
}

/** `path` with its deepest folder that this side spells otherwise spelt as this side does. */
function inFolderOf(path: string, folders: ReadonlyMap<string, string>): string {
  const segments = path.split('/')
  for (let i = segments.length - 1; i >= 1; i--) {
    const ours = folders.get(foldedName(segments.slice(0, i).join('/')))
    if (ours !== undefined) return [ours, ...segments.slice(i)].join('/')
  }
  return path
}

/** The commit message with the merge's notes as its body and one `Conflict:` trailer each. */
function withNotesAndConflicts(
  formatted: string,
  notes: ReadonlyArray<string>,
  conflicts: ReadonlyArray<MergeConflict>,
  machineId: string | undefined,
): string {
  const split = formatted.indexOf('\n\n')
  const subject = formatted.slice(0, split)
  let trailers = formatted.slice(split + 2)
  for (const conflict of conflicts) {
    trailers += `${CONFLICT_TRAILER}: ${encodeURIComponent(toVirtualPath(conflict.path))}`
    if (conflict.otherPath) trailers += ` ${encodeURIComponent(toVirtualPath(conflict.otherPath))}`
    trailers += '\n'
  }
  // A trailer of its own (older builds read `Conflict:` lines with one or two paths only).
  for (const conflict of conflicts) {
    if (conflict.markerSize === undefined) continue
    trailers += `${MARKERS_TRAILER}: ${conflict.markerSize} ${encodeURIComponent(toVirtualPath(conflict.path))}\n`
  }
  // Which side of each block is whose, should both machines carry the same name.
  if (conflicts.length > 0 && machineId) trailers += `${MERGED_ON_TRAILER}: ${machineId}\n`
  // Notes are plain sentences about paths; one per line, never a blank line inside.
  const body = notes.map((note) => note.replace(/\s+/g, ' ')).join('\n')
  return body ? `${subject}\n\n${body}\n\n${trailers}` : `${subject}\n\n${trailers}`
}

const CONFLICT_TRAILER = 'Conflict'
const MERGED_ON_TRAILER = 'Merged-On'
const MARKERS_TRAILER = 'Conflict-Markers'

/** The conflicts a merge commit (made here or elsewhere) recorded in its trailers. */
export function conflictsOfMessage(message: string, since: string): ConflictRecord[] {
  const records: ConflictRecord[] = []
  const mergedOn = /^Merged-On: ([0-9a-f]{32})$/m.exec(message)?.[1]
  const by = mergedOn ? { mergedOn } : {}
  const sizes = new Map<string, number>()
  for (const [, size, path] of message.matchAll(/^Conflict-Markers: (\d{1,7}) (\S+)$/gm)) {
    try {
      sizes.set(decodeURIComponent(path as string), Number(size))
    } catch {
      // Not from Cairn: blocks of any size count.
    }
  }
  for (const line of message.split('\n')) {
    const match = /^Conflict: (\S+)(?: (\S+))?$/.exec(line)
    if (!match) continue
    try {
      const path = decodeURIComponent(match[1] as string)
      const other = match[2] ? decodeURIComponent(match[2]) : undefined
      if (!path.startsWith('/memories/') || (other && !other.startsWith('/memories/'))) continue
      records.push(
        other
          ? { path, kind: 'binary', otherPath: other, since, ...by }
          : { path, kind: 'text', since, ...by, ...markerSizeOf(sizes.get(path)) },
      )
    } catch {
      // A malformed trailer (not from Cairn): no conflict to track.
    }
  }
  return records
}

/**
 * Conflicts recorded by merges made on other machines, now part of local history, oldest
 * first; and, as records marked `settled`, those a later choice on another machine settled
 * without changing a file (binary "keep both"): the caller drops its own record of them.
 */
export async function learn(
  ctx: Pick<EngineContext, 'git'>,
  added: ReadonlyArray<CommitSummary>,
): Promise<ConflictRecord[]> {
  let records: ConflictRecord[] = []
  for (const commit of added) {
    if (commit.command === 'resolve') {
      const { message } = await ctx.git.objects.readCommit(commit.oid)
      const settled = settledOfMessage(message)
      if (settled.length === 0) continue
      records = records.filter((record) => !settled.includes(record.path))
      for (const path of settled)
        records.push({ path, kind: 'binary', since: commit.oid, settled: true })
      continue
    }
    if (commit.command !== 'merge' && commit.command !== 'import') continue
    const { message } = await ctx.git.objects.readCommit(commit.oid)
    appendAll(records, conflictsOfMessage(message, commit.oid))
  }
  return records
}

const SETTLED_TRAILER = 'Settled'

/** The paths a `resolve` commit's `Settled:` trailers name. */
export function settledOfMessage(message: string): string[] {
  const paths: string[] = []
  for (const [, encoded] of message.matchAll(/^Settled: (\S+)$/gm)) {
    try {
      const path = decodeURIComponent(encoded as string)
      if (path.startsWith('/memories/')) paths.push(path)
    } catch {
      // Not from Cairn.
    }
  }
  return paths
}

/**
 * A commit on `head` that changes no file and says the conflict at `path` (a binary one, its
 * other side at `otherPath`) was settled by keeping both: every choice is a commit, and the
 * other machines close their record of it when they receive it.
 */
export async function keptBothCommit(
  git: Pick<HistoryGit, 'objects'>,
  head: string,
  path: string,
  otherPath: string,
  machine: string,
  now: number,
): Promise<string> {
  const { tree } = await git.objects.readCommit(head)
  const formatted = formatCommitMessage({
    actor: 'user',
    command: 'resolve',
    subject: `resolve ${path}: keep both versions`,
    paths: [path, otherPath],
    conversationId: null,
    toolUseId: null,
    overwrite: false,
    restoredFrom: null,
    machine,
  })
  const message = `${formatted}${SETTLED_TRAILER}: ${encodeURIComponent(path)}\n`
  return git.objects.write(
    'commit',
    serializeCommit({
      tree,
      parent: head,
      otherParents: [],
      author: AUTHORS.user,
      timestamp: Math.floor(now / 1000),
      message,
    }),
  )
}

function recordOf(conflict: MergeConflict, since: string, machineId?: string): ConflictRecord {
  const by = machineId ? { mergedOn: machineId } : {}
  return conflict.otherPath
    ? {
        path: toVirtualPath(conflict.path),
        kind: 'binary',
        otherPath: toVirtualPath(conflict.otherPath),
        since,
        ...by,
      }
    : {
        path: toVirtualPath(conflict.path),
        kind: conflict.kind,
        since,
        ...by,
        ...markerSizeOf(conflict.markerSize),
      }
}

// A size the saved state would refuse (from a hostile remote) is dropped here, where it is
// read: the record stays, with blocks of any size.
function markerSizeOf(size: number | undefined): { markerSize?: number } {
  return size !== undefined && size >= MARKER_SIZE && size <= MAX_MARKER_SIZE
    ? { markerSize: size }
    : {}
}

async function questionOf(
  ctx: EngineContext,
  local: string,
  remote: string,
  reason: SyncJoinQuestion['reason'],
): Promise<SyncJoinQuestion> {
  const [remoteFiles, localFiles] = await Promise.all([
    commitFiles(ctx.git.objects, remote),
    commitFiles(ctx.git.objects, local),
  ])
  return {
    reason,
    remoteFiles: remoteFiles.size,
    localFiles: localFiles.size,
    remoteMachine: await machineOf(ctx.git, remote),
  }
}

/** Keeps `local` under a backup ref before the history is switched to the remote's. */
async function keepBackup(ctx: EngineContext, local: string): Promise<void> {
  const stamp = new Date(ctx.now()).toISOString().replace(/[-:]/g, '').replace(/\..*$/, 'Z')
  const machine = ctx.machine.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+|[.-]+$/g, '')
  const name = `${machine || 'this-machine'}-${stamp}`
  let ref = `${BACKUP_PREFIX}${name}`
  for (let n = 2; await readRef(ctx.git.gitdir, ref); n++) ref = `${BACKUP_PREFIX}${name}-${n}`
  // A file where `refs/cairn` goes refused every "use the remote's memory", for good.
  clearRefWay(ctx.git.gitdir, ref, ctx.remote.logger)
  await git.writeRef({ fs: gitFs, gitdir: ctx.git.gitdir, ref, value: local })
}

// What push left as the remote's `main` (the tracking ref it updated), or `local`.
async function pushedHead(gitdir: string, local: string): Promise<string> {
  return (await readRef(gitdir, TRACKING_REF)) ?? local
}

/** The `Machine:` trailer of a commit, if it has one. */
export async function machineOf(history: HistoryGit, oid: string): Promise<string | null> {
  const commit = await history.objects.readCommit(oid)
  return parseCommitMessage(commit, commit.message).machine ?? null
}

export function graphOf(history: HistoryGit): CommitGraph {
  return {
    parents: async (oid) => (await history.objects.readCommit(oid)).parents,
    position: (oid) => history.position(oid),
  }
}

/**
 * Refuses a commit whose files the memory folder may not hold (or the history may not
 * version); `local` is this machine's `main`, whose files need no second look.
 */
export async function checkSafe(
  objects: HistoryGit['objects'],
  oid: string,
  local: string | null,
  namesFoldCase = NAMES_FOLD_CASE,
): Promise<void> {
  await checkFiles(
    objects,
    await commitFiles(objects, oid),
    await commitFiles(objects, local),
    namesFoldCase,
  )
}

async function checkFiles(
  objects: HistoryGit['objects'],
  files: FileMap,
  known: FileMap,
  namesFoldCase: boolean,
): Promise<void> {
  const refused: string[] = []
  const held = new Set([...known.values()].map((entry) => entry.oid))
  for (const [path, entry] of files) {
    const why = unsafeEntry(path, entry.mode) ?? (await sizeProblem(objects, entry.oid, held))
    // Shown with its control and format characters as escapes: the name refused for one must
    // not reorder the message it is named in.
    if (why) refused.push(`${escapeInvisible(path)} (${why})`)
  }
  // Two names this system cannot tell apart would overwrite each other in the folder.
  if (namesFoldCase) {
    for (const [a, b] of foldedCollisions(files.keys())) {
      refused.push(`${escapeInvisible(b)} (the same name as ${escapeInvisible(a)} on this system)`)
    }
  }
  if (refused.length === 0) return
  const listed = refused.slice(0, 3).join(', ') + (refused.length > 3 ? ', …' : '')
  throw new RefusedContentError(`${FILES_REFUSED[0]}${listed}${FILES_REFUSED[1]}`)
}

// A blob the history may not version: taken into the folder, the next scan would skip it and
// commit its deletion, which the next sync would push to every machine. Only blobs this
// machine does not hold already are read.
async function sizeProblem(
  objects: HistoryGit['objects'],
  oid: string,
  held: ReadonlySet<string>,
): Promise<string | null> {
  if (held.has(oid)) return null
  const size = (await objects.readBlob(oid)).length
  return size > MAX_VERSIONED_BYTES ? 'too large' : null
}

function changedPaths(before: FileMap, after: FileMap): string[] {
  const paths = new Set<string>()
  for (const [path, entry] of after) if (before.get(path)?.oid !== entry.oid) paths.add(path)
  for (const path of before.keys()) if (!after.has(path)) paths.add(path)
  return [...paths].sort()
}

function toVirtualPath(relative: string): string {
  return `/memories/${relative}`
}
