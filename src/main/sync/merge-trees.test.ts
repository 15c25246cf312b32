import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { FileEntry } from './file-map'
import { mergeTrees, sideName, type BlobAccess } from './merge-trees'
import { parseMemoryPath } from '../memory'

const labels = { ours: 'laptop', theirs: 'desktop' }

/** Blobs in a map, hashed like git's. */
function memoryBlobs(): BlobAccess & {
  text(oid: string): string
  put(content: string | Uint8Array): string
} {
  const blobs = new Map<string, Uint8Array>()
  const put = (bytes: Uint8Array): string => {
    const oid = createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex')
    blobs.set(oid, bytes)
    return oid
  }
  return {
    read: async (oid) => {
      const found = blobs.get(oid)
      if (!found) throw new Error(`no blob ${oid}`)
      return found
    },
    write: async (content) => put(content),
    text: (oid) => new TextDecoder().decode(blobs.get(oid)),
    put: (content) =>
      put(typeof content === 'string' ? new TextEncoder().encode(content) : content),
  }
}

function setup() {
  const blobs = memoryBlobs()
  const tree = (files: Record<string, string | Uint8Array>): Map<string, FileEntry> =>
    new Map(
      Object.entries(files).map(([path, content]) => [
        path,
        { oid: blobs.put(content), mode: '100644' },
      ]),
    )
  const merge = async (
    base: Record<string, string | Uint8Array>,
    ours: Record<string, string | Uint8Array>,
    theirs: Record<string, string | Uint8Array>,
  ) => {
    const result = await mergeTrees({
      base: tree(base),
      ours: tree(ours),
      theirs: tree(theirs),
      labels,
      blobs,
    })
    const texts = Object.fromEntries(
      [...result.files]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([path, e]) => [path, blobs.text(e.oid)]),
    )
    return { ...result, texts }
  }
  return { merge }
}

const notes = 'one\ntwo\nthree\nfour\nfive\n'

describe('merging two sides’ files', () => {
  it('takes files changed, added or deleted on one side only', async () => {
    const { merge } = setup()
    const result = await merge(
      { 'a.md': 'a\n', 'b.md': 'b\n', 'c.md': 'c\n' },
      { 'a.md': 'a2\n', 'b.md': 'b\n', 'c.md': 'c\n', 'new.md': 'n\n' },
      { 'a.md': 'a\n', 'b.md': 'b\n' },
    )
    expect(result.texts).toEqual({ 'a.md': 'a2\n', 'b.md': 'b\n', 'new.md': 'n\n' })
    expect(result.conflicts).toEqual([])
  })

  it('merges edits to different lines of one file', async () => {
    const { merge } = setup()
    const result = await merge(
      { 'n.md': notes },
      { 'n.md': notes.replace('two', 'TWO') },
      { 'n.md': notes.replace('four', 'FOUR') },
    )
    expect(result.texts['n.md']).toBe('one\nTWO\nthree\nFOUR\nfive\n')
    expect(result.conflicts).toEqual([])
  })

  it('keeps both versions of the same line and reports the conflict', async () => {
    const { merge } = setup()
    const result = await merge(
      { 'n.md': notes },
      { 'n.md': notes.replace('three', 'ours') },
      { 'n.md': notes.replace('three', 'theirs') },
    )
    expect(result.texts['n.md']).toContain(
      '<<<<<<< laptop\nours\n=======\ntheirs\n>>>>>>> desktop\n',
    )
    expect(result.conflicts).toEqual([{ path: 'n.md', kind: 'text', markerSize: 7 }])
  })

  it('keeps the edited file when the other side deleted it', async () => {
    const { merge } = setup()
    const ours = await merge({ 'n.md': notes }, { 'n.md': `${notes}six\n` }, {})
    expect(ours.texts).toEqual({ 'n.md': `${notes}six\n` })
    expect(ours.notes.join(' ')).toContain('the edited file was kept')
    const theirs = await merge({ 'n.md': notes }, {}, { 'n.md': `${notes}six\n` })
    expect(theirs.texts).toEqual({ 'n.md': `${notes}six\n` })
    const untouched = await merge(
      { 'n.md': notes, 'k.md': 'k\n' },
      { 'k.md': 'k\n' },
      { 'n.md': notes, 'k.md': 'k2\n' },
    )
    expect(untouched.texts).toEqual({ 'k.md': 'k2\n' })
  })

  it('follows a rename on one side with the other side’s edit', async () => {
    const { merge } = setup()
    const result = await merge(
      { 'old.md': notes },
      { 'new.md': notes },
      { 'old.md': notes.replace('five', 'FIVE') },
    )
    expect(result.texts).toEqual({ 'new.md': notes.replace('five', 'FIVE') })
    const edited = await merge(
      { 'old.md': notes },
      { 'old.md': notes.replace('one', 'ONE') },
      { 'dir/renamed.md': notes.replace('five', 'FIVE') },
    )
    expect(edited.texts).toEqual({ 'dir/renamed.md': 'ONE\ntwo\nthree\nfour\nFIVE\n' })
  })

  it('moves files the other side added into a folder this side renamed', async () => {
    const { merge } = setup()
    const result = await merge(
      { 'projects/a.md': 'a\n', 'projects/b.md': 'b\n' },
      { 'work/a.md': 'a\n', 'work/b.md': 'b\n' },
      { 'projects/a.md': 'a\n', 'projects/b.md': 'b\n', 'projects/c.md': 'c\n' },
    )
    expect(result.texts).toEqual({ 'work/a.md': 'a\n', 'work/b.md': 'b\n', 'work/c.md': 'c\n' })
  })

  it('merges files both sides added under one path as a conflict of whole versions', async () => {
    const { merge } = setup()
    const result = await merge(
      {},
      { 'me.md': 'Name: Sam\nLikes: tea\n' },
      { 'me.md': 'Name: Sam\nLikes: coffee\n' },
    )
    expect(result.texts['me.md']).toBe(
      'Name: Sam\n<<<<<<< laptop\nLikes: tea\n=======\nLikes: coffee\n>>>>>>> desktop\n',
    )
    expect(result.conflicts).toEqual([{ path: 'me.md', kind: 'text', markerSize: 7 }])
    const same = await merge({}, { 'me.md': 'x\n' }, { 'me.md': 'x\n' })
    expect(same.conflicts).toEqual([])
  })

  it('keeps both versions of a binary file side by side', async () => {
    const { merge } = setup()
    const base = new Uint8Array([0, 1, 2])
    const result = await merge(
      { 'img.png': base },
      { 'img.png': new Uint8Array([0, 1, 3]) },
      { 'img.png': new Uint8Array([0, 1, 4]) },
    )
    expect(Object.keys(result.texts)).toEqual(['img (desktop).png', 'img.png'])
    expect(result.conflicts).toEqual([
      { path: 'img.png', kind: 'binary', otherPath: 'img (desktop).png' },
    ])
  })

  it('moves a file aside when the other side made a folder of its name', async () => {
    const { merge } = setup()
    const result = await merge({}, { topic: 'file\n' }, { 'topic/a.md': 'a\n' })
    expect(result.texts).toEqual({ 'topic (desktop)': 'file\n', 'topic/a.md': 'a\n' })
  })
})

