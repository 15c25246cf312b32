/** `createMemoryTool`: validates Claude's input, runs one command at a time, never throws. */

import path from 'node:path'
import type { CreateExistingPolicy } from '../../shared/types'
import { disk, isCode } from '../lib/disk'
import { CairnError } from '../lib/errors'
import { DIR_MODE, Folder, FolderTree, removeTree, settleFolderSyncs } from '../lib/folders'
import type { CommandContext } from './context'
import { create } from './create'
import { deletePath } from './delete'
import { insert, strReplace } from './edit'
import { parseCommand, type MemoryCommand } from './input'
import { consoleLogger, type Logger } from '../lib/logger'
import { createSerialQueue } from '../lib/serial-queue'
import { CommandError, failure, unexpectedFailure, wellFormedResult } from './outcome'
import { parseMemoryPath, type ParsedMemoryPath } from './path-rules'
import { rename } from './rename'
import { FolderNames } from './folder-names'
import { foldName, refuseSpellingTwin } from './spelling-twin'
import type {
  MemoryExecuteOptions,
  MemoryExecution,
  MemoryLimits,
  MemoryPolicy,
  MemoryTool,
  KeepsNoCopy,
} from './types'
import { UsageCache, type UsageSource } from './usage'
import { view } from './view'

/** Defaults sized for a personal memory: generous, but a runaway loop cannot fill the disk. */
export const DEFAULT_LIMITS: MemoryLimits = {
  maxFileBytes: 1024 * 1024,
  maxTotalBytes: 100 * 1024 * 1024,
  maxFiles: 20_000,
  // Base64 of this stays under the API's 5 MB per image.
  maxImageBytes: 3_750_000,
}

/** How long a computed folder usage is trusted before it is re-walked. */
export const USAGE_MAX_AGE_MS = 60_000

/** Options of `createMemoryTool`; everything but `root` has a default. */
export interface MemoryToolOptions {
  /** The real folder that `/memories` maps to (created, mode 0700, if missing). */
  readonly root: string
  /** What `create` does with an existing file (default `'overwrite'`: history keeps the old one). */
  readonly createExisting?: CreateExistingPolicy
  /** Refuse writes that add a secret (default true). */
  readonly secretScanning?: boolean
  readonly limits?: Partial<MemoryLimits>
  /** How long a computed folder usage is trusted before it is re-walked (default 60 s). */
  readonly usageMaxAgeMs?: number
  /** Clock for the usage cache (tests). */
  readonly now?: () => number
  /**
   * The folder's usage from a host that tracks every file itself; then the tool never walks
   * the folder (and `usageMaxAgeMs` does not apply).
   */
  readonly usage?: UsageSource
  /** Where failures nobody waits for are reported (default: the console). */
  readonly logger?: Logger
  /**
   * Who waits for the folder fsyncs that make a change's renames durable. `'command'`
   * (default): the command's result waits for them, so an answered change survives a crash.
   * `'host'`: the host settles them itself (`settleFolderSyncs`) before it records the change,
   * together with its commit's own fsyncs, as the history does.
   */
  readonly folderSyncs?: 'command' | 'host'
  /**
   * Entries the host keeps no copy of (the history: names it does not track, files too large
   * to version, links). A folder `delete` does not remove them: see `KeepsNoCopy`. Default:
   * none, everything in a deleted folder is removed.
   */
  readonly keepsNoCopy?: KeepsNoCopy
  /**
   * Whether the host's history holds a version at a relative path: said when a file Cairn may
   * not read is kept aside (left out: not said).
   */
  readonly versionedAt?: (relative: string) => Promise<boolean>
}

