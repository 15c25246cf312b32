/** The `rename` command: moves a file or directory; never overwrites, never moves the root. */

import fs from 'node:fs/promises'
import path from 'node:path'
import type { CommandContext } from './context'
import { ensureDirectories, lookup, realPath, removeDirectories } from './fs-safe'
import { CommandError, specialMessage, success } from './outcome'
import { MAX_DEPTH, MAX_PATH_LENGTH, type ParsedMemoryPath } from './path-rules'
import { planMove } from './plan'
import type { MemoryExecution } from './types'

/**
 * Runs `rename` from `from` to `to`, creating the destination's folders. One `rename(2)`, atomic
 * on its own; like the reference handler it does not fsync the folders afterwards (see docs).
 */
export async function rename(
  ctx: CommandContext,
  from: ParsedMemoryPath,
  to: ParsedMemoryPath,
): Promise<MemoryExecution> {
  if (from.relative === '') {
    throw new CommandError('invalid-path', 'Error: Cannot rename the /memories directory itself')
  }
  const source = await lookup(ctx.root, from.relative)
  if (source.kind === 'special')
    throw new CommandError('special-file', specialMessage(from.virtual))
  if (source.kind === 'missing' || source.kind === 'under-file') {
    throw new CommandError('not-found', `Error: The path ${from.virtual} does not exist`)
  }
  if (to.relative === '' || to.relative === from.relative) {
    throw new CommandError('exists', `Error: The destination ${to.virtual} already exists`)
  }
  if (to.relative.startsWith(`${from.relative}/`)) {
    throw new CommandError(
      'invalid-path',
      `Error: Cannot move the directory ${from.virtual} into itself (${to.virtual}).`,
    )
  }
  const destination = await lookup(ctx.root, to.relative)
  if (destination.kind === 'special')
    throw new CommandError('special-file', specialMessage(to.virtual))
  if (destination.kind === 'under-file') {
    throw new CommandError(
      'conflict',
      `Error: Cannot rename to ${to.virtual}: /memories/${destination.at} is a file, not a directory.`,
    )
  }
  const sameEntry =
    (destination.kind === 'file' || destination.kind === 'directory') &&
    destination.stats.ino === source.stats.ino &&
    destination.stats.dev === source.stats.dev &&
    to.relative.toLowerCase() === from.relative.toLowerCase()
  // On a case-insensitive disk `Notes.md` → `notes.md` finds the source itself: a case change.
  if (destination.kind !== 'missing' && !sameEntry) {
    throw new CommandError('exists', `Error: The destination ${to.virtual} already exists`)
  }
  if (source.kind === 'directory') await checkMovedPaths(ctx, from, to)
  const mutation = {
    command: 'rename',
    paths: [from.virtual, to.virtual],
    overwrite: false,
  } as const
  const message = `Successfully renamed ${from.virtual} to ${to.virtual}`
  if (ctx.dryRun) {
    const kind = source.kind === 'file' ? 'file' : 'dir'
    return success(message, mutation, await planMove(ctx, 'rename', from, kind, to))
  }

  const fromReal = realPath(ctx.root, from.relative)
  const toReal = realPath(ctx.root, to.relative)
  const toParent = to.relative.includes('/') ? path.posix.dirname(to.relative) : ''
  const created = await ensureDirectories(ctx.root, toParent)
  try {
    await fs.rename(fromReal, toReal)
  } catch (error) {
    await removeDirectories(created)
    throw error
  }
  return success(message, mutation)
}

// A moved directory must not push anything inside it past the path length or depth limits.
async function checkMovedPaths(
  ctx: CommandContext,
  from: ParsedMemoryPath,
  to: ParsedMemoryPath,
): Promise<void> {
  const extraLength = to.virtual.length - from.virtual.length
  const extraDepth = to.relative.split('/').length - from.relative.split('/').length
  if (extraLength <= 0 && extraDepth <= 0) return
  const entries = await fs.readdir(realPath(ctx.root, from.relative), { recursive: true })
  for (const entry of entries) {
    const relative = entry.split(path.sep).join('/')
    const length = to.virtual.length + 1 + relative.length
    const depth = to.relative.split('/').length + relative.split('/').length
    if (length > MAX_PATH_LENGTH || depth > MAX_DEPTH) {
      throw new CommandError(
        'invalid-path',
        `Error: Cannot rename ${from.virtual} to ${to.virtual}: a path inside it would become longer than ${MAX_PATH_LENGTH} characters or deeper than ${MAX_DEPTH} folders.`,
      )
    }
  }
}
