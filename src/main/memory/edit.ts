/** The `str_replace` and `insert` commands: in-place edits of an existing text file. */

import type { Stats } from 'node:fs'
import { writeFileAtomically, type Folder } from '../lib/folders'
import type { CommandContext } from './context'
import { CommandError, quoteInput, specialMessage, success } from './outcome'
import type { ParsedMemoryPath } from './path-rules'
import { describeFile, planFile } from './plan'
import {
  findOccurrences,
  endsInEmptyLine,
  insertText,
  insertedText,
  lineOf,
  MAX_LINES,
  numberLine,
  splitLines,
} from './text-model'
import type { MadeChange, MemoryExecution, MemoryLimits, PlannedChange } from './types'
import { decodeText, withBom, withoutBom } from './view'
import { guardFileSize, guardWrite, scanWrite } from './write-guard'

/** Most characters of the numbered snippet `str_replace` returns. */
const MAX_SNIPPET_CHARS = 8_000
/** Most line numbers listed for an `old_str` that occurs more than once. */
const MAX_LISTED_LINES = 50
/** Lines of context shown above and below an edit. */
const SNIPPET_CONTEXT = 2

/**
 * An edit reads files up to this many times the per-file write limit, so a file that grew
 * past the limit outside Cairn can still be shortened; anything larger is refused unread.
 */
const EDIT_READ_FACTOR = 4

/** Largest file `str_replace` and `insert` read; the memory browser shows text up to it too. */
export function maxEditableBytes(limits: MemoryLimits): number {
  return limits.maxFileBytes * EDIT_READ_FACTOR
}

/** Runs `str_replace`: replaces the one occurrence of `oldStr` in the whole file by `newStr`. */
export async function strReplace(
  ctx: CommandContext,
  target: ParsedMemoryPath,
  oldStr: string,
  newStr: string,
): Promise<MemoryExecution> {
  const { virtual } = target
  const file = await readTextFile(
    ctx,
    target,
    `Error: The path ${virtual} does not exist. Please provide a valid path.`,
  )
  if (oldStr === '') {
    throw new CommandError(
      'invalid-input',
      'Error: `old_str` must not be empty. Give the exact text to replace (use insert to add text).',
    )
  }
  const found = findOccurrences(file.text, oldStr)
  if (found.length === 0) {
    throw new CommandError(
      'no-match',
      `No replacement was performed, old_str \`${quoteInput(oldStr)}\` did not appear verbatim in ${virtual}.`,
    )
  }
  if (found.length > 1) {
    const shown = found.slice(0, MAX_LISTED_LINES).map((at) => lineOf(file.text, at))
    const more = found.length - shown.length
    const lines = shown.join(', ') + (more > 0 ? ` and ${more.toLocaleString('en-US')} more` : '')
    throw new CommandError(
      'ambiguous-match',
      `No replacement was performed. Multiple occurrences of old_str \`${quoteInput(oldStr)}\` in lines: ${lines}. Please ensure it is unique`,
    )
  }
  const at = found[0]!
  // The size is refused before the text is built (see guardFileSize).
  guardFileSize(ctx, virtual, fileBytes(file) - utf8Bytes(oldStr) + utf8Bytes(newStr))
  // Sliced, never String.replace: `$&` and `$$` in new_str stay exactly as typed.
  const next = file.text.slice(0, at) + newStr + file.text.slice(at + oldStr.length)
  const planned = await writeText(ctx, 'str_replace', target, file, next)
  const first = lineOf(next, at)
  const last = newStr.length > 0 ? lineOf(next, at + newStr.length - 1) : first
  return success(
    `The memory file has been edited. Here is the snippet showing the change (with line numbers):\n${snippet(next, first, last)}`,
    { command: 'str_replace', paths: [virtual], overwrite: false },
    planned,
  )
}

/** Runs `insert`: adds `text` after line `insertLine` (0 = at the top). */
export async function insert(
  ctx: CommandContext,
  target: ParsedMemoryPath,
  insertLine: number,
  text: string,
): Promise<MemoryExecution> {
  const { virtual } = target
  const file = await readTextFile(ctx, target, `Error: The path ${virtual} does not exist`)
  if (insertLine < 0 || insertLine > file.lineCount) {
    throw new CommandError(
      'invalid-range',
      `Error: Invalid \`insert_line\` parameter: ${insertLine}. It should be within the range of lines of the file: [0, ${file.lineCount}]`,
    )
  }
  // The size is refused before the text is built (see guardFileSize): into a file that has
  // text, `insertText` adds `text` in the file's line endings, and one line ending after it
  // (two for an empty line last, after a last line with no newline); into an empty file,
  // `text` as it is (a newline for an empty one).
  const inserted = file.text === '' ? null : insertedText(file.text, text)
  const closing =
    inserted !== null &&
    insertLine === file.lineCount &&
    !file.text.endsWith('\n') &&
    endsInEmptyLine(inserted.body)
  const addedBytes = inserted
    ? utf8Bytes(inserted.body) + inserted.eol.length * (closing ? 2 : 1)
    : Math.max(1, utf8Bytes(text))
  guardFileSize(ctx, virtual, fileBytes(file) + addedBytes)
  const next = insertText(file.text, insertLine, text, inserted ?? undefined)
  const planned = await writeText(ctx, 'insert', target, file, next)
  return success(
    `The file ${virtual} has been edited.`,
    { command: 'insert', paths: [virtual], overwrite: false },
    planned,
  )
}

