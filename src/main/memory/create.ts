/** The `create` command: writes a whole file, creating its folders. */

import path from 'node:path'
import type { CreateExistingPolicy } from '../../shared/types'
import type { CommandContext } from './context'
import { atomicWrite } from '../lib/atomic-write'
import { ensureDirectories, lookup, readRegularFile, realPath, removeDirectories } from './fs-safe'
import { CommandError, specialMessage, success } from './outcome'
import type { ParsedMemoryPath } from './path-rules'
import { planFile } from './plan'
import type { MemoryExecution } from './types'
import { guardWrite, scanWrite } from './write-guard'

/** Runs `create`; `createExisting` decides whether an existing file is replaced or refused. */
export async function create(
  ctx: CommandContext,
  target: ParsedMemoryPath,
  fileText: string,
  createExisting: CreateExistingPolicy,
): Promise<MemoryExecution> {
  const { virtual, relative } = target
  if (relative === '') {
    throw new CommandError(
      'not-a-file',
      `Error: ${virtual} is the memory directory itself; create needs a file path such as /memories/notes.md.`,
    )
  }
  const found = await lookup(ctx.root, relative)
  if (found.kind === 'special') throw new CommandError('special-file', specialMessage(virtual))
  if (found.kind === 'under-file') {
    throw new CommandError(
      'conflict',
      `Error: Cannot create ${virtual}: /memories/${found.at} is a file, not a directory.`,
    )
  }
  if (found.kind === 'directory') {
    throw new CommandError(
      'not-a-file',
      `Error: ${virtual} is a directory; create needs a file path.`,
    )
  }
  const exists = found.kind === 'file'
  if (exists && createExisting === 'error') {
    throw new CommandError('exists', `Error: File ${virtual} already exists`)
  }
  const real = realPath(ctx.root, relative)
  const plan = {
    virtual,
    text: fileText,
    previousBytes: exists ? found.stats.size : 0,
    newFile: !exists,
    previousText: async () => (exists ? (await readRegularFile(real)).toString('utf8') : null),
  }
  const change = await guardWrite(ctx, plan)
  const message = exists
    ? `File created successfully at: ${virtual}. The file already existed; its previous content was replaced.`
    : `File created successfully at: ${virtual}`
  const mutation = { command: 'create', paths: [virtual], overwrite: exists } as const
  if (ctx.dryRun) {
    await scanWrite(ctx, plan)
    return success(message, mutation, await planFile(ctx, 'create', target, { after: fileText }))
  }
  const parent = relative.includes('/') ? path.posix.dirname(relative) : ''
  const parentReady = exists || (found.kind === 'missing' && found.parentIsDirectory)
  const created = parentReady ? [] : await ensureDirectories(ctx.root, parent)
  try {
    await atomicWrite(real, fileText, {
      beforeCommit: () => scanWrite(ctx, plan),
      logger: ctx.logger,
    })
  } catch (error) {
    await removeDirectories(created)
    throw error
  }
  ctx.usage.add(change.files, change.bytes)
  return success(message, mutation)
}
