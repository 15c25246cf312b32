/**
 * Three-way merge of two file maps from their merge base: files changed on one side only are
 * taken as they are; a file changed on both sides is merged line by line; deleted on one side
 * and edited on the other, the edited file is kept; renames (of files and whole folders) are
 * followed. Nothing either side wrote is lost: overlapping edits keep both versions between
 * markers and are reported as conflicts. Pure apart from the injected blob reads and writes.
 */
import { MAX_VERSIONED_BYTES } from '../history'
import { CairnError } from '../lib/errors'
import { cutText, decodeUtf8, fitName } from '../lib/text'
import { MAX_PATH_LENGTH, MAX_SEGMENT_LENGTH, MEMORY_ROOT, parseMemoryPath } from '../memory'
import type { FileEntry, FileMap } from './file-map'
import { mergeText, type MergeLabels } from './merge-text'
import { detectRenames, followFolders, type Renames } from './renames'

/** Reads and writes blobs (the object store, or a map in tests). */
export interface BlobAccess {
  read(oid: string): Promise<Uint8Array>
  write(content: Uint8Array): Promise<string>
}

/** A file the merge could not settle alone. */
export interface MergeConflict {
  /** The merged file (relative path): both versions between markers, or ours when binary. */
  readonly path: string
  readonly kind: 'text' | 'binary'
  /** For a binary file: where the other side's version was kept. */
  readonly otherPath?: string
  /** For text: the length of the merge's markers (`TextMerge.markerSize`). */
  readonly markerSize?: number
}

export interface TreeMerge {
  readonly files: Map<string, FileEntry>
  readonly conflicts: ReadonlyArray<MergeConflict>
  /** What the merge decided that people may want to know, one sentence each. */
  readonly notes: ReadonlyArray<string>
}

interface Placement {
  readonly path: string
  readonly entry: FileEntry
}

/**
 * Merges `ours` and `theirs` from `base` (an empty map when the histories share nothing: then
 * every file both sides hold under one path is merged as if added on both).
 */
export async function mergeTrees(input: {
  readonly base: FileMap
  readonly ours: FileMap
  readonly theirs: FileMap
  readonly labels: MergeLabels
  readonly blobs: BlobAccess
}): Promise<TreeMerge> {
  const { base, ours, theirs, labels, blobs } = input
  const conflicts: MergeConflict[] = []
  const notes: string[] = []
  const oursRenames = await detectRenames(base, ours, blobs.read)
  const theirsRenames = await detectRenames(base, theirs, blobs.read)
  const placements: Placement[] = []
  // Every name either side holds, or the merge placed: a side copy takes none of them (a
  // second conflict on one file must not reuse the first one's `photo (desktop).png`).
  const taken = new Map<string, FileEntry>([...ours, ...theirs])
  const place = (path: string, entry: FileEntry) => {
    placements.push({ path, entry })
    taken.set(path, entry)
  }

  for (const [path, before] of base) {
    const o = locate(path, ours, oursRenames)
    const t = locate(path, theirs, theirsRenames)
    if (!o && !t) continue
    if (!o || !t) {
      const kept = (o ?? t) as Placement
      const keptBy = o ? labels.ours : labels.theirs
      const deletedBy = o ? labels.theirs : labels.ours
      // Untouched (or only moved) where the other side deleted it: the deletion stands.
      if (kept.entry.oid === before.oid) continue
      place(kept.path, kept.entry)
      notes.push(
        `${kept.path} was deleted on ${deletedBy} and edited on ${keptBy}; the edited file was kept.`,
      )
      continue
    }
    // A rename on one side carries the other side's edits along.
    const target = o.path === path ? t.path : o.path
    if (o.path !== path && t.path !== path && o.path !== t.path) {
      notes.push(
        `${path} was renamed to ${o.path} on ${labels.ours} and to ${t.path} on ${labels.theirs}; it is kept as ${o.path}.`,
      )
    }
    const merged = await mergeEntries(before, o.entry, t.entry, target, labels, blobs, taken)
    place(target, merged.entry)
    if (merged.conflict) conflicts.push(merged.conflict)
    if (merged.other) place(merged.other.path, merged.other.entry)
  }

  const oursTargets = new Set(oursRenames.files.values())
  const theirsTargets = new Set(theirsRenames.files.values())
  for (const [path, entry] of ours) {
    if (base.has(path) || oursTargets.has(path)) continue
    place(followFolders(path, theirsRenames.folders), entry)
  }
  for (const [path, entry] of theirs) {
    if (base.has(path) || theirsTargets.has(path)) continue
    place(followFolders(path, oursRenames.folders), entry)
  }

  const files = new Map<string, FileEntry>()
  const sources = new Map<string, FileEntry>()
  for (const { path, entry } of placements) {
    const existing = files.get(path)
    if (!existing || existing.oid === entry.oid) {
      files.set(path, entry)
      sources.set(path, entry)
      continue
    }
    // Two different files ended up under one path (added on both sides, or one side's rename
    // onto the other's new file): merged as if both were added.
    const empty = await blobs.write(new Uint8Array())
    const merged = await mergeEntries(
      { oid: empty, mode: existing.mode },
      existing,
      entry,
      path,
      labels,
      blobs,
      files,
    )
    files.set(path, merged.entry)
    if (merged.conflict) {
      const index = conflicts.findIndex((c) => c.path === path)
      if (index >= 0) conflicts.splice(index, 1)
      conflicts.push(merged.conflict)
    }
    if (merged.other) files.set(merged.other.path, merged.other.entry)
  }
  moveFilesOutOfFolders(files, conflicts, notes, labels)
  return { files, conflicts, notes }
}

