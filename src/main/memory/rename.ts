/** The `rename` command: moves a file or directory; never overwrites, never moves the root. */

import path from 'node:path'
import { disk } from '../lib/disk'
import type { Stats } from 'node:fs'
import { ChangedUnderfootError, Folder, readFileIn, sameEntry } from '../lib/folders'
import { maxEditableBytes } from './edit'
import type { CommandContext } from './context'
import { CommandError, specialMessage, success } from './outcome'
import { MAX_DEPTH, MAX_PATH_LENGTH, type ParsedMemoryPath } from './path-rules'
import { describeMove, planMove } from './plan'
import type { MemoryExecution } from './types'
import { renameSecretRefusal, secretsByRename } from './secrets'
import { foldName, refuseSpellingTwin } from './spelling-twin'
import { guardPath } from './write-guard'

/**
 * Runs `rename` from `from` to `to`, creating the destination's folders. One `rename(2)`, atomic
 * on its own; both folders are fsynced after, so it is durable before its commit is.
 */
export async function rename(
  ctx: CommandContext,
  from: ParsedMemoryPath,
  to: ParsedMemoryPath,
): Promise<MemoryExecution> {
  if (from.relative === '') {
    throw new CommandError('invalid-path', 'Error: Cannot rename the /memories directory itself')
  }
  const source = ctx.tree.find(from.relative)
  if (source.kind === 'special')
    throw new CommandError('special-file', specialMessage(from.virtual))
  if (source.kind === 'missing' || source.kind === 'under-file') {
    throw new CommandError('not-found', `Error: The path ${from.virtual} does not exist`)
  }
  if (to.relative === '' || to.relative === from.relative) {
    throw new CommandError('exists', `Error: The destination ${to.virtual} already exists`)
  }
  // A file under itself is a destination under a file: the conflict message below says so.
  if (source.kind === 'directory' && to.relative.startsWith(`${from.relative}/`)) {
    throw new CommandError(
      'invalid-path',
      `Error: Cannot move the directory ${from.virtual} into itself (${to.virtual}).`,
    )
  }
  const destination = ctx.tree.find(to.relative)
  if (destination.kind === 'special')
    throw new CommandError('special-file', specialMessage(to.virtual))
  if (destination.kind === 'under-file') {
    throw new CommandError(
      'conflict',
      `Error: Cannot rename to ${to.virtual}: /memories/${destination.at} is a file, not a directory.`,
    )
  }
  const caseChange =
    (destination.kind === 'file' || destination.kind === 'directory') &&
    sameEntry(destination.stats, source.stats) &&
    foldName(to.relative) === foldName(from.relative) &&
    !listedApart(destination.parent, destination.name, source.name)
  // On a case-insensitive disk `Notes.md` → `notes.md` finds the source itself: a case change
  // (and on one that ignores the Unicode spelling, a decomposed name renamed to its composed one).
  // A name the folder lists of its own is another link to the same file, not the source found
  // again: rename(2) between two links of one file does nothing, so it is an existing destination.
  if (destination.kind !== 'missing' && !caseChange) {
    throw new CommandError('exists', `Error: The destination ${to.virtual} already exists`)
  }
  // Never a look-alike of an entry the folder holds in another spelling (decomposed) or
  // letter case, unless that entry is the one renamed (the person's, named as spelled: see
  // spelledAsOnDisk; `Notes.md` to `notes.md` is a case change).
  if (destination.kind === 'missing') refuseSpellingTwin(ctx, to, 'rename', from.relative)
  const { parent: sourceParent } = source
  if (sourceParent === null)
    throw new CommandError('invalid-path', 'Error: Cannot rename the /memories directory itself')
  if (source.kind === 'directory') checkMovedPaths(ctx, from, to)
  await guardPath(ctx, to.virtual, 'rename')
  if (source.kind === 'file') await guardRenamedText(ctx, source, from.virtual, to.virtual)
  const mutation = {
    command: 'rename',
    paths: [from.virtual, to.virtual],
    overwrite: false,
  } as const
  const message = `Successfully renamed ${from.virtual} to ${to.virtual}`
  const kind = source.kind === 'file' ? 'file' : 'dir'
  if (ctx.dryRun) {
    return success(message, mutation, await planMove(ctx, 'rename', from, kind, to))
  }
  const made = ctx.describe ? describeMove(ctx, 'rename', from, kind, to) : undefined
  ctx.beforeMove?.(mutation)

  const toParent = to.relative.includes('/') ? path.posix.dirname(to.relative) : ''
  const recorded = ctx.usage.changing?.([from.relative, to.relative])
  const { folder, created } = ctx.tree.ensure(toParent)
  try {
    // Both names are taken from their folders' own handles; the source must still be what was
    // checked.
    const now = sourceParent.lstat(source.name)
    if (!now || !sameEntry(now, source.stats)) throw new ChangedUnderfootError()
    disk.renameSync(sourceParent.entry(source.name), folder.entry(path.posix.basename(to.relative)))
  } catch (error) {
    ctx.tree.removeCreated(created)
    throw error
  }
  ctx.tree.forget(from.relative)
  // Durable before its commit is (settleFolderSyncs; best effort: it has happened either way).
  for (const changed of new Set([sourceParent, folder])) changed.syncLater()
  await recorded?.()
  return success(message, mutation, made)
}

