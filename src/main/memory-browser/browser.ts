import { constants } from 'node:fs'
import { lstat, readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import type { MemoryEntry, MemoryFile, MemorySearchHit } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { IMAGE_TYPES } from '../memory'
import { segmentsOf, toRelative, toVirtual, type VersionedMemory } from '../history'
import { lstatInside } from '../lib/lstat-inside'
import { decodeUtf8 } from '../lib/text'

/** Hidden entries (which include temp files) and node_modules never show in the browser. */
function isListed(name: string): boolean {
  return !name.startsWith('.') && name !== 'node_modules'
}

/** Every file and folder of the memory folder, sorted by path; folders carry their total size. */
export async function listTree(workRoot: string): Promise<ReadonlyArray<MemoryEntry>> {
  const entries: MemoryEntry[] = []
  await walk(workRoot, '', entries)
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

async function walk(abs: string, relative: string, into: MemoryEntry[]): Promise<number> {
  let total = 0
  for (const dirent of await readdir(abs, { withFileTypes: true })) {
    if (!isListed(dirent.name)) continue
    const child = path.join(abs, dirent.name)
    const childRelative = relative ? `${relative}/${dirent.name}` : dirent.name
    const stats = await lstat(child)
    if (stats.isFile()) {
      into.push({
        path: toVirtual(childRelative),
        kind: 'file',
        size: stats.size,
        modifiedAt: stats.mtimeMs,
      })
      total += stats.size
    } else if (stats.isDirectory()) {
      const index = into.length
      into.push({ path: toVirtual(childRelative), kind: 'dir', size: 0, modifiedAt: stats.mtimeMs })
      const size = await walk(child, childRelative, into)
      into[index] = { ...(into[index] as MemoryEntry), size }
      total += size
    }
  }
  return total
}

/** Every file and folder memory held after commit `at` (read-only), as the tree shows them. */
export async function listTreeAt(
  memory: Pick<VersionedMemory, 'listAt'>,
  at: string,
): Promise<ReadonlyArray<MemoryEntry>> {
  return (await memory.listAt(at)).filter((entry) =>
    segmentsOf(toRelative(entry.path)).every(isListed),
  )
}

/** One memory file for the viewer: text, or an image as base64, or "binary". */
export async function readMemoryFile(workRoot: string, virtual: string): Promise<MemoryFile> {
  const relative = toRelative(virtual)
  if (segmentsOf(relative).some((segment) => !isListed(segment))) throw notFound(virtual)
  const abs = path.join(workRoot, relative)
  const stats = await lstatInside(workRoot, relative)
  if (!stats?.isFile()) throw notFound(virtual)
  const bytes = await readFile(abs, { flag: constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) })
  return memoryFile(virtual, bytes)
}

/** One memory file as it was after commit `at`. */
export async function readMemoryFileAt(
  memory: Pick<VersionedMemory, 'readBytesAt'>,
  virtual: string,
  at: string,
): Promise<MemoryFile> {
  const relative = toRelative(virtual)
  if (relative === '' || segmentsOf(relative).some((segment) => !isListed(segment))) {
    throw notFound(virtual)
  }
  const bytes = await memory.readBytesAt(virtual, at)
  if (!bytes) throw new CairnError('not-found', `${virtual} was not a file in that version.`)
  return memoryFile(virtual, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
}

function memoryFile(virtual: string, bytes: Buffer): MemoryFile {
  const relative = toRelative(virtual)
  const mediaType = IMAGE_TYPES[path.extname(relative).toLowerCase()]
  if (mediaType) {
    return {
      path: virtual,
      size: bytes.byteLength,
      kind: 'image',
      text: null,
      mediaType,
      data: bytes.toString('base64'),
    }
  }
  const text = decodeUtf8(bytes)
  return {
    path: virtual,
    size: bytes.byteLength,
    kind: text === null ? 'binary' : 'text',
    text,
    mediaType: text === null ? null : 'text/plain',
    data: null,
  }
}

const MAX_HITS = 200
const MAX_LINE = 300

/** Case-insensitive search over the text files, one hit per matching line, capped. */
export async function searchMemories(
  workRoot: string,
  query: string,
): Promise<ReadonlyArray<MemorySearchHit>> {
  const needle = query.toLowerCase()
  if (!needle) return []
  const hits: MemorySearchHit[] = []
  for (const entry of await listTree(workRoot)) {
    if (entry.kind !== 'file' || IMAGE_TYPES[path.extname(entry.path).toLowerCase()]) continue
    const text = decodeUtf8(await readFile(path.join(workRoot, toRelative(entry.path))))
    if (text === null || !text.toLowerCase().includes(needle)) continue
    const lines = text.split('\n')
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string
      if (!line.toLowerCase().includes(needle)) continue
      hits.push({ path: entry.path, line: i + 1, text: line.slice(0, MAX_LINE) })
      if (hits.length >= MAX_HITS) return hits
    }
  }
  return hits
}

function notFound(virtual: string): CairnError {
  return new CairnError('not-found', `${virtual} does not exist.`)
}