describe('sideName', () => {
  it('cuts a long machine label without splitting an emoji (the name becomes a file name)', () => {
    const name = sideName('dir/notes.md', `${'m'.repeat(39)}😀 laptop`, new Map())
    expect(name).toBe(`dir/notes (${'m'.repeat(39)}).md`)
    expect(name).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/)
  })

  it('takes no bidi, format or invisible character from the other machine’s name (D13)', () => {
    // A `Machine:` trailer is any text: "desk" + RIGHT-TO-LEFT OVERRIDE shows "…gnp.exe".
    for (const label of ['desk\u202egnp.exe', 'desk\u200btop', 'desk\u034ftop', 'desk\u2028top']) {
      const name = sideName('photo.png', label, new Map())
      expect(name).toMatch(/^photo \(desk-[a-z.]+\)\.png$/)
      expect(parseMemoryPath(`/memories/${name}`).ok).toBe(true)
    }
  })
})

describe('sideName of any machine name (review11 N6)', () => {
  it('makes a name the path rules accept, %-escapes and odd names included', () => {
    const labels = ['desk%41top', '%2e%2E', 'a%zz', '...', ' ', 'CON', 'x~1', '\u3164', '.hidden']
    for (const label of labels) {
      const name = sideName('notes/photo.png', label, new Map())
      expect(parseMemoryPath(`/memories/${name}`), `${label} -> ${name}`).toMatchObject({
        ok: true,
      })
      expect(name.startsWith('notes/photo (')).toBe(true)
    }
  })
})

describe('sideName of a long file name (review11-fixsync2 R5)', () => {
  it('shortens the name to keep tag and extension within the path rules, taken names too', () => {
    const taken = new Map<string, unknown>()
    // Names the path rules and a file system (255 bytes) take: up to 128 characters.
    const stems = [100, 115, 120, 124].map((length) => 's'.repeat(length - 4))
    stems.push('語'.repeat(83), '😀'.repeat(62), `${'s'.repeat(60)}.${'e'.repeat(60)}`)
    for (const stem of stems) {
      const path = `notes/${stem}.png`
      expect(parseMemoryPath(`/memories/${path}`).ok).toBe(true)
      for (const label of ['desktop', 'm'.repeat(60), '\u202e']) {
        for (let n = 1; n <= 3; n++) {
          const name = sideName(path, label, taken)
          expect(parseMemoryPath(`/memories/${name}`), name).toMatchObject({ ok: true })
          expect(Buffer.byteLength(name.split('/').at(-1)!)).toBeLessThanOrEqual(255)
          expect(name).toMatch(/^notes\/.+ \([^)]+\)\.png$/)
          taken.set(name, null)
        }
      }
    }
    expect(sideName(`${'s'.repeat(120)}.png`, 'desktop', new Map())).toBe(
      `${'s'.repeat(114)} (desktop).png`,
    )
  })

  it('keeps the whole path within 512 characters in a deep folder', () => {
    const dir = Array.from({ length: 4 }, (_, i) => `${i}`.repeat(120)).join('/')
    const path = `${dir}/${'n'.repeat(10)}.md`
    expect(parseMemoryPath(`/memories/${path}`).ok).toBe(true)
    const name = sideName(path, 'desktop', new Map())
    expect(parseMemoryPath(`/memories/${name}`), name).toMatchObject({ ok: true })
    expect(name).toMatch(/ \(desktop\)\.md$/)
  })
})
