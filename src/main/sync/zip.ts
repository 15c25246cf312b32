/**
 * A small ZIP writer and reader (PKWARE APPNOTE: local headers, central directory, end
 * record), stored or deflated with node's zlib. Enough for memory exports and imports: no
 * ZIP64, no encryption, UTF-8 names. The reader trusts nothing: sizes are bounded, checksums
 * checked, and names returned as written for the caller to check.
 *
 * Layout written: [local header + name + data]* [central header + name]* end-of-directory.
 */
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib'

export interface ZipEntry {
  /** Forward-slash path inside the archive. */
  readonly name: string
  readonly data: Uint8Array
  /** Modification time (ms). */
  readonly time: number
}

const LOCAL = 0x04034b50
const CENTRAL = 0x02014b50
const END = 0x06054b50
const UTF8_NAMES = 0x0800
const MAX_ENTRIES = 0xffff
const MAX_SIZE = 0xffffffff

/** Builds a ZIP archive of `entries` (deflated when that is smaller). */
export function writeZip(entries: ReadonlyArray<ZipEntry>): Buffer {
  if (entries.length > MAX_ENTRIES) throw new Error('too many files for a ZIP archive')
  const locals: Buffer[] = []
  const centrals: Buffer[] = []
  let offset = 0
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8')
    const data = Buffer.from(entry.data.buffer, entry.data.byteOffset, entry.data.byteLength)
    if (data.length > MAX_SIZE) throw new Error('a file is too large for a ZIP archive')
    const deflated = deflateRawSync(data)
    const stored = deflated.length >= data.length
    const body = stored ? data : deflated
    const crc = crc32(data)
    const { time, date } = dosTime(entry.time)
    const fields = { stored, time, date, crc, compressed: body.length, size: data.length, name }
    const local = Buffer.alloc(30) // extra field length (28): 0
    local.writeUInt32LE(LOCAL, 0)
    writeSharedFields(local, 4, fields)
    locals.push(local, name, body)

    const central = Buffer.alloc(46)
    central.writeUInt32LE(CENTRAL, 0)
    central.writeUInt16LE(0x031e, 4) // made by: Unix, spec 3.0
    writeSharedFields(central, 6, fields)
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38) // external attributes: a regular file
    central.writeUInt32LE(offset, 42)
    centrals.push(central, name)
    offset += local.length + name.length + body.length
    if (offset > MAX_SIZE) throw new Error('the archive is too large for a ZIP file')
  }
  const directory = Buffer.concat(centrals)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(END, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...locals, directory, end])
}

/** What an entry's local header and its central directory header both say. */
interface SharedFields {
  readonly stored: boolean
  readonly time: number
  readonly date: number
  readonly crc: number
  readonly compressed: number
  readonly size: number
  readonly name: Buffer
}

/**
 * Writes, from `at`, the run of fields a local header (at 4) and a central header (at 6)
 * share in the same order: version needed, flags, method, DOS time and date, CRC-32,
 * compressed and uncompressed sizes, name length.
 */
function writeSharedFields(header: Buffer, at: number, fields: SharedFields): void {
  header.writeUInt16LE(20, at) // version needed: 2.0 (deflate)
  header.writeUInt16LE(UTF8_NAMES, at + 2)
  header.writeUInt16LE(fields.stored ? 0 : 8, at + 4)
  header.writeUInt16LE(fields.time, at + 6)
  header.writeUInt16LE(fields.date, at + 8)
  header.writeUInt32LE(fields.crc, at + 10)
  header.writeUInt32LE(fields.compressed, at + 14)
  header.writeUInt32LE(fields.size, at + 18)
  header.writeUInt16LE(fields.name.length, at + 22)
}

/** Limits on what an archive may unpack to (a small archive must not expand to gigabytes). */
export interface ZipLimits {
  readonly maxEntries: number
  readonly maxEntryBytes: number
  readonly maxTotalBytes: number
}

/** A file read from an archive: `data` is null when it is over `maxEntryBytes` (not read). */
export interface ZipFile {
  readonly name: string
  readonly data: Uint8Array | null
  readonly time: number
}

/** Why an archive could not be read. */
export class ZipError extends Error {}

/**
 * Reads every file of a ZIP archive (folders are skipped). Throws `ZipError` for anything
 * that is not a sound archive within `limits`.
 */
