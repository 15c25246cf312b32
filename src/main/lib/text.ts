/** UTF-8 text of `bytes`, or null for binary content (a NUL byte, or invalid UTF-8). */
export function decodeUtf8(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null
  try {
    // `ignoreBOM` keeps a leading U+FEFF: text written back from this keeps the file's BOM.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    // Invalid UTF-8 is what "binary" means here.
    return null
  }
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * `text` with every lone UTF-16 surrogate replaced by U+FFFD (as `String.prototype.toWellFormed`,
 * which the ES2023 typings lack). The Messages API refuses a request holding half a surrogate
 * pair ("no low surrogate in string"), and a conversation resends every earlier tool_result:
 * one bad string would block the chat for good. Every string Cairn sends to Claude goes
 * through this last.
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD')
}

// `String.prototype.isWellFormed` (Node 20, missing from the ES2023 typings): a native scan,
// many times faster than the regex on a text of megabytes.
const nativeIsWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean })
  .isWellFormed

/**
 * Where the first lone UTF-16 surrogate of `text` is (its index), or -1 when there is none.
 * Such a text cannot be written as UTF-8: an encoder writes U+FFFD in its place.
 */
export function loneSurrogateAt(text: string): number {
  if (nativeIsWellFormed?.call(text) === true) return -1
  return text.search(LONE_SURROGATE)
}

// Graphemes longer than this are cut like any character sequence (never inside a pair): the
// segmenter only looks at this much text around the cut, so the cost stays constant.
const CLUSTER_WINDOW = 32
let segmenter: Intl.Segmenter | null = null

/**
 * The longest start of `text` of at most `max` UTF-16 units that ends between two characters
 * as a person sees them: never inside a surrogate pair (half an emoji), and not inside a short
 * grapheme cluster (an emoji with its skin tone or ZWJ parts, a letter with its accents).
 * Every place that shortens text for Claude or the UI cuts with this, never with `.slice`.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text
  if (max <= 0) return ''
  const from = Math.max(0, max - CLUSTER_WINDOW)
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' })
  let end = from
  for (const { index } of segmenter.segment(text.slice(from, max + CLUSTER_WINDOW))) {
    if (from + index > max) break
    end = from + index
  }
  // No boundary in the window (a very long cluster), or the window began inside a cluster:
  // fall back to the nearest code point boundary.
  if (end === from && from > 0) end = max
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return text.slice(0, end)
}

/** `text` cut to at most `max` units by `cutText`, with `…` after it when something was cut. */
export function cutWithEllipsis(text: string, max: number): string {
  return text.length <= max ? text : `${cutText(text, max)}…`
}

export { escapeInvisible } from '../../shared/invisible'

/**
 * `stem + tail`, the stem cut by `cutText` until the whole fits in `maxBytes` of UTF-8: a name
 * made longer (`notes (not in history).md`) must still be a name the file system takes, 255
 * bytes on most, however many bytes each character of the stem needs.
 */
export function fitName(stem: string, tail: string, maxBytes = 255): string {
  let cut = stem
  while (cut.length > 0 && Buffer.byteLength(cut + tail) > maxBytes) {
    cut = cutText(cut, cut.length - 1)
  }
  return cut + tail
}

/**
 * A name or path as a case-blind file system sees it (macOS and Windows by default): case and
 * Unicode form ignored, so `Notes.md` and `notes.md`, or `café` composed and decomposed, fold
 * alike and would name one file there. Sync's collision check and a restore's keep-aside
 * choice fold with this, so both agree on what one file is.
 */
export function foldedName(name: string): string {
  return name.normalize('NFC').toLowerCase()
}
