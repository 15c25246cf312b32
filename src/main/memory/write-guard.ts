/** Checks every write must pass before it takes effect: size limits and secret scanning. */

import type { CommandContext } from './context'
import { CommandError } from './outcome'
import { MAX_LINES } from './text-model'
import { newSecrets, pathSecretRefusal, scanPathForSecrets, secretRefusal } from './secrets'

/** What a write would change, for the limit checks. */
export interface PlannedWrite {
  readonly virtual: string
  readonly text: string
  /** Bytes of the file the write replaces (0 when it creates one). */
  readonly previousBytes: number
  /** True when the write creates a new file. */
  readonly newFile: boolean
  /** The text the write replaces, read only if a secret is found (to skip secrets already there). */
  readonly previousText: () => Promise<string | null>
}

/** Room left under a limit, below which a write is checked against a fresh count. */
const MARGIN_FRACTION = 0.1
const MIN_MARGIN_FILES = 100
const MIN_MARGIN_BYTES = 1024 * 1024

/** True when `after` leaves less than the margin (a tenth of `limit`, at least `floor`) free. */
function nearLimit(after: number, limit: number, floor: number): boolean {
  return limit - after < Math.max(limit * MARGIN_FRACTION, floor)
}

/**
 * Refuses a file of `bytes` bytes (UTF-8) over the per-file limit. The edits ask it before
 * they build their text, from the sizes of its parts: building a text of megabytes costs
 * 40-150 ms here (the string is flattened), which a refusal need not pay.
 */
export function guardFileSize(ctx: CommandContext, virtual: string, bytes: number): void {
  const { maxFileBytes } = ctx.limits
  if (bytes > maxFileBytes) {
    throw new CommandError(
      'too-large',
      `Error: Nothing was written to ${virtual}: the file would be ${counted(bytes, 'byte')}, over the limit of ${counted(maxFileBytes, 'byte')} per memory file. Split it into smaller files.`,
    )
  }
}

/** Refuses a write that would break a limit. */
export async function guardWrite(ctx: CommandContext, plan: PlannedWrite): Promise<void> {
  const bytes = Buffer.byteLength(plan.text, 'utf8')
  const { maxTotalBytes, maxFiles } = ctx.limits
  const nothing = `Error: Nothing was written to ${plan.virtual}:`
  guardFileSize(ctx, plan.virtual, bytes)
  const lines = linesOverLimit(plan.text)
  if (lines !== null) {
    throw new CommandError(
      'too-large',
      `${nothing} the file would have ${count(lines)} lines, over the limit of ${count(MAX_LINES)} lines per memory file (past it a file can no longer be viewed or edited). Split it into smaller files.`,
    )
  }
  const files = plan.newFile ? 1 : 0
  const delta = bytes - plan.previousBytes
  // A growing write that finds the folder being walked aside waits for that walk's count: a
  // file grown in place outside, which only a walk sees, must count toward the limits
  // (review15-misc R2). Views, deletes, renames and edits that do not grow the total go on.
  if (files > 0 || delta > 0) await ctx.usage.settleWalk?.()
  let usage = await ctx.usage.get()
  // A growing write whose total may have missed outside changes (larger than any margin: a
  // folder of files dropped in) has it checked first, cheaply where the source can.
  if ((files > 0 || delta > 0) && ctx.usage.mayBeStale?.() === true) {
    usage = await (ctx.usage.recheck?.() ?? ctx.usage.fresh())
  }
  // Near a limit, a total that missed changes made outside since it was counted (a file
  // grown in place, which no check of the folders sees) could let this write break it: it is
  // counted again (cheap where it matters: far from the limits, as memory usually is, no
  // write walks the folder).
  if (
    (files > 0 && nearLimit(usage.files + files, maxFiles, MIN_MARGIN_FILES)) ||
    (delta > 0 && nearLimit(usage.bytes + delta, maxTotalBytes, MIN_MARGIN_BYTES))
  ) {
    usage = await ctx.usage.fresh()
  }
  if (files > 0 && usage.files + files > maxFiles) {
    throw new CommandError(
      'limit-reached',
      `${nothing} memory already holds ${counted(usage.files, 'file')}, the limit is ${count(maxFiles)}. Merge or delete files first.`,
    )
  }
  if (delta > 0 && usage.bytes + delta > maxTotalBytes) {
    throw new CommandError(
      'limit-reached',
      `${nothing} memory would hold ${counted(usage.bytes + delta, 'byte')} in total, over the limit of ${counted(maxTotalBytes, 'byte')}. Shorten or delete files first.`,
    )
  }
}

/**
 * The secret scan of a planned write, meant to run while the temp file is written
 * (`atomicWrite`'s `beforeCommit`): throws the refusal when the text adds a secret.
 */
export async function scanWrite(ctx: CommandContext, plan: PlannedWrite): Promise<void> {
  if (!ctx.policy.secretScanning) return
  const found = await newSecrets(plan.text, plan.previousText, plan.virtual)
  if (found.length > 0)
    throw new CommandError('secret-detected', secretRefusal(plan.virtual, found))
}

/**
 * The lines of `text` (as the line model counts them: a final newline ends the last line) when
 * there are more than `view` and the edits accept, else null. Cheap: a text of n characters has
 * at most n lines, so a shorter one is not scanned.
 */
function linesOverLimit(text: string): number | null {
  if (text.length <= MAX_LINES) return null
  let lines = 0
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++
  if (!text.endsWith('\n')) lines++
  return lines > MAX_LINES ? lines : null
}

function count(n: number): string {
  return n.toLocaleString('en-US')
}

/** `n` and its noun, singular for one ("1 file", "2 files"). */
function counted(n: number, noun: string): string {
  return `${count(n)} ${noun}${n === 1 ? '' : 's'}`
}

/** Refuses a new path that holds a secret (create of a new file, rename's destination). */
export async function guardPath(
  ctx: CommandContext,
  virtual: string,
  what: 'create' | 'rename',
): Promise<void> {
  if (!ctx.policy.secretScanning) return
  const found = await scanPathForSecrets(virtual)
  if (found.length > 0) throw new CommandError('secret-detected', pathSecretRefusal(what, found))
}