export function readZip(archive: Uint8Array, limits: ZipLimits): ZipFile[] {
  const buf = Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength)
  const endAt = findEnd(buf)
  const count = buf.readUInt16LE(endAt + 10)
  const dirSize = buf.readUInt32LE(endAt + 12)
  const dirOffset = buf.readUInt32LE(endAt + 16)
  if (dirOffset + dirSize > endAt) throw new ZipError('the archive’s directory is damaged')
  if (count > limits.maxEntries)
    throw new ZipError(`the archive holds more than ${limits.maxEntries} files`)
  const entries: ZipFile[] = []
  let total = 0
  let at = dirOffset
  for (let i = 0; i < count; i++) {
    if (at + 46 > buf.length || buf.readUInt32LE(at) !== CENTRAL) {
      throw new ZipError('the archive’s directory is damaged')
    }
    const flags = buf.readUInt16LE(at + 8)
    const method = buf.readUInt16LE(at + 10)
    const time = buf.readUInt16LE(at + 12)
    const date = buf.readUInt16LE(at + 14)
    const crc = buf.readUInt32LE(at + 16)
    const compressed = buf.readUInt32LE(at + 20)
    const size = buf.readUInt32LE(at + 24)
    const nameLength = buf.readUInt16LE(at + 28)
    const extraLength = buf.readUInt16LE(at + 30)
    const commentLength = buf.readUInt16LE(at + 32)
    const localAt = buf.readUInt32LE(at + 42)
    const nameBytes = buf.subarray(at + 46, at + 46 + nameLength)
    const name = flags & UTF8_NAMES ? nameBytes.toString('utf8') : nameBytes.toString('latin1')
    at += 46 + nameLength + extraLength + commentLength
    if (name.endsWith('/')) continue
    if (flags & 1) throw new ZipError('the archive is encrypted')
    if (method !== 0 && method !== 8)
      throw new ZipError('the archive uses a compression Cairn cannot read')
    if (size > limits.maxEntryBytes) {
      entries.push({ name, data: null, time: fromDosTime(time, date) })
      continue
    }
    total += size
    if (total > limits.maxTotalBytes)
      throw new ZipError('the archive unpacks to more than memory may hold')
    if (localAt + 30 > buf.length || buf.readUInt32LE(localAt) !== LOCAL) {
      throw new ZipError('the archive is damaged')
    }
    const dataAt = localAt + 30 + buf.readUInt16LE(localAt + 26) + buf.readUInt16LE(localAt + 28)
    if (dataAt + compressed > buf.length) throw new ZipError('the archive is cut short')
    const raw = buf.subarray(dataAt, dataAt + compressed)
    let data: Buffer
    try {
      data =
        method === 0
          ? Buffer.from(raw)
          : inflateRawSync(raw, { maxOutputLength: Math.max(1, size) })
    } catch {
      throw new ZipError('the archive is damaged')
    }
    if (data.length !== size || crc32(data) !== crc) throw new ZipError('the archive is damaged')
    entries.push({ name, data, time: fromDosTime(time, date) })
  }
  return entries
}

function findEnd(buf: Buffer): number {
  const earliest = Math.max(0, buf.length - 22 - 0xffff)
  for (let at = buf.length - 22; at >= earliest; at--) {
    if (buf.readUInt32LE(at) === END) return at
  }
  throw new ZipError('the file is not a ZIP archive')
}

/**
 * A DOS date holds 1980 to 2107 (local time): a commit time outside that (a clock set wrong,
 * a crafted or synced commit) is written as the nearest end, an unknown one as the first.
 */
function dosTime(ms: number): { time: number; date: number } {
  const first = new Date(1980, 0, 1).getTime()
  const last = new Date(2107, 11, 31, 23, 59, 58).getTime()
  const d = new Date(Number.isFinite(ms) ? Math.min(Math.max(ms, first), last) : first)
  const year = d.getFullYear()
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | Math.floor(d.getSeconds() / 2),
    date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  }
}

function fromDosTime(time: number, date: number): number {
  return new Date(
    (date >> 9) + 1980,
    ((date >> 5) & 0xf) - 1,
    date & 0x1f,
    time >> 11,
    (time >> 5) & 0x3f,
    (time & 0x1f) * 2,
  ).getTime()
}