/** Builds the Memory tool handler for one memory folder. */
export function createMemoryTool(options: MemoryToolOptions): MemoryTool {
  const root = path.resolve(options.root)
  const limits: MemoryLimits = { ...DEFAULT_LIMITS, ...options.limits }
  let policy: MemoryPolicy = {
    createExisting: options.createExisting ?? 'overwrite',
    secretScanning: options.secretScanning ?? true,
  }
  const logger = options.logger ?? consoleLogger
  const usage: UsageSource =
    options.usage ??
    new UsageCache(root, options.usageMaxAgeMs ?? USAGE_MAX_AGE_MS, options.now ?? Date.now)
  const folderSyncs = options.folderSyncs ?? 'command'
  let rootReady: Promise<void> | null = null
  const leftovers = new Set<string>()
  const names = new FolderNames(foldName)
  // One command at a time: the usage cache and check-then-write steps assume no interleaving.
  const queue = createSerialQueue()

  const ensureRoot = (): Promise<void> => {
    rootReady ??= Promise.resolve()
      .then(() => disk.mkdirSync(root, DIR_MODE))
      .catch((error: unknown) => {
        if (isCode(error, 'EEXIST')) return
        rootReady = null
        throw error
      })
    return rootReady
  }
  // `/memories` exists as soon as the tool does (a host may list or watch it before Claude's
  // first command). The first command makes sure of it again (it may have gone meanwhile), and
  // when it cannot be made, every command tries again and says why not.
  try {
    disk.mkdirSync(root, DIR_MODE)
  } catch {
    // There already, or not possible now: the first command finds out and answers.
  }

  // Whatever a command answers goes to Claude: never with half a surrogate pair in it.
  const run = async (
    input: unknown,
    callOptions: MemoryExecuteOptions | undefined,
    dryRun: boolean,
  ): Promise<MemoryExecution> => wellFormedResult(await runCommand(input, callOptions, dryRun))

  const runCommand = async (
    input: unknown,
    callOptions: MemoryExecuteOptions | undefined,
    dryRun: boolean,
  ): Promise<MemoryExecution> => {
    const parsed = parseCommand(input)
    if (!parsed.ok) return failure(new CommandError('invalid-input', `Error: ${parsed.message}`))
    const given = callOptions?.tree
    if (given && given.rootPath !== root) throw new Error('the tree is not of this memory folder')
    const tree = given ?? new FolderTree(root)
    try {
      try {
        return await attempt(parsed.command, callOptions, dryRun, tree)
      } catch (error) {
        // The memory folder removed while Cairn runs (a person starting afresh in the file
        // manager): made again, empty, and the command runs once more. Only when it was gone
        // (the `mkdir` succeeds): any other ENOENT is the command's own failure.
        if (error instanceof CommandError || !isCode(error, 'ENOENT') || !remadeRoot()) throw error
        logger.warn('The memory folder was gone; it was made again, empty', error)
        tree.close()
        return await attempt(parsed.command, callOptions, dryRun, tree)
      }
    } catch (error) {
      if (error instanceof CommandError) return failure(error)
      // The host refused to change the folder (another Cairn took the data folder over): it
      // words that itself, and nothing changed.
      if (error instanceof CairnError && error.code === 'locked') throw error
      // Something outside our checks changed under us; the counts may be off too.
      usage.invalidate()
      return failure(unexpectedFailure(error))
    } finally {
      if (!given) tree.close()
    }
  }

  // True when the root was missing and is there again now.
  const remadeRoot = (): boolean => {
    try {
      disk.mkdirSync(root, DIR_MODE)
    } catch {
      return false
    }
    rootReady = Promise.resolve()
    leftovers.clear()
    usage.invalidate()
    return true
  }

  const attempt = async (
    command: MemoryCommand,
    callOptions: MemoryExecuteOptions | undefined,
    dryRun: boolean,
    tree: FolderTree,
  ): Promise<MemoryExecution> => {
    await ensureRoot()
    // A dry run changes nothing, not even the leftovers of an earlier failed delete.
    if (!dryRun) removeLeftovers(tree, leftovers)
    const describe = !dryRun && callOptions?.describe === true
    const ctx: CommandContext = {
      root,
      tree,
      limits,
      policy,
      usage,
      leftovers,
      names,
      logger,
      dryRun,
      describe,
      stage: callOptions?.stage,
      beforeMove: callOptions?.beforeMove,
      keepsNoCopy: options.keepsNoCopy,
      versionedAt: options.versionedAt,
    }
    const result = await dispatch(
      ctx,
      command,
      callOptions?.createExisting ?? policy.createExisting,
      callOptions?.spelledAsOnDisk === true,
    )
    // No history settles this write's folder fsync before a commit: a write (create,
    // str_replace, insert) is durable before it is answered, as the handler's contract says
    // ("temp file, fsync, rename, fsync the folder"). A delete or rename answers once done; its
    // folders' fsyncs follow within 50 ms (lib/folders.ts): waiting for them doubled those
    // commands' cost against the SDK's reference, which syncs nothing for them.
    if (!dryRun && result.mutation && folderSyncs === 'command' && isWrite(command)) {
      await settleFolderSyncs()
    }
    return result
  }

  // The usage walk is O(files): never inside a command, when the total is missing (start,
  // invalidateUsage) or getting old. Where the source can (the plain tool), the folder is
  // walked aside while commands go on with the cached total, and only the new count is taken
  // in the queue, between commands; else the walk runs in the queue. A write then finds it ready.
  let refreshing = false
  // Asked for again while a walk ran (invalidateUsage, whose count that walk then drops, or a
  // command): asked once more when it is done.
  let askedMeanwhile = false
  const refreshUsageSoon = (): void => {
    if (refreshing) {
      askedMeanwhile ||= usage.wantsRefresh()
      return
    }
    if (!usage.wantsRefresh()) return
    refreshing = true
    askedMeanwhile = false
    const inQueue = async (): Promise<void> => {
      if (usage.wantsRefresh()) await usage.refresh()
    }
    const aside = usage.walkAside?.() ?? null
    ;(aside ? aside.then((take) => queue.run(take)) : queue.run(inQueue))
      // A write measures the folder itself when the total is still missing.
      .catch((error: unknown) => logger.warn('Could not measure the memory folder', error))
      .finally(() => {
        refreshing = false
        if (askedMeanwhile) refreshUsageSoon()
      })
  }

  return {
    execute(input, callOptions) {
      const result = queue.run(() => run(input, callOptions, false))
      // A rejection (the host's own refusal, see `runCommand`) is the caller's to handle.
      void result.then(refreshUsageSoon, () => undefined)
      return result
    },
    async preview(input, callOptions) {
      const result = await queue.run(() => run(input, callOptions, true))
      // A view changes nothing: it has no plan.
      return result.planned === undefined ? { ...result, planned: null } : result
    },
    configure(update) {
      policy = {
        createExisting: update.createExisting ?? policy.createExisting,
        secretScanning: update.secretScanning ?? policy.secretScanning,
      }
    },
    policy: () => policy,
    invalidateUsage: () => {
      usage.invalidate()
      refreshUsageSoon()
    },
  }
}

