import { spawnSync } from 'node:child_process'
import fc from 'fast-check'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseCommitMessage } from './commit-message'
import { DamagedHistoryError } from './damage'
import { createObjectStore, type ObjectStore } from './object-store'
import { toVirtual } from './paths'
import { entryFromCommit, indexEntryOf } from './side-index'
import { gitIn, tempDataDir } from './test-helpers'
import { diffNodes, treeFromOid } from './tree-state'

// The files a commit changed, as history's one walk finds them (`diffNodes`, which the side
// index runs with a pause before each tree it reads), held against git's own `diff-tree -r` on
// random histories written object by object: renames, file↔folder changes, modes, names whose
// order differs between git's and JavaScript's, links and submodules (damage in a tree of
// Cairn's), missing trees, a blob where a tree should be, and trees that are not trees.

let dir: string
let cleanup: () => Promise<void>

beforeEach(async () => {
  ;({ dir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

const NAMES = ['a', 'a.md', 'a-b', 'b', 'é.md', 'e\u0301.md', '😀', 'ｚ', 'A'] as const

type Spec = Map<string, Leaf | Spec>
type Leaf =
  | { readonly kind: 'file'; readonly content: number; readonly exec: boolean }
  | { readonly kind: 'link' | 'gitlink' | 'missing' | 'notATree' | 'garbage' }

type Op = { readonly at: string[]; readonly put: Leaf | 'delete' }

const leaf: fc.Arbitrary<Leaf | 'delete'> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('file' as const),
      content: fc.nat(3),
      exec: fc.boolean(),
    }),
  },
  { weight: 4, arbitrary: fc.constant('delete' as const) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      ...(['link', 'gitlink', 'missing', 'notATree', 'garbage'] as const).map((kind) => ({ kind })),
    ),
  },
)
const op: fc.Arbitrary<Op> = fc.record({
  at: fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }),
  put: leaf,
})
const history = fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), {
  minLength: 1,
  maxLength: 10,
})

function clone(spec: Spec): Spec {
  return new Map([...spec].map(([name, node]) => [name, node instanceof Map ? clone(node) : node]))
}

function apply(root: Spec, { at, put }: Op): void {
  let folder = root
  for (const name of at.slice(0, -1)) {
    const next = folder.get(name)
    if (next instanceof Map) folder = next
    else {
      if (put === 'delete') return
      const made: Spec = new Map()
      folder.set(name, made)
      folder = made
    }
  }
  const last = at[at.length - 1]!
  if (put === 'delete') folder.delete(last)
  else folder.set(last, put)
}

function pruned(spec: Spec): Spec {
  const out: Spec = new Map()
  for (const [name, node] of spec) {
    if (!(node instanceof Map)) out.set(name, node)
    else {
      const inner = pruned(node)
      if (inner.size > 0) out.set(name, inner)
    }
  }
  return out
}

const MISSING = 'dead'.repeat(10)

async function writeSpec(store: ObjectStore, spec: Spec): Promise<string> {
  const entries: Array<{ sortKey: Buffer; bytes: Buffer }> = []
  for (const [name, node] of spec) {
    let mode: string
    let oid: string
    if (node instanceof Map) {
      mode = '40000'
      oid = await writeSpec(store, node)
    } else if (node.kind === 'file') {
      mode = node.exec ? '100755' : '100644'
      oid = await store.write('blob', Buffer.from(`content ${node.content}\n`))
    } else if (node.kind === 'link') {
      mode = '120000'
      oid = await store.write('blob', Buffer.from('elsewhere'))
    } else if (node.kind === 'gitlink') {
      mode = '160000'
      oid = 'beef'.repeat(10)
    } else if (node.kind === 'missing') {
      mode = '40000'
      oid = MISSING
    } else if (node.kind === 'notATree') {
      mode = '40000'
      oid = await store.write('blob', Buffer.from('a file, named as a folder'))
    } else {
      mode = '40000'
      oid = await store.write('tree', Buffer.from('not a tree at all'))
    }
    const folder = mode === '40000'
    entries.push({
      sortKey: Buffer.from(folder ? `${name}/` : name),
      bytes: Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(oid, 'hex')]),
    })
  }
  entries.sort((x, y) => Buffer.compare(x.sortKey, y.sortKey))
  return store.write('tree', Buffer.concat(entries.map(({ bytes }) => bytes)))
}

