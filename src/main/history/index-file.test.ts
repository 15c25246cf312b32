import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { IndexDamagedError, IndexFile, writeIndex, type IndexEntry } from './index-file'
import { queryLog } from './queries'

let dir: string
let root: string

beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'cairn-index-'))
  dir = path.join(root, 'cairn-index')
})
afterEach(() => rmSync(root, { recursive: true, force: true, maxRetries: 10 }))

const oid = (i: number) => i.toString(16).padStart(40, 'a')

/** Entries of every shape the index stores specially (usual subject, paths not files, nulls). */
function history(count: number): IndexEntry[] {
  return Array.from({ length: count }, (_, i) => {
    const file = `/memories/n${i % 3}.md`
    const rename = i % 5 === 4
    return {
      oid: oid(i),
      parent: i === 0 ? null : oid(i - 1),
      time: (1_700_000_000 + i) * 1000,
      actor: i % 4 === 0 ? 'user' : 'claude',
      command: rename ? 'rename' : 'str_replace',
      subject: rename ? `rename ${file} -> /memories/ü ${i}.md` : `str_replace ${file}`,
      paths: rename ? [file, `/memories/ü ${i}.md`] : [file],
      conversationId: i % 4 === 0 ? null : `conv-${i % 2}`,
      toolUseId: i % 4 === 0 ? null : `toolu_${i}`,
      overwrite: i % 7 === 0,
      restoredFrom: i % 6 === 5 ? oid(i - 2) : null,
      files: rename ? [file, `/memories/ü ${i}.md`].sort() : [file],
    } satisfies IndexEntry
  })
}

const part = (name: string) => path.join(dir, name)

