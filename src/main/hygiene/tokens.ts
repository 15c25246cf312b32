/**
 * Estimates of what Claude reads, in tokens. Claude's tokenizer is not public; these follow
 * Anthropic's rules of thumb: about four characters of English (ASCII) text per token, about
 * one token per character of other scripts, and an image costs (width × height) / 750 tokens,
 * at most about 1,600 (larger images are scaled down first). Pure.
 */

/** Most tokens one image costs once the API has scaled it down. */
export const MAX_IMAGE_TOKENS = 1_600

/** Tokens of `text` (an estimate). */
export function estimateTokens(text: string): number {
  let ascii = 0
  let other = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) ascii++
    // The low half of a surrogate pair belongs to the character already counted.
    else if (code < 0xdc00 || code > 0xdfff) other++
  }
  return Math.ceil(ascii / 4) + other
}

/** Tokens of a PNG or JPEG image from its first bytes; the maximum when its size is unknown. */
export function imageTokens(head: Uint8Array): number {
  const size = pngSize(head) ?? jpegSize(head)
  if (!size) return MAX_IMAGE_TOKENS
  return Math.min(MAX_IMAGE_TOKENS, Math.max(1, Math.ceil((size.width * size.height) / 750)))
}

interface Size {
  readonly width: number
  readonly height: number
}

// PNG: 8-byte signature, then the IHDR chunk: length, "IHDR", width (u32 BE), height (u32 BE).
function pngSize(bytes: Uint8Array): Size | null {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  if (bytes.length < 24 || !signature.every((b, i) => bytes[i] === b)) return null
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  return { width: view.getUint32(16), height: view.getUint32(20) }
}

// JPEG: segments after FF D8; a start-of-frame marker (C0–CF but C4, C8, CC) holds the size.
function jpegSize(bytes: Uint8Array): Size | null {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return null
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let at = 2
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return null
    const marker = bytes[at + 1]!
    const length = view.getUint16(at + 2)
    const frame = marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)
    if (frame) return { height: view.getUint16(at + 5), width: view.getUint16(at + 7) }
    at += 2 + length
  }
  return null
}