interface TextFile {
  readonly folder: Folder
  readonly name: string
  readonly stats: Stats
  /** The text without a leading byte order mark (what Claude sees and edits). */
  readonly text: string
  /** True when the file starts with a byte order mark, which an edit keeps at its start. */
  readonly bom: boolean
  /** Lines of `text`, as the line model counts them. */
  readonly lineCount: number
}

// Bytes of a file's text as written back: its byte order mark (3 bytes) included.
function fileBytes(file: TextFile): number {
  return utf8Bytes(file.text) + (file.bom ? 3 : 0)
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8')
}

async function readTextFile(
  ctx: CommandContext,
  target: ParsedMemoryPath,
  missingMessage: string,
): Promise<TextFile> {
  const found = ctx.tree.find(target.relative)
  if (found.kind === 'special')
    throw new CommandError('special-file', specialMessage(target.virtual))
  // The official handler answers "does not exist" for a directory too.
  if (found.kind !== 'file') throw new CommandError('not-found', missingMessage)
  if (found.stats.size > maxEditableBytes(ctx.limits)) {
    throw new CommandError(
      'too-large',
      `Error: ${target.virtual} is too large to edit (${found.stats.size.toLocaleString('en-US')} bytes).`,
    )
  }
  // Read by the history's check of the path just before, when it read it (lib/folders.ts).
  const bytes = ctx.tree.readFile(target.relative, found.parent, found.name, found.stats)
  const { text, bom } = withoutBom(decodeText(bytes, target.virtual))
  const lineCount = splitLines(text).lines.length
  if (lineCount > MAX_LINES) {
    throw new CommandError(
      'too-large',
      `File ${target.virtual} exceeds maximum line limit of ${MAX_LINES.toLocaleString('en-US')} lines.`,
    )
  }
  return { folder: found.parent, name: found.name, stats: found.stats, text, bom, lineCount }
}

/**
 * Writes the edited text; in a dry run only checks it, and returns the plan instead. A run that
 * describes itself returns what it changed.
 */
async function writeText(
  ctx: CommandContext,
  command: 'str_replace' | 'insert',
  target: ParsedMemoryPath,
  file: TextFile,
  edited: string,
): Promise<PlannedChange | MadeChange | undefined> {
  // The file's bytes before and after, its byte order mark (if any) kept at the start.
  const before = withBom(file.text, file.bom)
  const next = withBom(edited, file.bom)
  const plan = {
    virtual: target.virtual,
    text: next,
    previousBytes: file.stats.size,
    newFile: false,
    previousText: async () => before,
  }
  await guardWrite(ctx, plan)
  if (ctx.dryRun) {
    await scanWrite(ctx, plan)
    return planFile(ctx, command, target, { before, after: next })
  }
  const made = ctx.describe
    ? describeFile(ctx, command, target, { before, after: next })
    : undefined
  // The folder's fsync finishes before the commit's ref moves (settleFolderSyncs).
  const { stage } = ctx
  const mutation = { command, paths: [target.virtual], overwrite: false }
  const recorded = ctx.usage.changing?.([target.relative])
  const names = ctx.names?.writing(file.folder)
  await writeFileAtomically(file.folder, file.name, next, {
    beforeCommit: () => scanWrite(ctx, plan),
    folderSync: 'later',
    logger: ctx.logger,
    tempMade: names?.tempMade,
    aroundRename: names?.aroundRename,
    ...(stage ? { stage: (write) => stage(write, target.relative, mutation, made) } : {}),
  })
  names?.wrote()
  await recorded?.()
  return made
}

/** Numbered lines `first - 2 … last + 2` of `text`, cut if very long. */
function snippet(text: string, first: number, last: number): string {
  const { lines } = splitLines(text)
  if (lines.length === 0) return '[The file is now empty.]'
  const from = Math.max(1, first - SNIPPET_CONTEXT)
  const to = Math.min(lines.length, last + SNIPPET_CONTEXT)
  const out: string[] = []
  let used = 0
  for (let n = from; n <= to; n++) {
    const line = numberLine(n, lines[n - 1]!)
    used += line.length + 1
    if (used > MAX_SNIPPET_CHARS) {
      out.push(`[Snippet cut; view the file with view_range: [${n}, ${to}] to see the rest.]`)
      break
    }
    out.push(line)
  }
  return out.join('\n')
}
