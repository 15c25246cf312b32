/**
 * Moving memory in and out of Cairn. Export: the whole history as a git bundle, or the
 * memory files (now, or at any commit) as a ZIP. Import: a bundle or an existing git
 * repository (its history kept), a folder or ZIP of Markdown files, or a memory export pasted
 * from another assistant. Each import is one commit by You, reviewable and restorable; its
 * files pass the same path and secret checks as Claude's writes.
 */
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { lstat, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import git from 'isomorphic-git'
import fs from 'node:fs'
import type { ExportResult, ImportKind, ImportResult } from '../../shared/types'
import type { HostActions } from '../app'
import {
  AUTHORS,
  formatCommitMessage,
  serializeCommit,
  type HistoryGit,
  type VersionedMemory,
} from '../history'
import { atomicWrite } from '../lib/atomic-write'
import { CairnError } from '../lib/errors'
import { decodeUtf8, escapeInvisible, foldedName } from '../lib/text'
import { BundleError, bundleTip, parseBundle, writeBundle } from './bundle'
import { checkSafe, graphOf, learn, mergeCommit } from './engine'
import { commitFiles } from './file-map'
import { explore, mergeBaseOf } from './graph'
import {
  checkImportedFile,
  shownSkipped,
  skippedSummary,
  type ImportPolicy,
  type Skipped,
} from './import-checks'
import { ImportDamagedError, importHistory } from './import-history'
import { mergeText } from './merge-text'
import { sideName } from './merge-trees'
import type { ConflictRecord } from './store'
import { readZip, writeZip, ZipError } from './zip'

export interface TransferContext {
  readonly dataDir: string
  readonly history: HistoryGit
  readonly memory: Pick<VersionedMemory, 'execute'>
  readonly host: Pick<HostActions, 'chooseSavePath' | 'chooseOpenPath'>
  readonly policy: () => Promise<ImportPolicy>
  readonly machine: () => Promise<string>
  readonly now: () => number
  /** Told the conflicts an import raised (files it had to merge with what memory held). */
  readonly onConflicts: (records: ReadonlyArray<ConflictRecord>) => Promise<void>
  /** Names in the memory folder ignore case (macOS and Windows): `Notes.md` is `notes.md`. */
  readonly namesFoldCase: boolean
}

/** Most bytes read from a file chosen for import before it is refused as too large. */
const MAX_IMPORT_FILE_BYTES = 512 * 1024 * 1024

export async function exportMemory(
  ctx: TransferContext,
  kind: 'bundle' | 'zip',
  at?: string,
): Promise<ExportResult> {
  const { history } = ctx
  const head = history.head()
  if (!head) throw new CairnError('not-found', 'There is no memory to export yet.')
  const date = new Date(ctx.now()).toISOString().slice(0, 10)
  // Read as a transfer reads: what open took unchecked is checked first (a damaged copy it
  // would write again from its file is not exported as damage), and no maintenance step
  // changes the object folders meanwhile.
  if (kind === 'bundle') {
    const bytes = await history.transfer(() => writeBundle(history, head))
    return save(ctx, bytes, {
      title: 'Export memory history',
      defaultName: `cairn-history-${date}.bundle`,
      filters: [{ name: 'Git bundle', extensions: ['bundle'] }],
      what: 'The whole history',
    })
  }
  const commit = at ?? head
  if (history.position(commit) < 0) {
    throw new CairnError('not-found', `Version ${commit.slice(0, 7)} is not in the history.`)
  }
  const { files, entries } = await history.transfer(async () => {
    const raw = await history.objects.readCommit(commit)
    const files = await commitFiles(history.objects, commit)
    const entries = []
    for (const [name, entry] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
      entries.push({
        name,
        data: await history.objects.readBlob(entry.oid),
        time: raw.timestamp * 1000,
      })
    }
    return { files, entries }
  })
  return save(ctx, writeZip(entries), {
    title: at ? 'Export memory at this version' : 'Export memory files',
    defaultName: at ? `cairn-memory-${at.slice(0, 7)}.zip` : `cairn-memory-${date}.zip`,
    filters: [{ name: 'ZIP archive', extensions: ['zip'] }],
    what: `${files.size} ${files.size === 1 ? 'file' : 'files'}`,
  })
}

async function save(
  ctx: TransferContext,
  bytes: Uint8Array,
  options: {
    title: string
    defaultName: string
    filters: Array<{ name: string; extensions: string[] }>
    what: string
  },
): Promise<ExportResult> {
  const target = await ctx.host.chooseSavePath(options)
  if (!target) return { saved: false, fileName: null, message: 'Export cancelled.' }
  try {
    await atomicWrite(target, bytes)
  } catch {
    throw new CairnError('io-error', 'The export could not be written there. Choose another place.')
  }
  const fileName = path.basename(target)
  return { saved: true, fileName, message: `${options.what} saved as ${fileName}.` }
}

export async function importMemory(
  ctx: TransferContext,
  kind: ImportKind,
  text?: string,
): Promise<ImportResult> {
  const result = await importChosen(ctx, kind, text)
  return { ...result, skipped: shownSkipped(result.skipped) }
}

async function importChosen(
  ctx: TransferContext,
  kind: ImportKind,
  text?: string,
): Promise<ImportResult> {
  if (kind === 'text') return importText(ctx, text ?? '')
  const chosen = await ctx.host.chooseOpenPath(
    kind === 'bundle'
      ? {
          title: 'Import a git bundle',
          kind: 'file',
          filters: [{ name: 'Git bundle', extensions: ['bundle'] }],
        }
      : kind === 'zip'
        ? {
            title: 'Import a ZIP of Markdown files',
            kind: 'file',
            filters: [{ name: 'ZIP archive', extensions: ['zip'] }],
          }
        : kind === 'repository'
          ? { title: 'Import a git repository of memory files', kind: 'folder' }
          : { title: 'Import a folder of Markdown files', kind: 'folder' },
  )
  if (!chosen) return { commit: null, message: 'Import cancelled.', skipped: [] }
  const name = path.basename(chosen)
  if (kind === 'bundle') return importBundle(ctx, chosen, name)
  if (kind === 'repository') return importRepository(ctx, chosen, name)
  const files = kind === 'zip' ? await filesOfZip(ctx, chosen) : await filesOfFolder(ctx, chosen)
  return importFiles(ctx, files.files, files.skipped, name)
}

// ------------------------------------------------------------------ histories

/** Where a bundle's objects wait to be checked, one folder per import. */
function stagingDir(dataDir: string): string {
  return path.join(dataDir, 'sync', `import-${randomUUID()}.git`)
}

/** Removes staging folders an interrupted import left (at start, before any import runs). */
export async function removeStaging(dataDir: string): Promise<void> {
  const dir = path.join(dataDir, 'sync')
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    // Sync never used: nothing to remove.
    return
  }
  for (const name of names) {
    if (/^import-[0-9a-f-]+\.git$/.test(name)) {
      await rm(path.join(dir, name), { recursive: true, force: true })
    }
  }
}

