import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { deflateSync, inflateSync } from 'node:zlib'
import {
  compareTreeKeys,
  createObjectStore,
  initRepository,
  parseTreeEncoded,
  serializeTree,
  serializeTreeEncoded,
  type ObjectStore,
} from './object-store'
import { gitCli, tempDataDir } from './test-helpers'
import {
  changesOf,
  childrenOf,
  diffNodes,
  emptyTree,
  flushTree,
  listFiles,
  setAt,
  treeFromOid,
  type Node,
} from './tree-state'

let dataDir: string
let cleanup: () => Promise<void>
let store: ObjectStore

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  await initRepository(path.join(dataDir, 'history.git'))
  store = createObjectStore(path.join(dataDir, 'history.git'))
})
afterEach(async () => {
  store.close()
  await cleanup()
})

const blob = (oid: string): Node => ({ kind: 'blob', oid, mode: '100644' })
const name = fc.constantFrom(
  'a',
  'a.md',
  'a-b',
  'a/b',
  'b',
  'ä',
  'é.md',
  '😀',
  '\uE000',
  'z',
  'a.b',
)

describe('tree keys', () => {
  it('order like their UTF-8 bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        const bytes = Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)))
        expect(Math.sign(compareTreeKeys(a, b))).toBe(bytes)
      }),
      { numRuns: 2000 },
    )
  })

  it("put a tree's entries in the order of their keys' UTF-8 bytes (folders as name/)", () => {
    const entry = fc.record({
      name: fc.oneof(name, fc.string({ unit: 'binary', minLength: 1 })),
      kind: fc.constantFrom('blob' as const, 'tree' as const),
    })
    fc.assert(
      fc.property(
        fc.uniqueArray(entry, { selector: (e) => e.name.replace(/[/\0]/g, '_') }),
        (list) => {
          const entries = list.map(({ name: entryName, kind }, i) => ({
            name: entryName.replace(/[/\0]/g, '_'),
            kind,
            oid: i.toString(16).padStart(40, '0'),
            mode: kind === 'tree' ? '40000' : '100644',
          }))
          const key = (e: (typeof entries)[number]) =>
            Buffer.from(e.kind === 'tree' ? `${e.name}/` : e.name)
          const expected = [...entries].sort((a, b) => Buffer.compare(key(a), key(b)))
          const { idAt } = serializeTreeEncoded(entries)
          const order = [...idAt].sort((a, b) => a[1] - b[1]).map(([entryName]) => entryName)
          expect(order).toEqual(expected.map((e) => e.name))
        },
      ),
      { numRuns: 1000 },
    )
  })

  it('locate each id where a parse of the serialized tree finds it', () => {
    const entry = fc.record({
      name,
      kind: fc.constantFrom('blob' as const, 'tree' as const),
      oid: fc.stringMatching(/^[0-9a-f]{40}$/),
      executable: fc.boolean(),
    })
    fc.assert(
      fc.property(fc.uniqueArray(entry, { selector: (e) => e.name.replace('/', '_') }), (list) => {
        const entries = list.map(({ name: entryName, kind, oid, executable }) => ({
          name: entryName.replace('/', '_'),
          kind,
          oid,
          mode: kind === 'tree' ? '40000' : executable ? '100755' : '100644',
        }))
        const { bytes, idAt } = serializeTreeEncoded(entries)
        expect(bytes).toEqual(serializeTree(entries))
        expect([...idAt].sort()).toEqual([...parseTreeEncoded('(test)', bytes).idAt!].sort())
      }),
      { numRuns: 300 },
    )
  })
})

describe('the tree kept in memory', () => {
  it('writes the same trees patched as serialized afresh, and leaves older roots as they were', async () => {
    const ops = fc.array(
      fc.record({
        dir: fc.constantFrom([], ['d'], ['d', 'e'], ['f']),
        file: name,
        remove: fc.boolean(),
        content: fc.nat({ max: 5 }),
      }),
      { minLength: 1, maxLength: 30 },
    )
    await fc.assert(
      fc.asyncProperty(fc.array(ops, { minLength: 1, maxLength: 4 }), async (commits) => {
        let root = emptyTree()
        for (const commit of commits) {
          const before = root
          const beforeOid = before.children?.size ? await flushTree(store, before) : null
          const beforeFiles = await listFiles(store, before)
          const owner = {}
          for (const op of commit) {
            const segments = [...op.dir, op.file.replace('/', '_')]
            const oid = await store.write('blob', Buffer.from(`content ${op.content}`))
            root = await setAt(store, root, segments, op.remove ? null : blob(oid), owner)
          }
          if (!root.children?.size) continue
          const changes = changesOf(root)
          const oid = await flushTree(store, root)
          // A fresh read of the written tree, serialized from scratch, names the same tree.
          const fresh = treeFromOid(oid)
          const files = await listFiles(store, fresh)
          expect(files).toEqual(await listFiles(store, root))
          expect(await rewrite(store, fresh)).toBe(oid)
          // The root before this commit still lists what it listed.
          expect(await listFiles(store, before)).toEqual(beforeFiles)
          if (beforeOid) expect(await flushTree(store, before)).toBe(beforeOid)
          // And the diff names exactly the files that differ.
          const deltas = await diffNodes(store, before, root)
          const changed = [...new Set([...files.keys(), ...beforeFiles.keys()])].filter(
            (file) => files.get(file) !== beforeFiles.get(file),
          )
          expect(deltas.map((delta) => delta.path).sort()).toEqual(changed.sort())
          // Looking only at the names the batch changed finds the same, in the same order.
          expect(await diffNodes(store, before, root, '', [], { changes })).toEqual(deltas)
        }
      }),
      { numRuns: 60 },
    )
    gitCli(dataDir, 'fsck', '--strict', '--no-dangling')
  })
})

