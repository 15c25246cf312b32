/**
 * The pure pieces: the ZIP reader and writer, bundle headers, names a case-blind file system
 * cannot tell apart, and which side "ours" is when the merge was made on the other machine.
 */
import { deflateRawSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { BundleError, bundleTip, parseBundle } from './bundle'
import { resolvedText } from './conflicts'
import { foldedCollisions, unsafeEntry } from './file-map'
import { parseMemoryPath } from '../memory'
import { readZip, writeZip, ZipError } from './zip'

const limits = { maxEntries: 100, maxEntryBytes: 1 << 20, maxTotalBytes: 1 << 22 }
const time = new Date(2026, 0, 15, 10, 30, 20).getTime()

describe('ZIP archives', () => {
  it('reads back what it writes: names, bytes and times, stored or deflated', () => {
    const entries = [
      { name: 'notes.md', data: Buffer.from('# Notes\n'.repeat(200)), time },
      { name: 'projects/été.md', data: Buffer.from('é'), time },
      { name: 'empty.md', data: Buffer.alloc(0), time },
    ]
    const read = readZip(writeZip(entries), limits)
    expect(read.map((e) => [e.name, Buffer.from(e.data ?? []).toString(), e.time])).toEqual(
      entries.map((e) => [e.name, e.data.toString(), time]),
    )
  })

  it('writes any time a commit may carry, out of the DOS range as its nearest end', () => {
    const cases = [
      [0, new Date(1980, 0, 1).getTime()],
      [Number.NaN, new Date(1980, 0, 1).getTime()],
      // The year 2191 and the largest time a JavaScript date holds (year 275760).
      [7e12, new Date(2107, 11, 31, 23, 59, 58).getTime()],
      [8.64e15, new Date(2107, 11, 31, 23, 59, 58).getTime()],
      [time, time],
    ]
    for (const [written, read] of cases) {
      const zip = writeZip([{ name: 'a.md', data: Buffer.from('a'), time: written! }])
      expect(readZip(zip, limits)[0]?.time, String(written)).toBe(read)
    }
  })

  it('refuses what is not a sound archive', () => {
    const zip = writeZip([{ name: 'a.md', data: Buffer.from('hello hello hello hello'), time }])
    expect(() => readZip(Buffer.from('not a zip at all'), limits)).toThrow(ZipError)
    const damaged = Buffer.from(zip)
    damaged[40] = damaged[40]! ^ 0xff
    expect(() => readZip(damaged, limits)).toThrow(ZipError)
    expect(() => readZip(zip.subarray(0, zip.length - 30), limits)).toThrow(ZipError)
  })

  it('does not unpack more than memory may hold, and leaves out files too large to read', () => {
    const big = { name: 'big.md', data: Buffer.alloc(2000, 0x61), time }
    expect(readZip(writeZip([big]), { ...limits, maxEntryBytes: 1000 })).toEqual([
      { name: 'big.md', data: null, time },
    ])
    const many = Array.from({ length: 5 }, (_, i) => ({ ...big, name: `f${i}.md` }))
    expect(() => readZip(writeZip(many), { ...limits, maxTotalBytes: 5000 })).toThrow(/more than/)
    expect(() => readZip(writeZip(many), { ...limits, maxEntries: 4 })).toThrow(/more than 4/)
  })

  it('refuses an entry that inflates past its declared size (a zip bomb)', () => {
    const zip = Buffer.from(writeZip([{ name: 'a.md', data: Buffer.alloc(100_000, 0x61), time }]))
    // Declare 10 bytes where the deflated stream holds 100,000 (local and central headers).
    zip.writeUInt32LE(10, 22)
    zip.writeUInt32LE(10, zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])) + 24)
    expect(() => readZip(zip, limits)).toThrow(ZipError)
    expect(deflateRawSync(Buffer.alloc(100_000, 0x61)).length).toBeLessThan(1000)
  })
})

describe('bundle headers', () => {
  const oid = 'a'.repeat(40)
  it('reads the refs and finds the tip', () => {
    const bundle = parseBundle(Buffer.from(`# v2 git bundle\n${oid} refs/heads/main\n\nPACK....`))
    expect(bundle.refs).toEqual([{ oid, name: 'refs/heads/main' }])
    expect(bundleTip(bundle)).toBe(oid)
  })

  it('refuses what is not a bundle, and notes what a partial one lacks', () => {
    expect(() => parseBundle(Buffer.from('hello'))).toThrow(BundleError)
    expect(() => parseBundle(Buffer.from(`# v2 git bundle\n${oid} main\n\nJUNK`))).toThrow(
      /no pack/,
    )
    expect(() =>
      parseBundle(Buffer.from(`# v3 git bundle\n@object-format=sha256\n${oid} HEAD\n\nPACK`)),
    ).toThrow(/object format/)
    const partial = parseBundle(Buffer.from(`# v2 git bundle\n-${oid} base\n${oid} HEAD\n\nPACK`))
    expect(partial.prerequisites).toEqual([oid])
  })
})

