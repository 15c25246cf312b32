import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { parseTree, type RawTreeEntry } from '../object-store'
import { SortedTree, TreeCursor, treeShape } from './tree-bytes'

// Maintenance's pack walk reads trees in place (`treeShape`, `TreeCursor`) instead of parsing
// them: what it takes as a tree must be exactly what `parseTree(…, { foreign: true })` takes,
// or the pack it writes would change.

type Entry = readonly [mode: string, name: Buffer]

function treeBytes(entries: ReadonlyArray<Entry>, ids: ReadonlyArray<Buffer>): Buffer {
  return Buffer.concat(
    entries.flatMap(([mode, name], i) => [
      Buffer.from(`${mode} `),
      name,
      Buffer.from([0]),
      ids[i]!,
    ]),
  )
}

/**
 * A seeded generator (mulberry32) for the random trees below: the same trees every run, so
 * that the counts each test asserts it covered are fixed, not left to chance.
 */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const isFolder = (mode: string) => mode === '40000' || mode === '040000'

// Git's order, as git itself sorts a tree: names bytewise, a folder's with '/' after it; a
// file named `x/` (same key as the folder `x`, a name git never writes) before the folder.
function gitOrder(a: Entry, b: Entry): number {
  const key = ([mode, name]: Entry) =>
    isFolder(mode) ? Buffer.concat([name, Buffer.from('/')]) : name
  return Buffer.compare(key(a), key(b)) || Number(isFolder(a[0])) - Number(isFolder(b[0]))
}

function parses(bytes: Buffer): RawTreeEntry[] | null {
  try {
    return parseTree('(test)', bytes, { foreign: true })
  } catch {
    return null
  }
}

// `a/` and `dir/` have the keys of the folders `a` and `dir`.
const NAMES = [
  'a',
  'a.b',
  'a-c',
  'a0',
  'ab',
  'b',
  '',
  'é',
  'dir',
  'dir.md',
  'z z',
  'a/b',
  'a/',
  'dir/',
]
  .map((name) => Buffer.from(name, 'utf8'))
  .concat([Buffer.from([0xc3, 0x28]), Buffer.from([0xff]), Buffer.from([0xef, 0xbb, 0xbf, 0x61])])
const ID = Buffer.from('0123456789abcdef0123456789abcdef01234567', 'hex')
const MODES = ['100644', '100755', '120000', '160000', '40000', '040000', '100664', '644', '']