function locate(path: string, side: FileMap, renames: Renames): Placement | null {
  const moved = renames.files.get(path)
  const at = moved ?? path
  const entry = side.get(at)
  return entry ? { path: at, entry } : null
}

async function mergeEntries(
  base: FileEntry,
  ours: FileEntry,
  theirs: FileEntry,
  path: string,
  labels: MergeLabels,
  blobs: BlobAccess,
  taken: ReadonlyMap<string, FileEntry> = new Map(),
): Promise<{ entry: FileEntry; conflict?: MergeConflict; other?: Placement }> {
  const mode = ours.mode === theirs.mode || ours.mode !== base.mode ? ours.mode : theirs.mode
  if (ours.oid === theirs.oid || theirs.oid === base.oid) return { entry: { oid: ours.oid, mode } }
  if (ours.oid === base.oid) return { entry: { oid: theirs.oid, mode } }
  const [b, o, t] = await Promise.all([
    blobs.read(base.oid).then(decodeUtf8),
    blobs.read(ours.oid).then(decodeUtf8),
    blobs.read(theirs.oid).then(decodeUtf8),
  ])
  if (b !== null && o !== null && t !== null) {
    const merged = mergeText(b, o, t, labels)
    const bytes = new TextEncoder().encode(merged.text)
    // A result larger than history versions (two large files added on both sides, say) would
    // be refused by every other machine's sync: kept side by side instead, like a binary file.
    if (bytes.length <= MAX_VERSIONED_BYTES) {
      const entry = { oid: await blobs.write(bytes), mode }
      return merged.conflicts > 0
        ? { entry, conflict: { path, kind: 'text', markerSize: merged.markerSize } }
        : { entry }
    }
  }
  // Not text (or too large merged): no line to merge, so both files are kept side by side.
  const otherPath = sideName(path, labels.theirs, taken)
  return {
    entry: { oid: ours.oid, mode },
    conflict: { path, kind: 'binary', otherPath },
    other: { path: otherPath, entry: theirs },
  }
}

/**
 * `notes.md` -> `notes (desktop).md`, unused in `taken`: a name the path rules accept, so that
 * Claude can view and delete the copy (a long name is shortened to keep tag and extension).
 */