async function dispatch(
  ctx: CommandContext,
  command: MemoryCommand,
  createExisting: CreateExistingPolicy,
  asOnDisk: boolean,
): Promise<MemoryExecution> {
  try {
    return await runParsed(ctx, command, createExisting, asOnDisk)
  } catch (error) {
    // A path missing only because the folder spells its name otherwise (decomposed, put there
    // outside Cairn) is not said to "not exist": the person sees that file in the Memory tab.
    if (error instanceof CommandError && error.code === 'not-found') {
      const missing = command.command === 'rename' ? command.old_path : command.path
      try {
        refuseSpellingTwin(ctx, checkPath(missing), 'reach')
      } catch (twin) {
        // A folder that cannot be listed now leaves the answer as it was.
        if (twin instanceof CommandError) throw twin
      }
    }
    throw error
  }
}

/** `asOnDisk`: a delete's path and a rename's source keep their spelling (spelledAsOnDisk). */
async function runParsed(
  ctx: CommandContext,
  command: MemoryCommand,
  createExisting: CreateExistingPolicy,
  asOnDisk: boolean,
): Promise<MemoryExecution> {
  switch (command.command) {
    case 'view':
      return view(ctx, folderPath(ctx, command.path), command.view_range)
    case 'create': {
      const target = checkPath(command.path)
      // `/memories/notes/` names a folder: no file is made at `notes` for it.
      if (endsAsFolder(command.path, target)) {
        throw new CommandError(
          'not-a-file',
          `Error: ${target.virtual}/ is a directory path (it ends with /); create needs a file path such as /memories/notes.md.`,
        )
      }
      return create(ctx, target, command.file_text, createExisting)
    }
    case 'str_replace':
      return strReplace(ctx, folderPath(ctx, command.path), command.old_str, command.new_str)
    case 'insert':
      return insert(ctx, folderPath(ctx, command.path), command.insert_line, command.insert_text)
    case 'delete':
      return deletePath(ctx, folderPath(ctx, command.path, asOnDisk))
    case 'rename': {
      const from = folderPath(ctx, command.old_path, asOnDisk)
      const to = checkPath(command.new_path)
      // `/memories/notes/` names a folder: a *file* renamed to it must not become a file named
      // `notes` (Claude most likely meant "into notes/", and its picture of memory would be
      // wrong), so the file's full new path is asked for. A folder renamed to `archive/` is
      // renamed to `archive`, as `mv drafts/ archive/` and the reference handler do; a missing
      // source falls through to rename's "does not exist".
      if (endsAsFolder(command.new_path, to) && ctx.tree.find(from.relative).kind === 'file') {
        const name = from.virtual.slice(from.virtual.lastIndexOf('/') + 1)
        throw new CommandError(
          'invalid-path',
          `Error: ${to.virtual}/ is a directory path (it ends with /), but ${from.virtual} is a file; rename needs the file's full new path, such as ${to.virtual}/${name} to move it into that folder, or ${to.virtual} to give it that name.`,
        )
      }
      return rename(ctx, from, to)
    }
  }
}

