/**
 * The checks a file must pass to enter memory by an import. Files (a ZIP, a folder): the same
 * path rules and secret scan as Claude's writes, the size limit, and text (or a PNG/JPEG
 * image). A history (a bundle, a repository): the history's own rules — any name the history
 * may hold, up to the size it versions — and the same secret scan, so an export imported
 * into a fresh data folder gives back every commit's tree.
 */
import { entryNameProblem, MAX_VERSIONED_BYTES } from '../history'
import { decodeUtf8, escapeInvisible } from '../lib/text'
import { IMAGE_TYPES, parseMemoryPath, scanForSecrets, type MemoryLimits } from '../memory'

/** What the checks depend on: the Memory tool's policy and limits in force. */
export interface ImportPolicy {
  readonly secretScanning: boolean
  readonly limits: MemoryLimits
}

/** A file left out of an import, and why (a sentence fragment for people). */
export interface Skipped {
  readonly path: string
  readonly reason: string
}

export type FileCheck =
  { readonly ok: true; readonly relative: string } | { readonly ok: false; readonly reason: string }

/**
 * Checks one file (`relative` to the memory root, as the source names it). The accepted path
 * is normalized (NFC) as the Memory tool would.
 */
export async function checkImportedFile(
  relative: string,
  bytes: Uint8Array,
  policy: ImportPolicy,
): Promise<FileCheck> {
  const parsed = parseMemoryPath(`/memories/${relative}`)
  if (!parsed.ok || parsed.relative === '') {
    return { ok: false, reason: parsed.ok ? 'not a file' : pathReason(parsed.message) }
  }
  if (bytes.byteLength > policy.limits.maxFileBytes) {
    return {
      ok: false,
      reason: `larger than the ${Math.round(policy.limits.maxFileBytes / 1024)} KB a memory file may hold`,
    }
  }
  const extension = /\.[^./]+$/.exec(parsed.relative)?.[0]?.toLowerCase() ?? ''
  const text = decodeUtf8(bytes)
  if (text === null) {
    if (IMAGE_TYPES[extension]) return { ok: true, relative: parsed.relative }
    return { ok: false, reason: 'not text' }
  }
  if (policy.secretScanning) {
    const found = await scanForSecrets(text, parsed.virtual)
    if (found.length > 0) {
      const kinds = [...new Set(found.map((f) => f.kind))].join(', ')
      return { ok: false, reason: `looks like it holds a credential (${kinds})` }
    }
  }
  return { ok: true, relative: parsed.relative }
}

/**
 * Checks one file of an imported history (`relative` as its tree names it, kept as it is):
 * a name the history may hold (`entryNameProblem`, the scan's rule — hidden files and
 * folders included), at most `MAX_VERSIONED_BYTES`, and no credential when scanning is on.
 */
export async function checkHistoryFile(
  relative: string,
  bytes: Uint8Array,
  policy: Pick<ImportPolicy, 'secretScanning'>,
): Promise<FileCheck> {
  for (const segment of relative.split('/')) {
    const problem = entryNameProblem(segment)
    if (problem) return { ok: false, reason: problem }
  }
  if (bytes.byteLength > MAX_VERSIONED_BYTES) {
    return {
      ok: false,
      reason: `larger than the ${Math.round(MAX_VERSIONED_BYTES / 1024 / 1024)} MB the history versions`,
    }
  }
  const text = decodeUtf8(bytes)
  if (text !== null && policy.secretScanning) {
    const found = await scanForSecrets(text, `/memories/${relative}`)
    if (found.length > 0) {
      const kinds = [...new Set(found.map((f) => f.kind))].join(', ')
      return { ok: false, reason: `looks like it holds a credential (${kinds})` }
    }
  }
  return { ok: true, relative }
}

// The path rules speak to Claude ("The path … is not allowed: names starting with…"); an
// import lists the reason alone.
function pathReason(message: string): string {
  const reason = /is not allowed: (.*)\.$/.exec(message)?.[1]
  if (reason)
    return reason.replace(
      /^names starting with "\." \(hidden files\) are not allowed$/,
      'a hidden file',
    )
  return 'not a valid memory path'
}

/**
 * What was left out as it may be shown: a name's control and format characters written as
 * escapes (`\u202E`), so that a name left out for one never reorders or breaks what is shown.
 */
export function shownSkipped(skipped: ReadonlyArray<Skipped>): Skipped[] {
  return skipped.map((s) => ({ path: escapeInvisible(s.path), reason: s.reason }))
}

/** Sentences listing what was left out (the first few, then a count). */
export function skippedSummary(skipped: ReadonlyArray<Skipped>): string {
  if (skipped.length === 0) return ''
  const shown = shownSkipped(skipped.slice(0, 3)).map((s) => `${s.path} (${s.reason})`)
  const more = skipped.length > 3 ? ` and ${skipped.length - 3} more` : ''
  return ` Left out: ${shown.join(', ')}${more}.`
}