describe('treeShape', () => {
  it('reads a tree in git order with every mode a foreign tree may hold as sorted', () => {
    const listed: Entry[] = [
      ['100644', Buffer.from('a')],
      ['120000', Buffer.from('a.b')],
      ['160000', Buffer.from('a-c')],
      ['40000', Buffer.from('a0')],
      ['100755', Buffer.from('b')],
      ['040000', Buffer.from('dir')],
      ['100644', Buffer.from('é')],
    ]
    const entries = listed.sort(gitOrder)
    const bytes = treeBytes(
      entries,
      entries.map(() => randomBytes(20)),
    )
    expect(treeShape(bytes)).toBe('sorted')
    expect(parses(bytes)).not.toBeNull()
  })

  it('finds a file and a folder of the same name with names between them', () => {
    // `a`, `a-c`, `a.b` sort between the file `a` and the folder `a` (`a/`).
    const entries: Entry[] = [
      ['100644', Buffer.from('a')],
      ['100644', Buffer.from('a-c')],
      ['100644', Buffer.from('a.b')],
      ['40000', Buffer.from('a')],
    ]
    expect([...entries].sort(gitOrder)).toEqual(entries)
    const bytes = treeBytes(
      entries,
      entries.map(() => randomBytes(20)),
    )
    expect(parses(bytes)).toBeNull()
    expect(treeShape(bytes)).toBe('invalid')
  })

  it('takes a file named "x/" beside the folder "x" as parseTree does', () => {
    // Both have the key `x/`: not the same name twice, so parseTree takes them, in either
    // order; the file first is git's order here, the other order is parseTree's to read.
    const file: Entry = ['100644', Buffer.from('x/')]
    const folder: Entry = ['40000', Buffer.from('x')]
    const ids = [randomBytes(20), randomBytes(20)]
    const fileFirst = treeBytes([file, folder], ids)
    expect(parses(fileFirst)).not.toBeNull()
    expect(treeShape(fileFirst)).toBe('sorted')
    const folderFirst = treeBytes([folder, file], ids)
    expect(parses(folderFirst)).not.toBeNull()
    expect(treeShape(folderFirst)).toBe('unsorted')
    // Each is an entry of its own, never the same entry as the other.
    const a = new TreeCursor(fileFirst)
    const b = new TreeCursor(fileFirst)
    a.next()
    b.next()
    b.next()
    expect(a.compare(b)).toBeLessThan(0)
    expect(b.compare(a)).toBeGreaterThan(0)
    // The folder `x` sorts between the file `x/` and a folder `x/`: still the same name twice.
    const twice = treeBytes([file, folder, ['40000', Buffer.from('x/')]], [...ids, randomBytes(20)])
    expect(parses(twice)).toBeNull()
    expect(treeShape(twice)).toBe('invalid')
  })

  it('agrees with parseTree on random trees, well formed or not', () => {
    const random = seeded(32485)
    let sorted = 0
    let invalid = 0
    for (let round = 0; round < 4000; round++) {
      const count = Math.floor(random() * 7)
      let entries: Entry[] = Array.from({ length: count }, () => {
        const mode =
          random() < 0.9 ? MODES[Math.floor(random() * 6)]! : MODES[6 + Math.floor(random() * 3)]!
        const name = NAMES[Math.floor(random() * (random() < 0.9 ? 14 : NAMES.length))]!
        return [mode, name] as Entry
      })
      // Mostly in git's order, as trees are written; now and then as they came.
      if (random() < 0.8) entries = entries.sort(gitOrder)
      let bytes = treeBytes(
        entries,
        entries.map(() => randomBytes(20)),
      )
      // Now and then cut short or with a byte changed.
      if (random() < 0.05 && bytes.length > 0)
        bytes = bytes.subarray(0, Math.floor(random() * bytes.length))
      if (random() < 0.05 && bytes.length > 0) {
        bytes = Buffer.from(bytes)
        bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256)
      }
      const parsed = parses(bytes)
      const shape = treeShape(bytes)
      if (shape === 'invalid') {
        invalid++
        expect(parsed, bytes.toString('hex')).toBeNull()
      } else if (shape === 'sorted') {
        sorted++
        expect(parsed, bytes.toString('hex')).not.toBeNull()
        // Each entry strictly after the one before, in git's order.
        const read: Entry[] = parsed!.map((entry, i) => [
          entry.kind === 'tree' ? '40000' : '100644',
          Buffer.from(entriesNames(bytes)[i]!),
        ])
        for (let k = 1; k < read.length; k++)
          expect(gitOrder(read[k - 1]!, read[k]!)).toBeLessThan(0)
      } else if (parsed) {
        // Parses, out of git's order: some entry sorts before the one before it.
        const read: Entry[] = parsed.map((entry, i) => [
          entry.kind === 'tree' ? '40000' : '100644',
          Buffer.from(entriesNames(bytes)[i]!),
        ])
        expect(read.some((entry, k) => k > 0 && gitOrder(read[k - 1]!, entry) > 0)).toBe(true)
      }
    }
    // Both kinds came up often enough to mean something.
    expect(sorted).toBeGreaterThan(1000)
    expect(invalid).toBeGreaterThan(300)
  })

  it("gives parseTree's verdict on crafted trees: every mode and its near misses, odd names, a name twice", () => {
    // Every mode either reader takes, each with every byte of it changed to every value (a
    // mode one byte off, or a space or NUL inside it), cut short or made longer.
    const modes = new Set(['100644', '100755', '120000', '160000', '40000', '040000', '', ' '])
    for (const mode of [...modes]) {
      for (let k = 0; k < mode.length; k++) {
        for (let byte = 0; byte < 256; byte++) {
          modes.add(mode.slice(0, k) + String.fromCharCode(byte) + mode.slice(k + 1))
        }
      }
      modes.add(mode.slice(1)).add(mode.slice(0, -1)).add(`0${mode}`).add(`${mode}0`)
    }
    // Names as bytes: ASCII, UTF-8, a BOM, bytes that are not UTF-8, empty, a slash.
    const names = ['notes.md', 'é', '\uFEFFa', '日本語', '😀', '', 'a/', '..', '.git'].map((name) =>
      Buffer.from(name, 'utf8'),
    )
    names.push(
      Buffer.from([0xc3, 0x28]),
      Buffer.from([0xff]),
      Buffer.from([0x61, 0x80]),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from([0xf4, 0x90, 0x80, 0x80]),
    )
    const trees: Buffer[] = []
    for (const mode of modes) {
      const name = Buffer.from('notes.md')
      trees.push(Buffer.concat([Buffer.from(`${mode} `, 'latin1'), name, Buffer.from([0]), ID]))
    }
    for (const name of names) {
      for (const mode of ['100644', '40000', '160000', '100664'])
        trees.push(treeBytes([[mode, name]], [ID]))
    }
    // A name twice: of one kind or both, next to each other or with a name between, and a file
    // 'a/' beside the folder 'a' (two names, one key), in either order.
    for (const [x, y] of [
      ['100644', '100644'],
      ['100644', '40000'],
      ['40000', '100644'],
      ['40000', '040000'],
      ['120000', '100755'],
      ['160000', '40000'],
    ] as const) {
      for (const [first, second] of [
        ['a', 'a'],
        ['é', 'é'],
        ['a/', 'a'],
        ['a', 'a/'],
      ]) {
        trees.push(
          treeBytes(
            [
              [x, Buffer.from(first!)],
              [y, Buffer.from(second!)],
            ],
            [ID, ID],
          ),
        )
        trees.push(
          treeBytes(
            [
              [x, Buffer.from(first!)],
              ['100644', Buffer.from('a-c')],
              [y, Buffer.from(second!)],
            ],
            [ID, ID, ID],
          ),
        )
      }
    }
    let taken = 0
    for (const bytes of trees) {
      const parsed = parses(bytes)
      const shape = treeShape(bytes)
      // Out of git's order, the verdict is parseTree's alone (the pack walk hands it over).
      if (shape === 'unsorted') continue
      expect(shape === 'invalid', `${bytes.toString('hex')}: ${shape}`).toBe(parsed === null)
      if (!parsed) continue
      taken++
      // Each entry read in place as parseTree reads it.
      const cursor = new TreeCursor(bytes)
      const read: Array<[string, boolean, string]> = []
      while (cursor.next()) read.push([cursor.name(), cursor.folder, cursor.id()])
      expect(cursor.done).toBe(true)
      expect(read).toEqual(parsed.map((entry) => [entry.name, entry.kind === 'tree', entry.oid]))
    }
    // Both verdicts came up, each many times.
    expect(taken).toBeGreaterThan(30)
    expect(trees.length - taken).toBeGreaterThan(3000)
  })
})