/** The store, with every tree read through it, in order. */
function watched(plain: ObjectStore): { store: ObjectStore; reads: string[] } {
  const reads: string[] = []
  const store: ObjectStore = {
    ...plain,
    readTree: (oid) => {
      reads.push(oid)
      return plain.readTree(oid)
    },
    readTreeEncoded: (oid) => {
      reads.push(oid)
      return plain.readTreeEncoded(oid)
    },
  }
  return { store, reads }
}

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'

/**
 * The files git finds changed between two trees (`git diff-tree -r`), leaving out those whose
 * mode alone changed (history speaks of a file's content, not its mode), or null where git
 * cannot read them.
 */
function gitChanged(gitdir: string, before: string | null, after: string): string[] | null {
  const run = spawnSync('git', ['diff-tree', '-r', '-z', '--raw', before ?? EMPTY_TREE, after], {
    cwd: gitdir,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: gitdir },
  })
  if (run.status !== 0) return null
  // :100644 100755 <old id> <new id> M\0path\0 for each changed file.
  const fields = run.stdout.split('\0')
  const files: string[] = []
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [, , oldId, newId] = fields[i]!.split(' ')
    if (oldId !== newId) files.push(fields[i + 1]!)
  }
  return files
}

/** Path order as history gives it: names compared as JavaScript strings, level by level. */
function byLevels(a: string, b: string): number {
  const x = a.split('/')
  const y = b.split('/')
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1
  }
  return x.length - y.length
}

/** Whether a version holds an entry git reads and Cairn refuses (a link or a submodule). */
function holdsForeign(spec: Spec): boolean {
  return [...spec.values()].some((node) =>
    node instanceof Map ? holdsForeign(node) : node.kind === 'link' || node.kind === 'gitlink',
  )
}

describe('the files a commit changed, against git diff-tree', () => {
  it("are git's, in path order, each tree read after one pause, on random histories", async () => {
    let round = 0
    await fc.assert(
      fc.asyncProperty(history, async (commits) => {
        const gitdir = path.join(dir, `h${round++}.git`)
        fs.mkdirSync(gitdir)
        gitIn(gitdir, 'init', '--quiet', '--bare')
        const plain = createObjectStore(gitdir)
        try {
          let spec: Spec = new Map()
          let parent: string | null = null
          const made: Array<{ oid: string; spec: Spec; parentSpec: Spec }> = []
          for (const [i, ops] of commits.entries()) {
            const parentSpec = spec
            spec = clone(spec)
            for (const one of ops) apply(spec, one)
            spec = pruned(spec)
            const tree = await writeSpec(plain, spec)
            const text =
              `tree ${tree}\n` +
              (parent ? `parent ${parent}\n` : '') +
              `author Claude <claude@cairn.invalid> ${1_700_000_000 + i} +0000\n` +
              `committer Claude <claude@cairn.invalid> ${1_700_000_000 + i} +0000\n\nstep ${i}\n`
            parent = await plain.write('commit', Buffer.from(text))
            made.push({ oid: parent, spec, parentSpec })
          }
          await plain.flush()
          for (const { oid, spec: after, parentSpec } of made) {
            const commit = await plain.readCommit(oid)
            const before = commit.parent ? (await plain.readCommit(commit.parent)).tree : null
            const byGit = gitChanged(gitdir, before, commit.tree)
            const walk = watched(plain)
            let pauses = 0
            let files: string[] | null
            try {
              const deltas = await diffNodes(
                walk.store,
                before ? treeFromOid(before) : null,
                treeFromOid(commit.tree),
                '',
                [],
                {
                  pause: () => {
                    pauses++
                    return new Promise((resolve) => setImmediate(resolve))
                  },
                },
              )
              files = deltas.map((delta) => delta.path)
            } catch (error) {
              if (!(error instanceof DamagedHistoryError)) throw error
              files = null
            }
            expect(pauses).toBe(walk.reads.length)
            if (files) expect(files).toEqual(byGit && [...byGit].sort(byLevels))
            // Refused only where git cannot read the trees either, or holds what Cairn refuses.
            else if (byGit) expect(holdsForeign(after) || holdsForeign(parentSpec)).toBe(true)
            // The side index keeps those files, or none for damaged trees.
            const expected = indexEntryOf(
              commit,
              parseCommitMessage(commit, commit.message),
              (files ?? []).map(toVirtual),
            )
            expect(await entryFromCommit(plain, oid)).toEqual(expected)
          }
        } finally {
          plain.close()
        }
      }),
      { numRuns: 60 },
    )
  }, 120_000)
})