export function sideName(path: string, label: string, taken: ReadonlyMap<string, unknown>): string {
  const slash = path.lastIndexOf('/')
  const dir = path.slice(0, slash + 1)
  const name = path.slice(slash + 1)
  // The label is the other machine's `Machine:` trailer: any text. A name may hold none of
  // what the path rules refuse (a bidi override would show "desk\u202egnp.exe" reversed, and
  // Claude could neither view nor delete the file), nor a character drawn as nothing.
  // A `%` would make "%41" an escape the path rules refuse; whatever else they refuse takes
  // the plain tag instead.
  const cleaned =
    cutText(
      label.replace(/[\\/:*?"<>|%\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu, '-'),
      40,
    ) || 'other'
  // The path rules' 128 characters a name, and 512 the whole path.
  const room = Math.min(MAX_SEGMENT_LENGTH, MAX_PATH_LENGTH - `${MEMORY_ROOT}/${dir}`.length)
  const dot = name.lastIndexOf('.')
  // An extension too long to keep beside the tag is cut with the stem.
  const split = dot > 0 && name.length - dot + ` (${cleaned} 99)`.length < room
  const stem = split ? name.slice(0, dot) : name
  const ext = split ? name.slice(dot) : ''
  const named = (tag: string, n: number) => {
    const tail = ` (${tag}${n > 1 ? ` ${n}` : ''})${ext}`
    // Cut to the rules' characters, then to the 255 bytes a file system takes.
    return `${dir}${fitName(cutText(stem, Math.max(1, room - tail.length)), tail)}`
  }
  // A deep folder can leave less room than ` (other)` beside one character, and a long
  // multi-byte extension no room for any stem: then shorter names, keeping the extension while
  // one fits (`a-1.png`, `1.png`), and at last the number alone. The first the rules accept.
  const fullDot = name.lastIndexOf('.')
  const fullStem = fullDot > 0 ? name.slice(0, fullDot) : name
  const fullExt = fullDot > 0 ? name.slice(fullDot) : ''
  const short = (stemOf: string, tail: string) =>
    `${dir}${fitName(cutText(stemOf, Math.max(1, room - tail.length)), tail)}`
  const passes = (candidate: string) => parseMemoryPath(`${MEMORY_ROOT}/${candidate}`).ok
  // A folder of that name takes it too (the file would be moved aside once more).
  const folders = new Set<string>()
  for (const key of taken.keys()) {
    if (!key.startsWith(dir)) continue
    for (let at = key.indexOf('/', dir.length); at >= 0; at = key.indexOf('/', at + 1)) {
      folders.add(key.slice(0, at))
    }
  }
  const free = (candidate: string) => !taken.has(candidate) && !folders.has(candidate)
  // Numbered names while the number alone still fits the room: past that none of them can
  // pass the rules, and counting on would never end (hunt13 D2: a room of one character).
  for (let n = 1; n.toString(36).length <= room; n++) {
    const number = n.toString(36)
    const candidate = [
      named(cleaned, n),
      named('other', n),
      short(fullStem, `-${number}${fullExt}`),
      `${dir}${number}${fullExt}`,
      short(name, `-${number}`),
      `${dir}${number}`,
    ].find(passes)
    if (candidate !== undefined && free(candidate)) return candidate
  }
  // Every short number taken: any other name of one or two characters the rules accept
  // (`0`, `_`, `0a`), lowercase only so that no two differ by case alone.
  for (const first of SPARE_CHARACTERS) {
    if (passes(`${dir}${first}`) && free(`${dir}${first}`)) return `${dir}${first}`
  }
  if (room >= 2) {
    for (const first of SPARE_CHARACTERS) {
      for (const second of SPARE_CHARACTERS) {
        const candidate = `${dir}${first}${second}`
        if (passes(candidate) && free(candidate)) return candidate
      }
    }
  }
  throw new CairnError(
    'sync-unsafe-content',
    `${path} was changed on both machines, and its folder has no free name left for the other machine’s copy. Nothing was changed; remove or rename a file in that folder, or move it to a shorter folder, to sync.`,
  )
}

const SPARE_CHARACTERS = [..."0123456789abcdefghijklmnopqrstuvwxyz_-+=@!#$&'(),;[]^{}~"]

// A file and a folder cannot share a name: the file moves beside it, as a conflict to look at.
function moveFilesOutOfFolders(
  files: Map<string, FileEntry>,
  conflicts: MergeConflict[],
  notes: string[],
  labels: MergeLabels,
): void {
  const folders = new Set<string>()
  for (const path of files.keys()) {
    const parts = path.split('/')
    for (let i = 1; i < parts.length; i++) folders.add(parts.slice(0, i).join('/'))
  }
  for (const path of [...files.keys()]) {
    if (!folders.has(path)) continue
    const entry = files.get(path) as FileEntry
    files.delete(path)
    const moved = sideName(path, labels.theirs, files)
    files.set(moved, entry)
    notes.push(
      `${path} is a folder on one side and a file on the other; the file was kept as ${moved}.`,
    )
    for (const conflict of conflicts) {
      if (conflict.path === path)
        conflicts.splice(conflicts.indexOf(conflict), 1, { ...conflict, path: moved })
    }
  }
}
