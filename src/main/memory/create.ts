/** The `create` command: writes a whole file, creating its folders. */

import path from 'node:path'
import type { CreateExistingPolicy, KeptAsideEntry } from '../../shared/types'
import { mayNotRead } from '../lib/may-read'
import {
  ChangedUnderfootError,
  Folder,
  readFileIn,
  sameEntry,
  writeFileAtomically,
} from '../lib/folders'
import { asideName, keepFileAside, returnFileAside } from './keep-aside'
import type { CommandContext } from './context'
import { CommandError, specialMessage, success } from './outcome'
import type { ParsedMemoryPath } from './path-rules'
import { describeFile, planFile } from './plan'
import { refuseSpellingTwin } from './spelling-twin'
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
  if (!exists) {
    // Never a second file that looks like one the folder holds in another spelling or case.
    refuseSpellingTwin(ctx, target, 'create')
    await guardPath(ctx, virtual, 'create')
  }
  await guardWrite(ctx, plan)
  // A previous file history holds no copy of (one too large to version) is not replaced,
  // which would lose it for good: it is kept aside, renamed in its folder, as restores do.
  const keep =
    previous !== null &&
    ctx.keepsNoCopy?.(previous.name, previous.stats, previous.parent.entry(previous.name)) === true
  // One Cairn may not read is never said (nor named) to be "not in the history": its last
  // readable version may well be there.
  const unreadable = keep && mayNotRead(previous.stats, previous.parent.entry(previous.name))
  const keptName = keep
    ? asideName(
        previous.name,
        (name) => previous.parent.lstat(name) !== null,
        'file',
        virtual.slice(0, virtual.lastIndexOf('/') + 1),
        unreadable ? 'unreadable' : 'not-in-history',
      )
    : null
  const versioned = unreadable && (await ctx.versionedAt?.(relative)) === true
  const keptAsName = `${virtual.slice(0, virtual.lastIndexOf('/') + 1)}${keptName}`
  const message =
    keptName !== null
      ? unreadable
        ? `File created successfully at: ${virtual}. The file already existed and could not be read (permission denied), so its previous content was kept as ${keptAsName}; ${versioned ? 'the history keeps its last version Cairn could read' : 'the history has no version of it'}.`
        : `File created successfully at: ${virtual}. The file already existed and was not in the history, which a restore could not bring back, so its previous content was kept as ${keptAsName}.`
      : exists
        ? `File created successfully at: ${virtual}. The file already existed; its previous content was replaced.`
        : `File created successfully at: ${virtual}`
  const mutation = {
    command: 'create',
    paths: [virtual],
    overwrite: exists && keptName === null,
  } as const
  if (ctx.dryRun) {
    await scanWrite(ctx, plan)
    return success(message, mutation, await planFile(ctx, 'create', target, { after: fileText }))
  }
  const made = ctx.describe ? describeFile(ctx, 'create', target, { after: fileText }) : undefined
  const dir = relative.includes('/') ? `${path.posix.dirname(relative)}/` : ''
  const recorded = ctx.usage.changing?.(keptName !== null ? [relative, dir + keptName] : [relative])
  // New folders appear together with the file, in one rename (see FolderTree.stage).
  const existing = found.parent instanceof Folder ? found.parent : null
  const staged = existing
    ? null
    : ctx.tree.stage(relative.includes('/') ? path.posix.dirname(relative) : '')
  let kept: string | null = null
  if (keep) {
    const now = previous.parent.lstat(previous.name)
    if (!now || !sameEntry(now, previous.stats)) throw new ChangedUnderfootError()
    kept = keepFileAside(previous.parent, previous.name, '', keptName!)
  }
  // A file kept aside is a name the folder's kept names do not know: listed again next time.
  const names = existing && kept === null ? ctx.names?.writing(existing) : undefined
  try {
    const { stage } = ctx
    await writeFileAtomically(existing ?? staged!.folder, path.posix.basename(relative), fileText, {
      beforeCommit: () => scanWrite(ctx, plan),
      folderSync: 'later',
      logger: ctx.logger,
      tempMade: names?.tempMade,
      aroundRename: names?.aroundRename,
      // Into new folders the file is published by the folders' rename, not its own: no stage.
      ...(stage && existing ? { stage: (write) => stage(write, relative, mutation, made) } : {}),
    })
    // A file in new folders is committed after the folders' rename: noted, with its text.
    if (staged) ctx.beforeMove?.(mutation, fileText)
    staged?.publish()
    names?.wrote(exists ? undefined : path.posix.basename(relative))
  } catch (error) {
    staged?.abort()
    if (kept !== null) returnFileAside(previous!.parent, kept, previous!.name)
    throw error
  }
  // The name kept aside may differ from the one planned (taken meanwhile).
  await recorded?.(kept !== null ? [dir + kept] : [])
  const result = success(message, mutation, made)
  if (kept === null) return result
  const keptAs = virtual.slice(0, virtual.lastIndexOf('/') + 1) + kept
  const entry: KeptAsideEntry = unreadable
    ? { path: virtual, keptAs, reason: 'unreadable', versioned }
    : { path: virtual, keptAs, reason: 'not-in-history' }
  return { ...result, keptAside: [entry] }
}