describe('a large folder edited many times', () => {
  it('writes every version as git reads it back, and keeps each older version as it was', async () => {
    // 400 files: one commit's versions share entries until their changes outgrow √400, then
    // start from a flat copy again; edits, additions, removals and a sub-folder cross that.
    const oids = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.write('blob', Buffer.from(`content ${i}`))),
    )
    let root = emptyTree()
    const setup = {}
    for (let i = 0; i < 400; i++) {
      root = await setAt(store, root, [`note-${i}.md`], blob(oids[i % 8]!), setup)
    }
    await flushTree(store, root)
    const versions: Array<{ root: Node; files: Map<string, string> }> = []
    let seed = 7
    const next = (n: number): number => (seed = (seed * 48271) % 2147483647) % n
    for (let commit = 0; commit < 150; commit++) {
      const before = root
      const owner = {}
      for (let op = 0; op < 1 + next(3); op++) {
        const roll = next(10)
        const file = roll === 9 ? ['sub', `inner-${next(20)}.md`] : [`note-${next(450)}.md`]
        const value = roll === 0 ? null : blob(oids[next(8)]!)
        root = await setAt(store, root, file, value, owner)
      }
      const changes = changesOf(root)
      const oid = await flushTree(store, root)
      const files = await listFiles(store, root)
      // git lists the written tree exactly as the kept one lists its files.
      const listed = gitCli(dataDir, 'ls-tree', '-r', oid)
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/))
      expect(new Map(listed.map(([, , id, file]) => [file!, id!]))).toEqual(files)
      expect(listed.map(([mode, kind]) => `${mode} ${kind}`)).toEqual(
        listed.map(() => '100644 blob'),
      )
      expect(await rewrite(store, root)).toBe(oid)
      // Its loose file, patched from the version before (checksum included), is what zlib
      // writes at level 0 for it (inflating checks the checksum).
      const loose = readFileSync(
        path.join(dataDir, 'history.git', 'objects', oid.slice(0, 2), oid.slice(2)),
      )
      expect(loose.equals(deflateSync(inflateSync(loose), { level: 0 }))).toBe(true)
      expect(await diffNodes(store, before, root, '', [], { changes })).toEqual(
        await diffNodes(store, before, root),
      )
      versions.push({ root, files })
    }
    // Every earlier version still lists what it listed when it was made.
    for (const version of versions)
      expect(await listFiles(store, version.root)).toEqual(version.files)
    gitCli(dataDir, 'fsck', '--strict', '--no-dangling')
  })
})

/** The id `node`'s tree gets when every folder under it is serialized again from its entries. */
async function rewrite(store: ObjectStore, node: Node): Promise<string> {
  if (node.kind === 'blob') return node.oid
  const entries = []
  for (const [entryName, child] of await childrenOf(store, node)) {
    entries.push({
      name: entryName,
      kind: child.kind,
      oid: await rewrite(store, child),
      mode: child.kind === 'tree' ? '40000' : child.mode,
    })
  }
  return store.hash('tree', serializeTree(entries))
}

describe('a name no Cairn tree may hold', () => {
  it('is refused when it enters a folder, and nothing is written', async () => {
    const oid = await store.write('blob', Buffer.from('content'))
    const root = await setAt(store, emptyTree(), ['notes', 'a.md'], blob(oid))
    for (const bad of ['.git', '.GIT', 'git~1', 'a\nb', 'back\\slash', '.cairn-tmp-x']) {
      await expect(setAt(store, root, ['notes', bad], blob(oid))).rejects.toMatchObject({
        name: 'DamagedHistoryError',
      })
      await expect(setAt(store, root, [bad, 'a.md'], blob(oid))).rejects.toMatchObject({
        name: 'DamagedHistoryError',
      })
    }
    // The root it was given still lists what it did, and writes as before.
    expect([...(await listFiles(store, root)).keys()]).toEqual(['notes/a.md'])
    const written = await flushTree(store, root)
    expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', written).trim()).toBe('notes/a.md')
  })
})
