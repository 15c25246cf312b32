/**
 * Finds pack indexes whose header is sound but whose body is not: a flipped byte in the fan-out
 * past what the header check reads, in the names, the CRC-32s or the offsets. Opening such an
 * index succeeds (`PackIndex.open` checks the header, the fan-out's order and the size), and
 * its damage showed only as objects reading as missing or damaged, one lookup at a time.
 *
 * A version 2 index ends with the SHA-1 of everything before it (git writes it; `git
 * verify-pack` checks it): an index whose bytes do not hash to it is damaged. The check reads
 * the index once; an index found sound is remembered by its size, mtime and ctime in
 * `<gitdir>/cairn-idx-checked` (one line a pack: `pack-<checksum> <size> <mtimeMs>
 * <ctimeMs>`), so each pack's index is hashed once, not at every open. A damaged or missing
 * record file only costs the hashing again.
 */
import { createHash } from 'node:crypto'
import path from 'node:path'
import { closeQuietly, disk, OPEN, readPlainFileOrNull, writeOwnFile } from '../../lib/disk'
import { OWN_FILE_CAP } from '../../lib/own-file-caps'

/** Where the stamps of the indexes found sound are kept. */
export function checkedIndexesOf(gitdir: string): string {
  return path.join(gitdir, 'cairn-idx-checked')
}

const LINE = /^(pack-[0-9a-f]{40,64}) (\d+) (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$/
const READ_BYTES = 1024 * 1024

/**
 * The names (`pack-<checksum>`) among `names` whose `.idx` in `gitdir/objects/pack` does not
 * hash to its own trailer. Indexes remembered as sound with the same size, mtime and ctime are
 * not read; the record is written again when it changed (a failure to write it is no harm: the
 * indexes are hashed again next time). An index the disk fails to read (EIO, say) is neither
 * damaged nor remembered: it is read again at the next open, and open goes on as before.
 */
export function damagedIndexes(gitdir: string, names: ReadonlyArray<string>): string[] {
  const record = checkedIndexesOf(gitdir)
  const known = readChecked(record)
  const next = new Map<string, string>()
  const damaged: string[] = []
  for (const name of names) {
    const file = path.join(gitdir, 'objects', 'pack', `${name}.idx`)
    let stamp: string
    try {
      const stats = disk.statSync(file)
      stamp = `${stats.size} ${stats.mtimeMs} ${stats.ctimeMs}`
    } catch {
      // Gone meanwhile, or a disk that cannot say: nothing to check now.
      continue
    }
    if (known.get(name) === stamp) {
      next.set(name, stamp)
      continue
    }
    let sound: boolean
    try {
      sound = hashesToTrailer(file)
    } catch {
      // A disk that fails to give the bytes says nothing of them: checked again next time.
      continue
    }
    if (sound) next.set(name, stamp)
    else damaged.push(name)
  }
  const text = [...next].map(([name, stamp]) => `${name} ${stamp}\n`).join('')
  const before = [...known].map(([name, stamp]) => `${name} ${stamp}\n`).join('')
  if (text !== before) {
    try {
      writeOwnFile(record, text)
    } catch {
      // Only a saving: every index is hashed again at the next open.
    }
  }
  return damaged
}

function readChecked(file: string): Map<string, string> {
  const known = new Map<string, string>()
  let bytes: Buffer | null
  try {
    bytes = readPlainFileOrNull(file, OWN_FILE_CAP.SMALL)
  } catch {
    return known
  }
  for (const line of bytes?.toString('utf8').split('\n') ?? []) {
    const match = LINE.exec(line)
    // A garbled line is no record: that index is hashed again.
    if (match) known.set(match[1]!, `${match[2]} ${match[3]} ${match[4]}`)
  }
  return known
}

// True when the file's bytes before its last 20 hash (SHA-1) to those 20 bytes.
function hashesToTrailer(file: string): boolean {
  const fd = disk.openSync(file, OPEN.READ)
  try {
    const size = disk.fstatSync(fd).size
    if (size < 20) return false
    const hash = createHash('sha1')
    const chunk = Buffer.allocUnsafe(Math.min(READ_BYTES, size))
    for (let at = 0; at < size - 20;) {
      const got = disk.readSync(fd, chunk, 0, Math.min(chunk.length, size - 20 - at), at)
      if (got <= 0) return false
      hash.update(chunk.subarray(0, got))
      at += got
    }
    const trailer = Buffer.alloc(20)
    if (disk.readSync(fd, trailer, 0, 20, size - 20) !== 20) return false
    return hash.digest().equals(trailer)
  } finally {
    closeQuietly(fd)
  }
}