describe('the side index file', () => {
  it('reads back every entry as written, after reopening', () => {
    const entries = history(40)
    writeIndex(dir, entries)
    const index = IndexFile.open(dir)
    expect(index.all()).toEqual(entries)
    expect(index.find(oid(17))).toEqual(entries[17])
    expect(index.positionOf('b'.repeat(40))).toBe(-1)
    index.close()
  })

  it('appends after reopening, and grows past its first buffers', () => {
    const entries = history(3000)
    writeIndex(dir, entries.slice(0, 10))
    const index = IndexFile.open(dir)
    for (const entry of entries.slice(10)) index.append(entry)
    index.close()
    const again = IndexFile.open(dir)
    expect(again.size).toBe(3000)
    expect(again.all()).toEqual(entries)
    expect(again.find(oid(2999))?.subject).toBe(entries[2999]!.subject)
    again.close()
  })

  it('names read at open are decoded when asked for, and an append reuses their ids', () => {
    const entries = history(12)
    writeIndex(dir, entries.slice(0, 11))
    const namesBytes = statSync(part('names')).size
    // Nothing read before the append: its file and conversation are names the index has.
    const index = IndexFile.open(dir)
    index.append(entries[11]!)
    expect(index.at(11)).toEqual(entries[11])
    index.close()
    expect(statSync(part('names')).size).toBe(namesBytes)
    const again = IndexFile.open(dir)
    expect(again.all()).toEqual(entries)
    expect(again.conversationKey('conv-1')).toBe(again.conversationKeyAt(11))
    again.close()
  })

  it('refuses an entry whose parents it does not hold, or one it holds already', () => {
    const entries = history(3)
    writeIndex(dir, entries.slice(0, 2))
    const index = IndexFile.open(dir)
    expect(() => index.append({ ...entries[2]!, parent: oid(99) })).toThrow()
    expect(() => index.append({ ...entries[2]!, otherParents: [oid(99)] })).toThrow()
    expect(() => index.append({ ...entries[1]!, parent: oid(0) })).toThrow()
    expect(index.size).toBe(2)
    index.close()
  })

  it('keeps merge commits: parents anywhere before, further parents and machines read back', () => {
    // Two lines of history from entry 0 (this machine's 1-2, another's 3-4), joined by 5.
    const base = history(6)
    const entries: IndexEntry[] = [
      base[0]!,
      base[1]!,
      base[2]!,
      { ...base[3]!, parent: oid(0), machine: 'desktop' },
      { ...base[4]!, machine: 'desktop' },
      { ...base[5]!, parent: oid(2), otherParents: [oid(4)], command: 'merge', subject: 'Merge' },
    ]
    writeIndex(dir, entries.slice(0, 4))
    const index = IndexFile.open(dir)
    index.append(entries[4]!)
    index.append(entries[5]!)
    index.close()
    const again = IndexFile.open(dir)
    expect(again.all()).toEqual(entries)
    expect(again.isMergeAt(5)).toBe(true)
    expect(again.isMergeAt(4)).toBe(false)
    expect(() => again.checkStructure(0, again.size)).not.toThrow()
    expect(again.firstDamaged(0, again.size)).toBe(-1)
    again.close()
  })

  it('drops an append a crash cut short, in any of its parts, and trims the leftovers', () => {
    const entries = history(6)
    for (const [name, cut] of [
      ['commits', 30],
      ['details', 5],
      ['files', 2],
    ] as const) {
      writeIndex(dir, entries)
      truncateSync(part(name), statSync(part(name)).size - cut)
      const index = IndexFile.open(dir)
      expect(index.all()).toEqual(entries.slice(0, 5))
      index.append(entries[5]!)
      index.close()
      const again = IndexFile.open(dir)
      expect(again.all()).toEqual(entries)
      again.close()
    }
  })

  it('cuts off bytes past the last entry (an append whose record never came)', () => {
    const entries = history(4)
    writeIndex(dir, entries)
    const size = statSync(part('details')).size
    writeFileSync(
      part('details'),
      Buffer.concat([readFileSync(part('details')), Buffer.from('{"s":"torn')]),
    )
    const index = IndexFile.open(dir)
    expect(statSync(part('details')).size).toBe(size)
    expect(index.all()).toEqual(entries)
    index.close()
  })

  it('finds a break in the middle, and refuses a broken newest entry or another format', () => {
    const entries = history(5)
    writeIndex(dir, entries)
    const commits = readFileSync(part('commits'))
    commits[64 * 2 + 20] ^= 0xff // entry 2's parent no longer matches entry 1
    writeFileSync(part('commits'), commits)
    // Open reads only the tail; the structure check (run in the background) finds it.
    const opened = IndexFile.open(dir)
    expect(() => opened.checkStructure(0, opened.size)).toThrow(IndexDamagedError)
    opened.close()
    // The newest entry is checked at open.
    const tail = readFileSync(part('commits'))
    tail[64 * 4 + 20] ^= 0xff
    writeFileSync(part('commits'), tail)
    expect(() => IndexFile.open(dir)).toThrow(IndexDamagedError)
    writeIndex(dir, entries)
    writeFileSync(part('format'), 'cairn-index 9\n')
    expect(() => IndexFile.open(dir)).toThrow(IndexDamagedError)
  })

  it('reads older records only when first asked for, each way of reading them the same', () => {
    // 3,000 entries: open reads the newest 1,024 records; every reader below reaches older
    // ones first thing after an open of its own.
    const entries = history(3000)
    writeIndex(dir, entries)
    const fresh = <T>(read: (index: IndexFile) => T): T => {
      const index = IndexFile.open(dir)
      try {
        return read(index)
      } finally {
        index.close()
      }
    }
    const old = [0, 4, 1000, 1975, 1976, 2500]
    for (const i of old) {
      const entry = entries[i]!
      expect(fresh((index) => index.oidAt(i))).toBe(entry.oid)
      expect(fresh((index) => index.parentAt(i))).toBe(i - 1)
      expect(fresh((index) => index.timeAt(i))).toBe(entry.time)
      expect(fresh((index) => index.actorAt(i))).toBe(entry.actor)
      expect(fresh((index) => index.commandAt(i))).toBe(entry.command)
      expect(fresh((index) => index.filesAt(i))).toEqual(entry.files)
      expect(fresh((index) => index.isMergeAt(i))).toBe(false)
      expect(fresh((index) => index.at(i))).toEqual(entry)
      expect(fresh((index) => index.conversationKeyAt(i) === 0xffffffff)).toBe(
        entry.conversationId === null,
      )
      expect(fresh((index) => index.positionOf(entry.oid))).toBe(i)
      expect(fresh((index) => index.find(entry.oid))).toEqual(entry)
    }
    // A path filter walking from the newest entry to the oldest.
    expect(
      fresh((index) => {
        const touching = index.pathMatcher('/memories/n1.md')
        const found: number[] = []
        for (let i = index.size - 1; i >= 0; i--) if (touching(i)) found.push(i)
        return found
      }),
    ).toEqual(
      entries
        .map((entry, i) => (entry.files.includes('/memories/n1.md') ? i : -1))
        .filter((i) => i >= 0)
        .reverse(),
    )
    // The background check over every record, and the checksums of a range.
    expect(fresh((index) => index.firstDamaged(0, 2048))).toBe(-1)
    expect(
      fresh((index) => {
        index.checkStructure(0, index.size)
        return index.all()
      }),
    ).toEqual(entries)
    // Appends after an open that read only the newest records, then everything read back.
    fresh((index) => index.append({ ...entries[2999]!, oid: oid(3000), parent: oid(2999) }))
    expect(fresh((index) => [index.size, index.oidAt(3), index.parentAt(3000)])).toEqual([
      3001,
      oid(3),
      2999,
    ])
  })

  it('reads an older record from the file first, whichever of its readers asks first', () => {
    // 3,000 entries: open reads the newest 1,024. Entry 700 differs in every field from the
    // zeroes its record is in memory until read: a merge made by the system, in a conversation,
    // changing files, with a parent other than entry 0.
    const OLD = 700
    const entries = history(3000)
    const old = entries[OLD]!
    entries[OLD] = {
      ...old,
      parent: oid(OLD - 2),
      otherParents: [oid(OLD - 1)],
      actor: 'system',
      command: 'merge',
      subject: 'Merge',
      conversationId: 'conv-merge',
    }
    writeIndex(dir, entries)
    // The entry after it damaged in its details, so that the checksums read there find it (a
    // record of zeroes has a checksum of zero, and would pass).
    const commits = readFileSync(part('commits'))
    const details = readFileSync(part('details'))
    details[commits.readDoubleLE(64 * (OLD + 1) + 32)] ^= 0x01
    writeFileSync(part('details'), details)
    const file = entries[OLD]!.files[0]!
    const readers: Record<string, (index: IndexFile) => unknown> = {
      oidAt: (index) => index.oidAt(OLD),
      parentAt: (index) => index.parentAt(OLD),
      timeAt: (index) => index.timeAt(OLD),
      actorAt: (index) => index.actorAt(OLD),
      commandAt: (index) => index.commandAt(OLD),
      isMergeAt: (index) => index.isMergeAt(OLD),
      conversationKeyAt: (index) => index.conversationKeyAt(OLD),
      filesAt: (index) => index.filesAt(OLD),
      at: (index) => index.at(OLD),
      find: (index) => index.find(oid(OLD)),
      positionOf: (index) => index.positionOf(oid(OLD)),
      otherParentsBeyond: (index) => index.otherParentsBeyond(OLD),
      firstDamaged: (index) => index.firstDamaged(OLD, OLD + 2),
      checkStructure: (index) => {
        index.checkStructure(OLD, OLD + 1)
        return 'sound'
      },
      pathMatcher: (index) => index.pathMatcher(file)(OLD),
      pathMatcherOfMany: (index) => index.pathMatcher('/memories')(OLD),
    }
    // Every reader of one record's fields (`…At`) is in the list: one added later is tried too.
    const fieldReaders = Object.getOwnPropertyNames(IndexFile.prototype).filter(
      // `nameAt` reads `names`, `writeAt` writes a part: neither reads a record.
      (name) => name.endsWith('At') && name !== 'nameAt' && name !== 'writeAt',
    )
    expect(fieldReaders.length).toBeGreaterThan(7)
    for (const name of fieldReaders) expect(Object.keys(readers)).toContain(name)

    // What each reads with every record in memory.
    const full = IndexFile.open(dir)
    full.checkStructure(0, full.size)
    expect(full.at(OLD)).toEqual(entries[OLD])
    expect(full.firstDamaged(0, full.size)).toBe(OLD + 1)
    expect(full.isMergeAt(OLD)).toBe(true)
    expect(full.conversationKeyAt(OLD)).toBeGreaterThan(0)
    const expected = Object.fromEntries(
      Object.entries(readers).map(([name, read]) => [name, read(full)]),
    )
    full.close()
    // Each reader first thing after an open of its own, nothing else having read the record.
    for (const [name, read] of Object.entries(readers)) {
      const index = IndexFile.open(dir)
      try {
        expect([name, read(index)]).toEqual([name, expected[name]])
      } finally {
        index.close()
      }
    }
  })

  it('finds an older record damaged on disk when a read reaches it, as it did when open read it', () => {
    const entries = history(3000)
    writeIndex(dir, entries)
    const commits = readFileSync(part('commits'))
    commits[64 * 10 + 24] ^= 0x01 // entry 10's time: its checksum no longer holds
    commits[64 * 20 + 32] ^= 0x10 // entry 20's details offset: its structure no longer holds
    writeFileSync(part('commits'), commits)
    const index = IndexFile.open(dir)
    expect(index.size).toBe(3000)
    expect(index.at(2999)).toEqual(entries[2999])
    expect(() => index.at(10)).toThrow(IndexDamagedError)
    expect(index.firstDamaged(0, 2048)).toBe(10)
    expect(() => index.checkStructure(0, 2048)).toThrow(IndexDamagedError)
    index.close()
  })

  it('fails a read of older records the file no longer holds, never reading them as zeroes', () => {
    const entries = history(3000)
    writeIndex(dir, entries)
    const index = IndexFile.open(dir)
    // Cut below the records open read (something outside Cairn, or the disk): the older ones
    // are gone from under the open index.
    truncateSync(part('commits'), 64 * 100)
    expect(index.at(2999)).toEqual(entries[2999])
    expect(() => index.oidAt(50)).toThrow(IndexDamagedError)
    expect(() => index.parentAt(1500)).toThrow(IndexDamagedError)
    expect(() => index.positionOf(oid(3))).toThrow(IndexDamagedError)
    index.close()
    // Closed, an older record is not read from a descriptor that may name another file now:
    // a reader holding it across a rebuild's swap is told the index is being rebuilt.
    writeIndex(dir, entries)
    const closed = IndexFile.open(dir)
    closed.close()
    expect(() => closed.oidAt(3)).toThrow(IndexDamagedError)
    expect(() => closed.parentAt(1500)).toThrow(IndexDamagedError)
    expect(closed.isClosed).toBe(true)
  })

  it('fails a read of older records cut short and then appended to (a hole), never reading zeroes', () => {
    const entries = history(3001)
    writeIndex(dir, entries.slice(0, 3000))
    const index = IndexFile.open(dir)
    truncateSync(part('commits'), 64 * 100)
    // The append writes at the end open counted: the records below it read as a hole.
    index.append(entries[3000]!)
    expect(statSync(part('commits')).size).toBe(64 * 3001)
    for (const read of [
      () => index.oidAt(500),
      () => index.parentAt(500),
      () => index.timeAt(500),
      () => index.filesAt(500),
      () => index.isMergeAt(500),
    ]) {
      expect(read).toThrow(IndexDamagedError)
    }
    index.close()
  })

  it('finds entries by path (files and folders) and by conversation without reading details', () => {
    writeIndex(dir, history(20))
    const index = IndexFile.open(dir)
    const touching = index.pathMatcher('/memories/n1.md')
    const hits = Array.from({ length: index.size }, (_, i) => i).filter(touching)
    expect(hits).toEqual(
      index
        .all()
        .map((entry, i) => (entry.files.includes('/memories/n1.md') ? i : -1))
        .filter((i) => i >= 0),
    )
    expect(index.pathMatcher('/memories/n1')(1)).toBe(false)
    const key = index.conversationKey('conv-1')
    expect(index.conversationKeyAt(1)).toBe(key)
    expect(index.conversationKey('nobody')).toBe(-1)
    index.close()
  })

  it('matches a path and the folder under it only, also for names appended after the first filter', () => {
    const entry = (i: number, files: string[]): IndexEntry => ({
      oid: oid(i),
      parent: i === 0 ? null : oid(i - 1),
      time: (1_700_000_000 + i) * 1000,
      actor: 'claude',
      command: 'create',
      subject: `create ${files[0]}`,
      paths: files,
      conversationId: null,
      toolUseId: null,
      overwrite: false,
      restoredFrom: null,
      files,
    })
    // Neighbours in name order: 'a' < 'a b' < 'a-' < 'a.md' < 'a/' < 'a0' < 'ab'.
    const names = ['/memories/a b', '/memories/a-', '/memories/a.md', '/memories/a/x.md']
    const more = ['/memories/a0', '/memories/ab', '/memories/a', '/memories/a/y/z.md']
    writeIndex(
      dir,
      names.map((name, i) => entry(i, [name])),
    )
    const index = IndexFile.open(dir)
    const hits = (path: string) =>
      Array.from({ length: index.size }, (_, i) => i).filter(index.pathMatcher(path))
    expect(hits('/memories/a')).toEqual([3])
    for (const [i, name] of more.entries()) index.append(entry(names.length + i, [name]))
    expect(hits('/memories/a')).toEqual([3, 6, 7])
    expect(hits('/memories/a/y')).toEqual([7])
    expect(hits('/memories/a b')).toEqual([0])
    expect(hits('/memories/a.md')).toEqual([2])
    expect(hits('/memories/a0')).toEqual([4])
    expect(hits('/memories/b')).toEqual([])
    index.close()
    expect(
      Array.from({ length: 8 }, (_, i) => i).filter(IndexFile.open(dir).pathMatcher('/memories/a')),
    ).toEqual([3, 6, 7])
  })

  it('follows a note through 99 renames without walking every name at each (review12-story R4)', () => {
    const entries: IndexEntry[] = []
    let name = '/memories/n-0.md'
    for (let i = 0; i < 2_000; i++) {
      const base = {
        oid: oid(i),
        parent: i === 0 ? null : oid(i - 1),
        time: (1_700_000_000 + i) * 1000,
        actor: 'claude' as const,
        conversationId: null,
        toolUseId: null,
        overwrite: false,
        restoredFrom: null,
      }
      if (i > 0 && i % 20 === 0) {
        const to = `/memories/n-${i}.md`
        entries.push({
          ...base,
          command: 'rename',
          subject: `rename ${name} -> ${to}`,
          paths: [name, to],
          files: [name, to],
        })
        name = to
      } else {
        const other = `/memories/other/f-${i}.md`
        entries.push({
          ...base,
          command: 'str_replace',
          subject: `str_replace ${name}`,
          paths: [name],
          files: [name, other],
        })
      }
    }
    writeIndex(dir, entries)
    const index = IndexFile.open(dir)
    // Names read, counted: the work, not the time (a loaded machine cannot fail this).
    const nameAt = (index as unknown as { nameAt(id: number): string }).nameAt
    let reads = 0
    Object.assign(index, {
      nameAt(id: number) {
        reads++
        return nameAt.call(index, id)
      },
    })
    const page = queryLog(index, { path: name, offset: 0, limit: 50 })
    expect(page.total).toBe(2_000)
    const first = reads
    reads = 0
    expect(queryLog(index, { path: name, offset: 50, limit: 50 }).entries).toHaveLength(50)
    // About 2,000 names: one sort at the first filter, then a few binary searches per rename
    // (walking them all per rename read 200,000).
    expect(first).toBeLessThan(60_000)
    expect(reads).toBeLessThan(20_000)
    index.close()
  })
})