// A moved directory must not push anything inside it past the path length or depth limits.
function checkMovedPaths(ctx: CommandContext, from: ParsedMemoryPath, to: ParsedMemoryPath): void {
  const extraLength = to.virtual.length - from.virtual.length
  const extraDepth = to.relative.split('/').length - from.relative.split('/').length
  if (extraLength <= 0 && extraDepth <= 0) return
  const folder = ctx.tree.folder(from.relative)
  if (!(folder instanceof Folder)) throw new ChangedUnderfootError()
  const check = (dir: Folder, relative: string): void => {
    for (const entry of dir.list()) {
      const inside = relative ? `${relative}/${entry.name}` : entry.name
      const length = to.virtual.length + 1 + inside.length
      const depth = to.relative.split('/').length + inside.split('/').length
      if (length > MAX_PATH_LENGTH || depth > MAX_DEPTH) {
        throw new CommandError(
          'invalid-path',
          `Error: Cannot rename ${from.virtual} to ${to.virtual}: a path inside it would become longer than ${MAX_PATH_LENGTH} characters or have more than ${MAX_DEPTH} names after /memories/.`,
        )
      }
      if (!entry.isDirectory()) continue
      const child = dir.openChild(entry.name)
      try {
        check(child, inside)
      } finally {
        child.close()
      }
    }
  }
  check(folder, '')
}

// A file's text scanned under its new name (an extension some rule looks for): what the scan
// refused at `create` must not get in by a rename. A file too large to edit was not written
// by Claude (writes are smaller), and one that is not text holds no text secret: neither is read.
async function guardRenamedText(
  ctx: CommandContext,
  source: { readonly parent: Folder; readonly name: string; readonly stats: Stats },
  from: string,
  to: string,
): Promise<void> {
  if (!ctx.policy.secretScanning || source.stats.size > maxEditableBytes(ctx.limits)) return
  let text: string
  try {
    const bytes = readFileIn(source.parent, source.name, source.stats)
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch (error) {
    if (error instanceof TypeError) return
    throw error
  }
  const found = await secretsByRename(text, from, to)
  if (found.length > 0) throw new CommandError('secret-detected', renameSecretRefusal(to, found))
}

/**
 * True when `folder` lists the destination's name as an entry of its own, beside the source's
 * (a hard link made by `ln` or a sync tool), rather than a disk that ignores case or spelling
 * finding the source under it.
 */
function listedApart(folder: Folder | null, name: string, sourceName: string): boolean {
  if (folder === null || name === sourceName) return false
  return folder.list().some((dirent) => dirent.name === name)
}
