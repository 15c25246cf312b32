/** The `create` command: writes a whole file, creating its folders. */

import path from 'node:path'
import type { CreateExistingPolicy } from '../../shared/types'
import { Folder, readFileIn, writeFileAtomically } from '../lib/folders'
import type { CommandContext } from './context'
import { CommandError, specialMessage, success } from './outcome'
import type { ParsedMemoryPath } from './path-rules'
import { describeFile, planFile } from './plan'
import type { MemoryExecution } from './types'
import { isCounted } from './usage'
import { guardPath, guardWrite, scanWrite } from './write-guard'

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
  const found = ctx.tree.find(relative)
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
  const previous = found.kind === 'file' ? found : null
  const exists = previous !== null
  const counted = previous !== null && isCounted(previous.stats.size)
  if (exists && createExisting === 'error') {
    throw new CommandError('exists', `Error: File ${virtual} already exists`)
  }
  const plan = {
    virtual,
    text: fileText,
    previousBytes: counted ? previous.stats.size : 0,
    newFile: !counted,
    previousText: async () =>
      previous ? readFileIn(previous.parent, previous.name, previous.stats).toString('utf8') : null,
  }
  if (!exists) await guardPath(ctx, virtual, 'create')
  const change = await guardWrite(ctx, plan)
  const message = exists
    ? `File created successfully at: ${virtual}. The file already existed; its previous content was replaced.`
    : `File created successfully at: ${virtual}`
  const mutation = { command: 'create', paths: [virtual], overwrite: exists } as const
  if (ctx.dryRun) {
    await scanWrite(ctx, plan)
    return success(message, mutation, await planFile(ctx, 'create', target, { after: fileText }))
  }
  const made = ctx.describe ? describeFile(ctx, 'create', target, { after: fileText }) : undefined
  // New folders appear together with the file, in one rename (see FolderTree.stage).
  const existing = found.parent instanceof Folder ? found.parent : null
  const staged = existing
    ? null
    : ctx.tree.stage(relative.includes('/') ? path.posix.dirname(relative) : '')
  try {
    const { stage } = ctx
    await writeFileAtomically(existing ?? staged!.folder, path.posix.basename(relative), fileText, {
      beforeCommit: () => scanWrite(ctx, plan),
      folderSync: 'later',
      logger: ctx.logger,
      // Into new folders the file is published by the folders' rename, not its own: no stage.
      ...(stage && existing ? { stage: (write) => stage(write, relative, mutation, made) } : {}),
    })
    staged?.publish()
  } catch (error) {
    staged?.abort()
    throw error
  }
  ctx.usage.add(change.files, change.bytes)
  return success(message, mutation, made)
}