async function importBundle(
  ctx: TransferContext,
  file: string,
  name: string,
): Promise<ImportResult> {
  const bytes = await readChosenFile(file)
  let bundle
  try {
    bundle = parseBundle(bytes)
  } catch (error) {
    if (error instanceof BundleError)
      throw new CairnError('import-invalid', `${name} could not be imported: ${error.message}.`)
    throw error
  }
  if (bundle.prerequisites.length > 0) {
    throw new CairnError(
      'import-invalid',
      `${name} holds only the recent part of a history (it needs commits it does not contain). Export a complete bundle (git bundle create file.bundle --all).`,
    )
  }
  const tip = bundleTip(bundle)
  if (!tip)
    throw new CairnError('import-invalid', `${name} does not say which of its branches to import.`)
  const staging = stagingDir(ctx.dataDir)
  try {
    await git.init({ fs, gitdir: staging, bare: true })
    const packName = `objects/pack/pack-${randomUUID()}.pack`
    await mkdir(path.join(staging, 'objects', 'pack'), { recursive: true })
    await writeFile(path.join(staging, packName), bundle.pack)
    try {
      await git.indexPack({ fs, dir: staging, gitdir: staging, filepath: packName, cache: {} })
    } catch {
      throw new CairnError('import-invalid', `${name} is damaged: its objects cannot be read.`)
    }
    return await importFrom(ctx, staging, tip, `the bundle ${name}`)
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

async function importRepository(
  ctx: TransferContext,
  folder: string,
  name: string,
): Promise<ImportResult> {
  const dotGit = path.join(folder, '.git')
  const gitdir = existsSync(path.join(dotGit, 'HEAD')) ? dotGit : folder
  if (!existsSync(path.join(gitdir, 'HEAD')) || !existsSync(path.join(gitdir, 'objects'))) {
    throw new CairnError(
      'import-invalid',
      `${name} is not a git repository (it has no .git folder).`,
    )
  }
  let tip: string
  try {
    tip = await git.resolveRef({ fs, gitdir, ref: 'HEAD' })
  } catch {
    throw new CairnError('import-invalid', `${name} is a git repository without any commit yet.`)
  }
  return importFrom(ctx, gitdir, tip, `the repository ${name}`)
}

/** Copies the history ending in `tip` and joins it to memory's in one commit by You. */
async function importFrom(
  ctx: TransferContext,
  source: string,
  tip: string,
  sourceName: string,
): Promise<ImportResult> {
  const { history } = ctx
  const policy = await ctx.policy()
  let imported
  try {
    imported = await importHistory(source, tip, history, policy)
  } catch (error) {
    if (error instanceof CairnError) throw error
    if (error instanceof ImportDamagedError)
      throw new CairnError('import-invalid', `${sourceName} is damaged: ${error.message}.`)
    throw new CairnError('import-invalid', `${sourceName} could not be read as a git history.`)
  }
  const files = await commitFiles(history.objects, imported.tip)
  if (files.size === 0) {
    throw new CairnError(
      'import-empty',
      `Nothing in ${sourceName} could become a memory file.${skippedSummary(imported.skipped)}`,
    )
  }
  const machine = await ctx.machine()
  const commits = `${imported.commits} ${imported.commits === 1 ? 'commit' : 'commits'}`
  const result = await history.exclusive(async (session) => {
    const local = session.head()
    const found = await explore(graphOf(history), imported.tip)
    if (found.fresh.size === 0) return null
    await checkSafe(history.objects, imported.tip, local, ctx.namesFoldCase)
    const subject = `import ${sourceName} (${commits})`
    if (local === null) {
      const paths = [...files.keys()].sort().map((p) => `/memories/${p}`)
      const oid = await history.objects.write(
        'commit',
        serializeCommit({
          tree: (await history.objects.readCommit(imported.tip)).tree,
          parent: imported.tip,
          author: AUTHORS.user,
          timestamp: Math.floor(ctx.now() / 1000),
          message: formatCommitMessage({
            actor: 'user',
            command: 'import',
            subject,
            paths,
            conversationId: null,
            toolUseId: null,
            overwrite: false,
            restoredFrom: null,
            machine,
          }),
        }),
      )
      const added = await session.moveMain(oid, 'forward')
      return { commit: added.at(-1) ?? null, conflicts: await learn({ git: history }, added) }
    }
    const merge = await mergeCommit(
      { git: history, machine, now: ctx.now, namesFoldCase: ctx.namesFoldCase },
      local,
      imported.tip,
      mergeBaseOf(graphOf(history), found),
      'import',
      subject,
    )
    const added = await session.moveMain(merge.oid, 'forward')
    return {
      commit: added.at(-1) ?? null,
      conflicts: [
        ...merge.conflicts,
        ...(await learn(
          { git: history },
          added.filter((commit) => commit.oid !== merge.oid),
        )),
      ],
    }
  })
  if (!result) {
    return {
      commit: null,
      message: `Nothing new: ${sourceName} is already part of memory’s history.`,
      skipped: imported.skipped,
    }
  }
  await ctx.onConflicts(result.conflicts)
  const conflicts = result.conflicts.length
  return {
    commit: result.commit,
    message:
      `Imported ${sourceName}: ${commits}, ${files.size} ${files.size === 1 ? 'file' : 'files'}.` +
      (conflicts > 0
        ? ` ${conflicts} ${conflicts === 1 ? 'file holds' : 'files hold'} both versions to choose from.`
        : '') +
      skippedSummary(imported.skipped),
    skipped: imported.skipped,
  }
}

// ------------------------------------------------------------------ files

interface Gathered {
  readonly files: Map<string, Uint8Array>
  readonly skipped: Skipped[]
}

/** Markdown and plain text: what a folder or ZIP import takes. */
const TEXT_EXTENSIONS = new Set(['.md', '.markdown', '.mdown', '.txt', '.text'])

async function filesOfZip(ctx: TransferContext, file: string): Promise<Gathered> {
  const { limits } = await ctx.policy()
  let entries
  try {
    entries = readZip(await readChosenFile(file), {
      maxEntries: limits.maxFiles,
      maxEntryBytes: limits.maxFileBytes,
      maxTotalBytes: limits.maxTotalBytes,
    })
  } catch (error) {
    if (error instanceof ZipError) {
      throw new CairnError(
        'import-invalid',
        `${path.basename(file)} could not be imported: ${error.message}.`,
      )
    }
    throw error
  }
  const files = new Map<string, Uint8Array>()
  const skipped: Skipped[] = []
  for (const entry of entries) {
    const name = entry.name.replace(/^\.\//, '')
    if (files.has(name)) {
      // A second entry of one name would silently replace the first: the first is kept, the
      // second listed as left out.
      skipped.push({ path: name, reason: 'a second file of the same name' })
      continue
    }
    if (entry.data === null) {
      skipped.push({ path: name, reason: 'too large for a memory file' })
      continue
    }
    if (!TEXT_EXTENSIONS.has(path.posix.extname(name).toLowerCase())) {
      skipped.push({ path: name, reason: 'not a Markdown or text file' })
      continue
    }
    files.set(name, entry.data)
  }
  return { files, skipped }
}

async function filesOfFolder(ctx: TransferContext, folder: string): Promise<Gathered> {
  const { limits } = await ctx.policy()
  const files = new Map<string, Uint8Array>()
  const skipped: Skipped[] = []
  let total = 0
  const walk = async (dir: string, prefix: string): Promise<void> => {
    let names: string[]
    try {
      names = await readdir(dir)
    } catch {
      throw new CairnError('import-invalid', 'The chosen folder could not be read.')
    }
    for (const name of names.sort()) {
      const relative = prefix ? `${prefix}/${name}` : name
      const stats = await lstat(path.join(dir, name))
      if (name.startsWith('.')) {
        // Hidden files and folders (.git, .obsidian) never become memory.
        skipped.push({
          path: relative,
          reason: stats.isDirectory() ? 'a hidden folder' : 'a hidden file',
        })
        continue
      }
      if (stats.isDirectory()) {
        await walk(path.join(dir, name), relative)
        continue
      }
      if (!stats.isFile()) {
        skipped.push({
          path: relative,
          reason: stats.isSymbolicLink() ? 'a symbolic link' : 'a special file',
        })
        continue
      }
      if (!TEXT_EXTENSIONS.has(path.extname(name).toLowerCase())) {
        skipped.push({ path: relative, reason: 'not a Markdown or text file' })
        continue
      }
      if (stats.size > limits.maxFileBytes) {
        skipped.push({ path: relative, reason: 'too large for a memory file' })
        continue
      }
      total += stats.size
      if (files.size >= limits.maxFiles || total > limits.maxTotalBytes) {
        throw new CairnError(
          'limit-reached',
          'The folder holds more than memory may: choose a smaller folder.',
        )
      }
      files.set(relative, await readFile(path.join(dir, name)))
    }
  }
  await walk(folder, '')
  return { files, skipped }
}

/**
 * Adds `candidates` to memory in one commit by You. A file that exists with other content is
 * merged with it like a file both machines added: shared lines once, the rest as a conflict.
 */
async function importFiles(
  ctx: TransferContext,
  candidates: ReadonlyMap<string, Uint8Array>,
  gathered: ReadonlyArray<Skipped>,
  sourceName: string,
): Promise<ImportResult> {
  const policy = await ctx.policy()
  const skipped: Skipped[] = [...gathered]
  const accepted = new Map<string, Uint8Array>()
  // Where names ignore case, `Notes.md` and `notes.md` are one file: folded name -> the first.
  const folded = new Map<string, string>()
  for (const [relative, bytes] of candidates) {
    const check = await checkImportedFile(relative, bytes, policy)
    const first = check.ok && ctx.namesFoldCase ? folded.get(foldedName(check.relative)) : undefined
    if (!check.ok) skipped.push({ path: relative, reason: check.reason })
    else if (accepted.has(check.relative)) {
      // Two names that are one once normalized (`café` written precomposed and decomposed):
      // the second would silently replace the first.
      skipped.push({ path: relative, reason: 'the same name as another file it holds' })
    } else if (first !== undefined) {
      skipped.push({
        path: relative,
        reason: `the same name as ${escapeInvisible(first)} on this system`,
      })
    } else {
      accepted.set(check.relative, bytes)
      folded.set(foldedName(check.relative), check.relative)
    }
  }
  if (accepted.size === 0) {
    throw new CairnError(
      'import-empty',
      `Nothing in ${sourceName} could become a memory file.${skippedSummary(skipped)}`,
    )
  }
  const { history } = ctx
  const machine = await ctx.machine()
  const outcome = await history.exclusive(async (session) => {
    const current = await commitFiles(history.objects, session.head())
    // Where names ignore case, an imported `Notes.md` is the `notes.md` memory holds: merged
    // with it under its own name, never written over it as another file of the commit.
    const held = new Map<string, string>()
    if (ctx.namesFoldCase) for (const path of current.keys()) held.set(foldedName(path), path)
    const writes = new Map<string, Uint8Array | null>()
    const conflicted: Array<{ path: string; otherPath?: string; markerSize?: number }> = []
    let bytes = 0
    for (const [named, content] of accepted) {
      const relative = current.has(named) ? named : (held.get(foldedName(named)) ?? named)
      const existing = current.get(relative)
      const oid = history.objects.hash('blob', content)
      if (existing?.oid === oid) continue
      if (!existing) {
        writes.set(relative, content)
        bytes += content.byteLength
        continue
      }
      const ours = decodeUtf8(await history.objects.readBlob(existing.oid))
      const theirs = decodeUtf8(content)
      if (ours === null || theirs === null) {
        const other = sideName(relative, 'imported', current)
        writes.set(other, content)
        conflicted.push({ path: relative, otherPath: other })
        continue
      }
      const merged = mergeText('', ours, theirs, {
        ours: machine,
        theirs: `imported from ${sourceName}`,
      })
      const encoded = new TextEncoder().encode(merged.text)
      writes.set(relative, encoded)
      bytes += encoded.byteLength - Buffer.byteLength(ours)
      if (merged.conflicts > 0) conflicted.push({ path: relative, markerSize: merged.markerSize })
    }
    if (writes.size === 0) return null
    let totalBytes = 0
    for (const entry of current.values())
      totalBytes += (await history.objects.readBlob(entry.oid)).byteLength
    const newFiles = [...writes.keys()].filter((p) => !current.has(p)).length
    if (
      current.size + newFiles > policy.limits.maxFiles ||
      totalBytes + bytes > policy.limits.maxTotalBytes
    ) {
      throw new CairnError(
        'limit-reached',
        'Memory would hold more than its limits after this import. Nothing was imported.',
      )
    }
    const commit = await session.commitFiles(writes, {
      actor: 'user',
      command: 'import',
      subject: `import ${writes.size} ${writes.size === 1 ? 'file' : 'files'} from ${sourceName}`,
      conversationId: null,
      toolUseId: null,
      overwrite: false,
      restoredFrom: null,
    })
    return { commit, conflicted }
  })
  if (!outcome?.commit) {
    return {
      commit: null,
      message: `Nothing new: memory already holds every file of ${sourceName}.${skippedSummary(skipped)}`,
      skipped,
    }
  }
  const { commit, conflicted } = outcome
  await ctx.onConflicts(
    conflicted.map((c) =>
      c.otherPath
        ? {
            path: `/memories/${c.path}`,
            kind: 'binary',
            otherPath: `/memories/${c.otherPath}`,
            since: commit.oid,
          }
        : {
            path: `/memories/${c.path}`,
            kind: 'text',
            since: commit.oid,
            ...(c.markerSize !== undefined && { markerSize: c.markerSize }),
          },
    ),
  )
  const count = accepted.size
  return {
    commit,
    message:
      `Imported ${count} ${count === 1 ? 'file' : 'files'} from ${sourceName}.` +
      (conflicted.length > 0
        ? ` ${conflicted.length} already existed with other content: both versions are kept to choose from.`
        : '') +
      skippedSummary(skipped),
    skipped,
  }
}

// ------------------------------------------------------------------ pasted text

/** Where a pasted export lands: the first of these names that is free. */
const TEXT_TARGET = '/memories/imported-memory'

async function importText(ctx: TransferContext, text: string): Promise<ImportResult> {
  const trimmed = text.replace(/\r\n?/g, '\n').trim()
  if (!trimmed) throw new CairnError('import-empty', 'Paste the memory export first.')
  const date = new Date(ctx.now()).toISOString().slice(0, 10)
  const content = `# Memory imported from another assistant\n\nPasted into Cairn on ${date}.\n\n${trimmed}\n`
  for (let n = 1; n < 100; n++) {
    const target = `${TEXT_TARGET}${n > 1 ? `-${n}` : ''}.md`
    const outcome = await ctx.memory.execute(
      { command: 'create', path: target, file_text: content },
      { actor: 'user' },
      { commitAs: 'import', createExisting: 'error' },
    )
    if (!outcome.isError) {
      return {
        commit: outcome.commit,
        message: `Saved the pasted memory as ${target}.`,
        skipped: [],
      }
    }
    if (outcome.errorCode !== 'exists') {
      throw new CairnError(
        outcome.errorCode ?? 'invalid-input',
        String(outcome.content).replace(/^Error: /, ''),
      )
    }
  }
  throw new CairnError('exists', 'Too many imported memory files already; rename some first.')
}

async function readChosenFile(file: string): Promise<Buffer> {
  let stats
  try {
    stats = await lstat(file)
  } catch {
    throw new CairnError('not-found', 'The chosen file could not be found.')
  }
  if (!stats.isFile()) throw new CairnError('import-invalid', 'Choose a file, not a folder.')
  if (stats.size > MAX_IMPORT_FILE_BYTES)
    throw new CairnError('too-large', 'The chosen file is too large to import.')
  return readFile(file)
}