describe('names from another repository', () => {
  it('refuses what could leave the folder, reach git, or is not a plain file', () => {
    expect(unsafeEntry('notes.md', '100644')).toBeNull()
    expect(unsafeEntry('bin/run', '100755')).toBeNull()
    expect(unsafeEntry('../x.md', '100644')).toBe('not a valid file name')
    expect(unsafeEntry('a/.GIT/config', '100644')).toBe('a git folder')
    expect(unsafeEntry('link.md', '120000')).toBe('a symbolic link')
    expect(unsafeEntry('sub', '160000')).toBe('a special file')
  })

  it('refuses a name that may display as another; every such character Claude’s paths refuse too', () => {
    // Every code point of the Basic Multilingual Plane and the tag characters, in the middle
    // of a name: what sync refuses as invisible, the Memory tool refuses as well.
    const invisibleReasons = [
      'not a valid file name',
      'a name holding an invisible formatting character',
    ]
    const refusedBySync: string[] = []
    const codes = [...Array.from({ length: 0x10000 }, (_, i) => i), 0xe0001, 0xe0041, 0xe007f]
    for (const code of codes) {
      const char = String.fromCodePoint(code)
      if (char === '/' || char === '\\') continue
      const name = `a${char}b.md`
      const bySync = invisibleReasons.includes(unsafeEntry(name, '100644') ?? '')
      if (!bySync) continue
      refusedBySync.push(char)
      const memory = parseMemoryPath(`/memories/${name}`)
      const byTool = !memory.ok && /control or invisible formatting character/.test(memory.message)
      expect(byTool, `U+${code.toString(16).toUpperCase()}`).toBe(true)
    }
    // Overrides, embeddings and isolates; characters that show nothing; line breaks.
    for (const char of [
      '\u202a',
      '\u202e',
      '\u2066',
      '\u2069',
      '\u200b',
      '\u2060',
      '\ufeff',
      '\u00ad',
      '\u2028',
      '\n',
      '\0',
    ]) {
      expect(refusedBySync, JSON.stringify(char)).toContain(char)
    }
    // Joiners of emoji sequences, the bidi marks of Hebrew and Arabic names, tag characters.
    for (const char of ['\u200c', '\u200d', '\u200e', '\u200f', '\u061c', '\u{e0041}']) {
      expect(refusedBySync, JSON.stringify(char)).not.toContain(char)
    }
    expect(unsafeEntry('evil\u202egpj.md', '100644')).toBe(
      'a name holding an invisible formatting character',
    )
    expect(unsafeEntry('dir\u200b/notes.md', '100644')).toBe(
      'a name holding an invisible formatting character',
    )
    expect(unsafeEntry('family \u{1F468}\u200D\u{1F469}\u200D\u{1F467}.md', '100644')).toBeNull()
  })

  it('finds names a case-blind file system cannot tell apart', () => {
    expect(foldedCollisions(['Notes.md', 'notes.md', 'other.md'])).toEqual([
      ['Notes.md', 'notes.md'],
    ])
    expect(foldedCollisions(['caf\u00e9.md', 'cafe\u0301.md'])).toEqual([
      ['caf\u00e9.md', 'cafe\u0301.md'],
    ])
    expect(foldedCollisions(['a.md', 'b.md'])).toEqual([])
  })
})

describe('settling a conflict', () => {
  const merged =
    'top\n<<<<<<< laptop\nZed\n=======\nVim\n>>>>>>> desktop\nmid\n<<<<<<< laptop\nA\n=======\nB\n>>>>>>> desktop\n'

  it('takes this machine’s side as “ours” on the machine that merged', () => {
    expect(resolvedText(merged, 'laptop', 'ours')).toBe('top\nZed\nmid\nA\n')
    expect(resolvedText(merged, 'laptop', 'theirs')).toBe('top\nVim\nmid\nB\n')
    expect(resolvedText(merged, 'laptop', 'both')).toBe('top\nZed\nVim\nmid\nA\nB\n')
  })

  it('takes this machine’s side as “ours” on the other machine too', () => {
    expect(resolvedText(merged, 'desktop', 'ours')).toBe('top\nVim\nmid\nB\n')
    expect(resolvedText(merged, 'desktop', 'both')).toBe('top\nVim\nZed\nmid\nB\nA\n')
    expect(resolvedText(merged, 'desktop', 'edit', 'mine\n')).toBe('mine\n')
  })
})