// The raw name bytes of each entry (a well-formed tree).
function entriesNames(bytes: Buffer): Buffer[] {
  const names: Buffer[] = []
  const cursor = new TreeCursor(bytes)
  while (cursor.next()) names.push(bytes.subarray(cursor.nameStart, cursor.nameEnd))
  return names
}

describe('TreeCursor', () => {
  const ids = [randomBytes(20), randomBytes(20), randomBytes(20), randomBytes(20)]
  const entries: Entry[] = [
    ['100644', Buffer.from('a')],
    ['100644', Buffer.from('a.b')],
    ['40000', Buffer.from('b')],
    ['100644', Buffer.from('é')],
  ]
  const bytes = treeBytes(entries, ids)

  it('gives each entry its name, id and kind as parseTree does', () => {
    const cursor = new TreeCursor(bytes)
    const seen: RawTreeEntry[] = []
    while (cursor.next()) {
      seen.push({
        name: cursor.name(),
        kind: cursor.folder ? 'tree' : 'blob',
        oid: cursor.id(),
        mode: cursor.folder ? '40000' : '100644',
      })
    }
    expect(cursor.done).toBe(true)
    expect(seen).toEqual(parseTree('(test)', bytes, { foreign: true }))
  })

  it('finds the entry of the other kind with the same name, and nothing else', () => {
    const base = treeBytes(
      [
        ['100644', Buffer.from('a')],
        ['100644', Buffer.from('a-c')],
        ['40000', Buffer.from('b')],
      ],
      ids,
    )
    const asFolder = new TreeCursor(treeBytes([['40000', Buffer.from('a')]], [ids[0]!]))
    asFolder.next()
    const found = new SortedTree(base).otherKindNamed(asFolder)
    expect(found?.name()).toBe('a')
    expect(found?.folder).toBe(false)
    expect(found?.sameId(asFolder)).toBe(true)
    const asFile = new TreeCursor(treeBytes([['100644', Buffer.from('b')]], [ids[2]!]))
    asFile.next()
    expect(new SortedTree(base).otherKindNamed(asFile)?.name()).toBe('b')
    const missing = new TreeCursor(treeBytes([['40000', Buffer.from('a-')]], [ids[0]!]))
    missing.next()
    expect(new SortedTree(base).otherKindNamed(missing)).toBeNull()
  })

  it('finds the entry of the other kind as a scan from the start would, in any sorted tree', () => {
    const random = seeded(20727)
    // Names that sort around '/' (and share the key of a folder), many times over.
    const names = ['a', 'a.b', 'a-c', 'a0', 'a/', 'a/b', 'ab', 'b', 'b/', 'é', '']
    let searched = 0
    let found = 0
    for (let round = 0; round < 100; round++) {
      const entries: Entry[] = []
      for (const name of names) {
        for (const folder of [false, true]) {
          if (random() < 0.5) continue
          const n = random() < 0.5 ? '' : String(Math.floor(random() * 3))
          entries.push([folder ? '40000' : '100644', Buffer.from(name + n)])
        }
      }
      const sorted = entries.sort(gitOrder)
      const bytes = treeBytes(
        sorted,
        sorted.map(() => randomBytes(20)),
      )
      if (treeShape(bytes) !== 'sorted') continue
      const tree = new SortedTree(bytes)
      // Each name the tree may hold, of either kind (as an entry of the next version).
      const queries = names.flatMap((name) =>
        ['', '0', '1', '2'].flatMap((n) =>
          ['100644', '40000'].map((mode) => [mode, Buffer.from(name + n)] as Entry),
        ),
      )
      for (const [mode, name] of queries) {
        const query = new TreeCursor(treeBytes([[mode, name]], [randomBytes(20)]))
        query.next()
        // The answer of a scan of every entry.
        const scan = new TreeCursor(bytes)
        let expected: string | null = null
        while (scan.next()) {
          if (scan.folder !== query.folder && scan.sameName(query)) expected = scan.id()
        }
        const match = tree.otherKindNamed(query)
        searched++
        if (expected) found++
        expect(match?.id() ?? null).toBe(expected)
        if (match) expect(match.folder).toBe(!query.folder)
      }
    }
    expect(searched).toBeGreaterThan(1000)
    expect(found).toBeGreaterThan(300)
  })
})