/**
 * Checks a path that may end with `/`: such a path names a folder, so a file there is refused
 * rather than used (`view /memories/a.md/` showed the file as if the slash were not there).
 */
function folderPath(ctx: CommandContext, raw: string, keepSpelling = false): ParsedMemoryPath {
  const target = checkPath(raw, keepSpelling)
  if (endsAsFolder(raw, target) && ctx.tree.find(target.relative).kind === 'file') {
    throw new CommandError(
      'conflict',
      `Error: ${target.virtual}/ ends with /, but ${target.virtual} is a file, not a directory.`,
    )
  }
  return target
}

/** `raw` ends with `/` below `/memories` itself: it names a folder, whatever is there now. */
function endsAsFolder(raw: string, target: ParsedMemoryPath): boolean {
  return target.relative !== '' && raw.endsWith('/')
}

// Folders a failed delete left renamed aside: removed now if the disk lets us.
function removeLeftovers(tree: FolderTree, leftovers: Set<string>): void {
  for (const relative of leftovers) {
    const slash = relative.lastIndexOf('/')
    try {
      const parent = tree.folder(slash < 0 ? '' : relative.slice(0, slash))
      if (parent instanceof Folder) removeTree(parent, relative.slice(slash + 1))
      leftovers.delete(relative)
    } catch {
      // Still failing: the next command tries again, and start-up removes it in any case.
    }
  }
}

function checkPath(raw: string, keepSpelling = false): ParsedMemoryPath {
  const parsed = parseMemoryPath(raw, { keepSpelling })
  if (!parsed.ok) throw new CommandError('invalid-path', `Error: ${parsed.message}`)
  return parsed
}

/** The commands that write a file's content (and so promise its folder's fsync). */
function isWrite(command: { readonly command: string }): boolean {
  return (
    command.command === 'create' ||
    command.command === 'str_replace' ||
    command.command === 'insert'
  )
}
