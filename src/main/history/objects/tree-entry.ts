/**
 * What a tree entry may hold, for both readers of trees: `parseTree` (object-store.ts), which
 * makes entry objects of them, and the pack walk's reader in place (tree-bytes.ts), which
 * must take exactly the trees `parseTree` takes or the pack it writes would change. One table
 * of modes and one name check serve both, so they cannot come to differ.
 *
 *   entry = <octal mode> SP <name> NUL <20-byte id>
 *
 * Sample: `100644 notes.md\0<20 bytes>`, `40000 projects\0<20 bytes>`.
 */

/** A mode a tree entry may have. */
export interface TreeMode {
  /** Its bytes in the tree. */
  readonly text: string
  /** The mode its entry is read with (a folder's `040000`, with git's old leading zero, as `40000`). */
  readonly mode: string
  readonly folder: boolean
  /** A link (`120000`) or a submodule (`160000`): taken only from a tree made elsewhere. */
  readonly foreignOnly: boolean
  /**
   * Written as Cairn writes it: `EncodedTree.idAt` says where ids are only for a tree all of
   * whose modes are (a link's too, for a foreign tree's reader).
   */
  readonly canonical: boolean
}

/**
 * Every mode a tree entry may have, the most common first (`treeModeAt` tries them in this
 * order: nearly every entry is `100644` or `40000`). Any other mode is damage.
 */
export const TREE_MODES: ReadonlyArray<TreeMode> = [
  { text: '100644', mode: '100644', folder: false, foreignOnly: false, canonical: true },
  { text: '40000', mode: '40000', folder: true, foreignOnly: false, canonical: true },
  { text: '100755', mode: '100755', folder: false, foreignOnly: false, canonical: true },
  { text: '040000', mode: '40000', folder: true, foreignOnly: false, canonical: false },
  { text: '120000', mode: '120000', folder: false, foreignOnly: true, canonical: true },
  { text: '160000', mode: '160000', folder: false, foreignOnly: true, canonical: false },
]

/**
 * The mode whose bytes are `bytes[start, end)` (an entry's, up to its space), or null when it
 * is none of `TREE_MODES`. Compares bytes: no string is made for it.
 */
export function treeModeAt(bytes: Uint8Array, start: number, end: number): TreeMode | null {
  const length = end - start
  for (let m = 0; m < TREE_MODES.length; m++) {
    const mode = TREE_MODES[m] as TreeMode
    const text = mode.text
    if (text.length !== length) continue
    let k = 0
    while (k < length && bytes[start + k] === text.charCodeAt(k)) k++
    if (k === length) return mode
  }
  return null
}

// `ignoreBOM`: a name may begin with U+FEFF (a file the person made), and the decoder would
// otherwise drop it, reading `\uFEFFnotes.md` back as `notes.md`.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * The name at `bytes[start, end)`, or null when it is not UTF-8: ASCII read as it is (most
 * names: no view of the bytes and no decoder call for each), anything else as strict UTF-8.
 */
export function entryNameAt(bytes: Buffer, start: number, end: number): string | null {
  for (let i = start; i < end; i++) {
    if ((bytes[i] as number) >= 0x80) {
      try {
        return utf8.decode(bytes.subarray(start, end))
      } catch {
        return null
      }
    }
  }
  return bytes.toString('latin1', start, end)
}

/** True when `entryNameAt` reads a name there: without making a string of an ASCII one. */
export function isEntryName(bytes: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    if ((bytes[i] as number) >= 0x80) return entryNameAt(bytes, start, end) !== null
  }
  return true
}
