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
