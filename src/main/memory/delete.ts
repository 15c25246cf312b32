/** The `delete` command: removes a file, or a directory with everything in it. */

import { randomUUID } from 'node:crypto'
import { disk } from '../lib/disk'
import { ChangedUnderfootError, removeTree, sameEntry, TEMP_FILE_PREFIX } from '../lib/folders'
import type { CommandContext } from './context'
import { CommandError, specialMessage, success } from './outcome'
import type { ParsedMemoryPath } from './path-rules'
import { findKeptEntries, moveKeptEntries, returnKeptEntries } from './keep-aside'
import { describeMove, planMove } from './plan'
import type { MemoryExecution } from './types'
import { isCounted, measure } from './usage'

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
  const mutation = { command: 'delete', paths: [virtual], overwrite: false } as const
  const message = `Successfully deleted ${virtual}`
  const kind = found.kind === 'file' ? 'file' : 'dir'
  if (ctx.dryRun) {
    return success(message, mutation, await planMove(ctx, 'delete', target, kind, null))
  }
  const made = ctx.describe ? describeMove(ctx, 'delete', target, kind, null) : undefined
  let keptNote = ''
  if (found.kind === 'file') {
    const now = parent.lstat(name)
    if (!now || !sameEntry(now, stats)) throw new ChangedUnderfootError()
    disk.unlinkSync(parent.entry(name))
    if (isCounted(stats.size)) ctx.usage.add(-1, -stats.size)
  } else {
    // What the host holds no copy of is kept (a user's `.git`, a file history cannot track),
    // never removed with the folder. It is moved out before the folder is renamed aside: a
    // crash after that leaves a hidden temp folder, which start-up recovery deletes whole.
    let keep: string[][] = []
    if (ctx.keepsNoCopy) {
      const folder = parent.openChild(name)
      try {
        keep = findKeptEntries(folder, ctx.keepsNoCopy)
      } finally {
        folder.close()
      }
    }
    const kept = keep.length > 0 ? moveKeptEntries(parent, name, name, keep) : null
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
      const slash = virtual.lastIndexOf('/')
      keptNote = `. It held files that are not in the history, which a restore could not bring back, so they were kept in ${virtual.slice(0, slash + 1)}${kept}.`
    }
    const removed = await measure(parent.entry(aside))
    ctx.usage.add(-removed.files, -removed.bytes)
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
  return success(message + keptNote, mutation, made)
}
