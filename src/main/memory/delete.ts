/** The `delete` command: removes a file, or a directory with everything in it. */

import { randomUUID } from 'node:crypto'
import { disk, isCode, isDenied } from '../lib/disk'
import { mayNotRead } from '../lib/may-read'
import { ChangedUnderfootError, removeTree, sameEntry, TEMP_FILE_PREFIX } from '../lib/folders'
import type { CommandContext } from './context'
import { CommandError, specialMessage, success } from './outcome'
import type { ParsedMemoryPath } from './path-rules'
import {
  findKeptEntries,
  isOwnAsideName,
  asideName,
  keepFileAside,
  keepFolderInPlace,
  moveKeptEntries,
  returnKeptEntries,
} from './keep-aside'
import { describeMove, planMove } from './plan'
import type { KeptAsideEntry } from '../../shared/types'
import type { MemoryExecution } from './types'

/**
 * Runs `delete` (directories recursively; never the root). `unlink`/`rename` are atomic on
 * their own; the folder is fsynced after, so the delete is durable before its commit is.
 * Everything happens inside the parent folder's open handle: a folder on the way swapped for
 * a symlink cannot send the delete outside.
 */
export async function deletePath(
  ctx: CommandContext,
  target: ParsedMemoryPath,
): Promise<MemoryExecution> {
  const { virtual, relative } = target
  if (relative === '')
    throw new CommandError('invalid-path', 'Error: Cannot delete the /memories directory itself')
  const found = ctx.tree.find(relative)
  if (found.kind === 'special') throw new CommandError('special-file', specialMessage(virtual))
  if (found.kind === 'missing' || found.kind === 'under-file') {
    throw new CommandError('not-found', `Error: The path ${virtual} does not exist`)
  }
  const { parent, name, stats } = found
  if (parent === null)
    throw new CommandError('invalid-path', 'Error: Cannot delete the /memories directory itself')
  if (
    found.kind === 'file' &&
    isOwnAsideName(name) &&
    ctx.keepsNoCopy?.(name, stats, parent.entry(name))
  ) {
    // One kept aside because Cairn may not read it is not "not in the history": its last
    // readable version may well be (review14-story R3).
    throw notDeleted(
      virtual,
      mayNotRead(stats, parent.entry(name))
        ? 'could not be read (permission denied; it may belong to another account) and was kept aside already'
        : 'is not in the history, which a restore could not bring back, and was kept aside already',
      'it',
    )
  }
  // What a folder delete keeps (found before a dry run too, which must refuse alike).
  let keep: string[][] = []
  // A folder Cairn may not enter (mode 644 after `chmod -R 644`, another account's): what it
  // holds cannot be known, so nothing of it is deleted, and the refusal names the folder, not
  // the first entry inside that could not be looked at (review12-story, item 5).
  if (found.kind === 'directory' && mayNotRead(stats, parent.entry(name)))
    throw mayNotEnter(virtual)
  if (found.kind === 'directory' && ctx.keepsNoCopy) {
    let removesFiles: boolean
    try {
      const folder = parent.openChild(name)
      try {
        ;({ entries: keep, removesFiles } = findKeptEntries(folder, ctx.keepsNoCopy))
      } finally {
        folder.close()
      }
    } catch (error) {
      // Refused although its bits allow it (an ACL, a sandbox).
      if (isDenied(error)) throw mayNotEnter(virtual)
      throw error
    }
    // Nothing history holds would go: the delete would only move the folder to a new name
    // (and a tidy-minded Claude would delete that one too, on and on). It deletes nothing.
    if (keep.length > 0 && !removesFiles) {
      throw notDeleted(
        virtual,
        'holds only files that are not in the history, which a restore could not bring back',
        'them',
      )
    }
  }
  const mutation = { command: 'delete', paths: [virtual], overwrite: false } as const
  const message = `Successfully deleted ${virtual}`
  const kind = found.kind === 'file' ? 'file' : 'dir'
  if (ctx.dryRun) {
    return success(message, mutation, await planMove(ctx, 'delete', target, kind, null))
  }
  const made = ctx.describe ? describeMove(ctx, 'delete', target, kind, null) : undefined
  ctx.beforeMove?.(mutation)
  const recorded = ctx.usage.changing?.([relative])
  // Names kept aside beside the target (relative paths), for `recorded`.
  const keptNames: string[] = []
  const dir = relative.includes('/') ? relative.slice(0, relative.lastIndexOf('/') + 1) : ''
  let keptNote = ''
  let keptAside: KeptAsideEntry | null = null
  if (found.kind === 'file') {
    const now = parent.lstat(name)
    if (!now || !sameEntry(now, stats)) throw new ChangedUnderfootError()
    if (ctx.keepsNoCopy?.(name, stats, parent.entry(name))) {
      // Asked before it is moved: the kernel's answer (see mayNotRead) needs its name.
      const unreadable = mayNotRead(stats, parent.entry(name))
      // A file history holds no copy of (one too large to version) would be gone for good:
      // it is kept aside, as a folder delete and a restore keep it. It stays in the memory,
      // so the usage does not change.
      const kept = keepFileAside(
        parent,
        name,
        virtualDir(virtual),
        asideName(
          name,
          (candidate) => parent.lstat(candidate) !== null,
          'file',
          virtualDir(virtual),
          unreadable ? 'unreadable' : 'not-in-history',
        ),
      )
      keptNames.push(dir + kept)
      const keptAs = virtualDir(virtual) + kept
      if (unreadable) {
        // Never "not in the history": what it holds was never read, but its last readable
        // version may well be there.
        const versioned = (await ctx.versionedAt?.(relative)) === true
        keptNote = `. It could not be read (permission denied), so it was kept as ${keptAs}; ${
          versioned
            ? 'the history keeps its last version Cairn could read'
            : 'the history has no version of it'
        }.`
        keptAside = { path: virtual, keptAs, reason: 'unreadable', versioned }
      } else {
        keptNote = `. It was not in the history, which a restore could not bring back, so it was kept as ${keptAs}.`
        keptAside = { path: virtual, keptAs, reason: 'not-in-history' }
      }
    } else {
      disk.unlinkSync(parent.entry(name))
    }
  } else {
    // What the host holds no copy of is kept (a user's `.git`, a file history cannot track),
    // never removed with the folder. It is moved out before the folder is renamed aside: a
    // crash after that leaves a hidden temp folder, which start-up recovery deletes whole.
    let kept: string | null = null
    if (keep.length > 0) {
      try {
        kept = moveKeptEntries(parent, name, name, keep, virtualDir(virtual))
      } catch (error) {
        if (!isCode(error, 'ENOSPC') && !isCode(error, 'EDQUOT')) throw error
        // No room for the kept folder (the delete may be what would free space): the folder
        // itself is kept, under that name, with all but those entries removed from it.
        const now = parent.lstat(name)
        if (!now || !sameEntry(now, stats)) throw new ChangedUnderfootError()
        const keptHere = keepFolderInPlace(parent, name, keep, virtualDir(virtual), ctx.logger)
        ctx.tree.forget(relative)
        ctx.usage.invalidate()
        parent.syncLater()
        return withKept(success(message + keptMessage(virtual, keptHere), mutation, made), {
          path: virtual,
          keptAs: virtualDir(virtual) + keptHere,
          reason: 'folder',
        })
      }
    }
    // Renamed aside first so the folder disappears at once.
    const aside = `${TEMP_FILE_PREFIX}${randomUUID()}`
    try {
      disk.renameSync(parent.entry(name), parent.entry(aside))
    } catch (error) {
      if (kept) returnKeptEntries(parent, kept, name, keep)
      throw error
    }
    ctx.tree.forget(relative)
    // What was renamed must be the folder that was checked: a folder (or link) swapped in
    // between is put back, and nothing is removed. So is the folder when the check fails.
    try {
      const moved = parent.lstat(aside)
      if (!moved || !moved.isDirectory() || !sameEntry(moved, stats)) {
        throw new ChangedUnderfootError()
      }
    } catch (error) {
      disk.renameSync(parent.entry(aside), parent.entry(name))
      if (kept) returnKeptEntries(parent, kept, name, keep)
      throw error
    }
    if (kept) {
      keptNames.push(dir + kept)
      keptNote = keptMessage(virtual, kept)
      keptAside = { path: virtual, keptAs: virtualDir(virtual) + kept, reason: 'folder' }
    }
    try {
      removeTree(parent, aside)
    } catch (error) {
      // The folder is gone from the memory already: the next command (or the next start)
      // removes the rest.
      ctx.logger.warn('Could not remove a deleted folder; it is removed later', error)
      const slash = relative.lastIndexOf('/')
      ctx.leftovers.add(slash < 0 ? aside : `${relative.slice(0, slash)}/${aside}`)
    }
  }
  // Durable before its commit is (settleFolderSyncs; best effort: it has happened either way).
  parent.syncLater()
  await recorded?.(keptNames)
  return withKept(success(message + keptNote, mutation, made), keptAside)
}

// The result, saying (for the person's own edits) what was moved aside.
function withKept(result: MemoryExecution, kept: KeptAsideEntry | null): MemoryExecution {
  return kept ? { ...result, keptAside: [kept] } : result
}

// What Claude is told of the entries of a deleted folder that were kept.
function keptMessage(virtual: string, kept: string): string {
  return `. It held files that are not in the history, which a restore could not bring back, so they were kept in ${virtualDir(virtual)}${kept}.`
}

// `/memories/a/b.md` -> `/memories/a/`: where something kept aside beside it is.
function virtualDir(virtual: string): string {
  return virtual.slice(0, virtual.lastIndexOf('/') + 1)
}

// The refusal of a delete that would remove nothing history holds, only move what it does not.
function mayNotEnter(virtual: string): CommandError {
  return new CommandError(
    'access-denied',
    `Error: Cairn may not open the folder ${virtual} (permission denied; it may belong to another account), so it cannot tell what the folder holds and does not delete it. Nothing was changed.`,
  )
}

function notDeleted(virtual: string, what: string, pronoun: 'it' | 'them'): CommandError {
  return new CommandError(
    'conflict',
    `Error: ${virtual} ${what}; Cairn does not delete ${pronoun}. Nothing was changed.`,
  )
}
