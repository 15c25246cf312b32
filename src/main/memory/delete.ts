/** The `delete` command: removes a file, or a directory with everything in it. */

import { randomUUID } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import type { CommandContext } from './context'
import { lookup, realPath } from './fs-safe'
import { CommandError, specialMessage, success } from './outcome'
import type { ParsedMemoryPath } from './path-rules'
import { planMove } from './plan'
import { TEMP_FILE_PREFIX } from '../lib/atomic-write'
import type { MemoryExecution } from './types'
import { measure } from './usage'

/**
 * Runs `delete` (directories recursively; never the root). `unlink`/`rename` are atomic on
 * their own; like the reference handler it does not fsync the folder afterwards (see docs).
 */
export async function deletePath(
  ctx: CommandContext,
  target: ParsedMemoryPath,
): Promise<MemoryExecution> {
  const { virtual, relative } = target
  if (relative === '')
    throw new CommandError('invalid-path', 'Error: Cannot delete the /memories directory itself')
  const found = await lookup(ctx.root, relative)
  if (found.kind === 'special') throw new CommandError('special-file', specialMessage(virtual))
  if (found.kind === 'missing' || found.kind === 'under-file') {
    throw new CommandError('not-found', `Error: The path ${virtual} does not exist`)
  }
  const mutation = { command: 'delete', paths: [virtual], overwrite: false } as const
  const message = `Successfully deleted ${virtual}`
  if (ctx.dryRun) {
    const kind = found.kind === 'file' ? 'file' : 'dir'
    return success(message, mutation, await planMove(ctx, 'delete', target, kind, null))
  }
  const real = realPath(ctx.root, relative)
  const parent = path.dirname(real)
  if (found.kind === 'file') {
    await fs.unlink(real)
    ctx.usage.add(-1, -found.stats.size)
  } else {
    const removed = await measure(real)
    // Renamed aside first so the folder disappears at once; a crash mid-removal leaves only a
    // hidden temp folder, which start-up recovery deletes.
    const aside = path.join(parent, `${TEMP_FILE_PREFIX}${randomUUID()}`)
    await fs.rename(real, aside)
    ctx.usage.add(-removed.files, -removed.bytes)
    // The folder is gone for Claude already; a leftover hidden folder is removed at next start.
    await fs
      .rm(aside, { recursive: true, force: true })
      .catch((error: unknown) => ctx.logger.warn('Could not remove a deleted folder', error))
  }
  return success(message, mutation)
}
