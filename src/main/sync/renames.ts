/**
 * Which files one side of a merge renamed since the merge base: exact moves first (same
 * content), then moves with edits (at least half of the lines shared, as git counts), then
 * whole folders moved. Pure apart from reading blobs through the injected reader.
 */
import { decodeUtf8 } from '../lib/text'
import type { FileMap } from './file-map'
import { splitLines } from './merge-text'

/** Renames worth comparing pairwise at most (deleted x added files); beyond, only exact ones. */
const MAX_PAIRS = 10_000
/** The share of lines a file must keep to count as renamed rather than deleted and added. */
const SIMILARITY = 0.5

/** What one side did with the base's files: `from` (base path) -> `to` (the side's path). */
export interface Renames {
  readonly files: ReadonlyMap<string, string>
  /** Folders moved whole: `from/` -> `to/`, so files the other side adds there follow. */
  readonly folders: ReadonlyMap<string, string>
}

export async function detectRenames(
  base: FileMap,
  side: FileMap,
  read: (oid: string) => Promise<Uint8Array>,
): Promise<Renames> {
  const deleted = [...base.keys()].filter((path) => !side.has(path))
  const added = [...side.keys()].filter((path) => !base.has(path))
  const files = new Map<string, string>()
  if (deleted.length === 0 || added.length === 0) return { files, folders: new Map() }

  const addedByOid = new Map<string, string[]>()
  for (const path of added) {
    const oid = side.get(path)?.oid as string
    addedByOid.set(oid, [...(addedByOid.get(oid) ?? []), path])
  }
  const taken = new Set<string>()
  for (const path of deleted) {
    const candidates = addedByOid.get(base.get(path)?.oid as string) ?? []
    const target = pickClosest(
      path,
      candidates.filter((c) => !taken.has(c)),
    )
    if (target) {
      files.set(path, target)
      taken.add(target)
    }
  }

  const restDeleted = deleted.filter((path) => !files.has(path))
  const restAdded = added.filter((path) => !taken.has(path))
  if (restDeleted.length > 0 && restAdded.length * restDeleted.length <= MAX_PAIRS) {
    const lines = new Map<string, Map<string, number> | null>()
    const linesOf = async (oid: string): Promise<Map<string, number> | null> => {
      if (!lines.has(oid)) lines.set(oid, lineCounts(await read(oid)))
      return lines.get(oid) ?? null
    }
    const scored: Array<{ from: string; to: string; score: number }> = []
    for (const from of restDeleted) {
      const a = await linesOf(base.get(from)?.oid as string)
      if (!a) continue
      for (const to of restAdded) {
        const b = await linesOf(side.get(to)?.oid as string)
        if (!b) continue
        const score = similarity(a, b)
        if (score >= SIMILARITY) scored.push({ from, to, score })
      }
    }
    scored.sort((x, y) => y.score - x.score || x.from.localeCompare(y.from))
    for (const { from, to } of scored) {
      if (files.has(from) || taken.has(to)) continue
      files.set(from, to)
      taken.add(to)
    }
  }
  return { files, folders: folderRenames(base, side, files) }
}

/** Where a path the other side added lands after this side's folder renames. */
export function followFolders(path: string, folders: ReadonlyMap<string, string>): string {
  let best: string | null = null
  for (const from of folders.keys()) {
    if (path.startsWith(`${from}/`) && (!best || from.length > best.length)) best = from
  }
  return best ? `${folders.get(best)}${path.slice(best.length)}` : path
}

// A folder counts as moved when every file the base had in it is now under one other folder
// (with the same name below it) and nothing is left where it was.
function folderRenames(
  base: FileMap,
  side: FileMap,
  files: ReadonlyMap<string, string>,
): Map<string, string> {
  const candidates = new Map<string, string | null>()
  for (const [from, to] of files) {
    const fromParts = from.split('/')
    const toParts = to.split('/')
    // The longest common tail names the same file inside both folders.
    let tail = 0
    while (
      tail < fromParts.length - 1 &&
      tail < toParts.length - 1 &&
      fromParts[fromParts.length - 1 - tail] === toParts[toParts.length - 1 - tail]
    ) {
      tail++
    }
    if (tail === 0) continue
    const fromDir = fromParts.slice(0, fromParts.length - tail).join('/')
    const toDir = toParts.slice(0, toParts.length - tail).join('/')
    if (!fromDir || fromDir === toDir) continue
    const known = candidates.get(fromDir)
    candidates.set(fromDir, known === undefined || known === toDir ? toDir : null)
  }
  const folders = new Map<string, string>()
  for (const [fromDir, toDir] of candidates) {
    if (!toDir) continue
    const prefix = `${fromDir}/`
    const stayed = [...side.keys()].some((path) => path.startsWith(prefix))
    const allMoved = [...base.keys()]
      .filter((path) => path.startsWith(prefix))
      .every((path) => files.get(path)?.startsWith(`${toDir}/`))
    if (!stayed && allMoved) folders.set(fromDir, toDir)
  }
  return folders
}

// Among equal-content candidates, the one with the same file name (then the first).
function pickClosest(path: string, candidates: ReadonlyArray<string>): string | undefined {
  const name = path.slice(path.lastIndexOf('/') + 1)
  return candidates.find((c) => c.slice(c.lastIndexOf('/') + 1) === name) ?? candidates[0]
}

function lineCounts(bytes: Uint8Array): Map<string, number> | null {
  // Not text: only an exact match pairs it.
  const text = decodeUtf8(bytes)
  if (text === null) return null
  const counts = new Map<string, number>()
  for (const line of splitLines(text)) counts.set(line, (counts.get(line) ?? 0) + 1)
  return counts
}

function similarity(a: Map<string, number>, b: Map<string, number>): number {
  let total = 0
  let shared = 0
  for (const count of a.values()) total += count
  for (const [line, count] of b) {
    total += count
    shared += Math.min(count, a.get(line) ?? 0)
  }
  return total === 0 ? 1 : (2 * shared) / total
}
