import { execFileSync } from 'node:child_process'
import { cpSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { gitIn, tempDataDir } from '../test-helpers'
import { ObjectDatabase } from './object-database'
import { repack } from './repack'

// The pack walk reads trees in place (tree-bytes.ts) where it used to parse each into entries
// (stop 18). Same walk, same pack: for histories with every turn a tree can take between two
// versions — a file become a folder of the same name and back (with the same id, even), a
// mode changed alone, names that sort around '/', trees out of git's order, links,
// submodules, names that are not ASCII, a tree no parse takes — both walks must write the
// same pack, byte for byte (its name is its checksum), and git must read it.

let dir: string
let cleanup: () => Promise<void>
let gitdir: string

beforeEach(async () => {
  ;({ dir, cleanup } = await tempDataDir())
  gitdir = path.join(dir, 'history.git')
  execFileSync('git', ['init', '--quiet', '--bare', gitdir])
})
afterEach(() => cleanup())

const git = (...args: string[]) => gitIn(gitdir, ...args)

function write(type: 'blob' | 'tree', content: Buffer): string {
  return execFileSync(
    'git',
    ['--git-dir', gitdir, 'hash-object', '--literally', '-t', type, '-w', '--stdin'],
    { input: content, encoding: 'utf8' },
  ).trim()
}

const blob = (text: string) =>
  write(
    'blob',
    Buffer.from(`${text}\n${'Some notes the walk packs as deltas of each other.\n'.repeat(6)}`),
  )

type Entry = readonly [mode: string, name: string, oid: string]

// Git's order: names bytewise, a folder's as if followed by '/'.
const key = ([mode, name]: Entry) =>
  Buffer.from(mode === '40000' || mode === '040000' ? `${name}/` : name, 'utf8')

/** A tree of `entries`, in git's order unless `asGiven`; anything git would refuse too. */
function tree(entries: ReadonlyArray<Entry>, asGiven = false): string {
  const ordered = asGiven ? entries : [...entries].sort((a, b) => Buffer.compare(key(a), key(b)))
  return write(
    'tree',
    Buffer.concat(
      ordered.map(([mode, name, oid]) =>
        Buffer.concat([Buffer.from(`${mode} ${name}\0`, 'utf8'), Buffer.from(oid, 'hex')]),
      ),
    ),
  )
}

let parent: string | null = null
function commit(treeOid: string): string {
  const args = ['commit-tree', treeOid, ...(parent ? ['-p', parent] : [])]
  parent = git(...args, '-m', `commit ${treeOid.slice(0, 7)}`).trim()
  return parent
}

/** Packs a copy of the history each way; returns the two packs' names. */
async function packBothWays(tip: string): Promise<[string, string]> {
  const names: string[] = []
  for (const parseTrees of [false, true]) {
    const copy = path.join(dir, `copy-${parseTrees}`)
    cpSync(gitdir, copy, { recursive: true })
    const db = new ObjectDatabase(copy)
    try {
      const report = await repack(db, [tip], { parseTrees })
      expect(report.unreadable).toEqual([])
      expect(report.pack).not.toBeNull()
      names.push(report.pack!.name)
    } finally {
      db.close()
    }
    // git reads every object of it, and finds it whole.
    const idx = readdirSync(path.join(copy, 'objects', 'pack')).find((n) => n.endsWith('.idx'))!
    execFileSync('git', ['--git-dir', copy, 'verify-pack', path.join(copy, 'objects', 'pack', idx)])
    expect(git('cat-file', '--batch-all-objects', '--batch-check').split('\n').length).toBe(
      execFileSync('git', ['--git-dir', copy, 'cat-file', '--batch-all-objects', '--batch-check'], {
        encoding: 'utf8',
      }).split('\n').length,
    )
  }
  return names as [string, string]
}

describe('the pack walk over trees read in place', () => {
  it('writes the same pack as the walk over parsed trees', async () => {
    parent = null
    const notes = (n: number) => blob(`notes ${n}`)
    const inner = (n: number) => tree([['100644', 'x.md', notes(100 + n)]])
    // 1: the start; names around '/': `a`, `a-c`, `a.b`, `a0` and, later, the folder `a`.
    commit(
      tree([
        ['100644', 'a.md', notes(1)],
        ['100644', 'a', notes(2)],
        ['100644', 'a.b', notes(3)],
        ['40000', 'dir', inner(1)],
      ]),
    )
    // 2: a mode changed alone; a file inside a folder changed; a name added between others.
    commit(
      tree([
        ['100755', 'a.md', notes(1)],
        ['100644', 'a', notes(2)],
        ['100644', 'a-c', notes(4)],
        ['100644', 'a.b', notes(3)],
        ['40000', 'dir', inner(2)],
      ]),
    )
    // 3: the file `a` become a folder `a`.
    const folderA = tree([
      ['100644', 'y.md', notes(5)],
      ['100644', 'a', notes(6)],
    ])
    commit(
      tree([
        ['100755', 'a.md', notes(1)],
        ['40000', 'a', folderA],
        ['100644', 'a-c', notes(4)],
        ['100644', 'a.b', notes(7)],
        ['40000', 'dir', inner(2)],
      ]),
    )
    // 4: the folder `a` a file again, listed with the folder's own id (made elsewhere).
    commit(
      tree([
        ['100755', 'a.md', notes(1)],
        ['100644', 'a', folderA],
        ['100644', 'a-c', notes(4)],
        ['40000', 'dir', inner(3)],
        ['40000', 'a0', inner(4)],
      ]),
    )
    // 5: a folder with a file's id, and the other way round; an empty folder.
    const q = notes(8)
    commit(
      tree([
        ['100644', 'a.md', notes(9)],
        ['40000', 'q', q],
        ['100644', 'r', inner(5)],
        ['40000', 'empty', tree([])],
        ['40000', 'dir', inner(3)],
      ]),
    )
    commit(
      tree([
        ['100644', 'a.md', notes(9)],
        ['100644', 'q', q],
        ['40000', 'r', inner(5)],
        ['40000', 'dir', inner(6)],
      ]),
    )
    // 6: a root tree out of git's order, then a folder out of order under a sorted root.
    commit(
      tree(
        [
          ['100644', 'z.md', notes(10)],
          ['100644', 'a.md', notes(11)],
          ['40000', 'dir', inner(7)],
        ],
        true,
      ),
    )
    commit(
      tree([
        ['100644', 'z.md', notes(10)],
        ['100644', 'a.md', notes(12)],
        [
          '40000',
          'dir',
          tree(
            [
              ['100644', 'y.md', notes(13)],
              ['100644', 'x.md', notes(107)],
            ],
            true,
          ),
        ],
      ]),
    )
    // 7: a link, a submodule, names that are not ASCII, the old-style folder mode.
    commit(
      tree([
        ['120000', 'link', blob('a.md')],
        ['160000', 'module', 'f'.repeat(40)],
        ['100644', 'é.md', notes(14)],
        ['100644', 'café', notes(15)],
        ['040000', 'dir', inner(8)],
      ]),
    )
    // 8: a tree no parse takes (a name twice; a name that is not UTF-8), then a sound one.
    commit(
      tree(
        [
          ['100644', 'a.md', notes(16)],
          ['100644', 'a.md', notes(17)],
        ],
        true,
      ),
    )
    commit(
      write(
        'tree',
        Buffer.concat([
          Buffer.from('100644 '),
          Buffer.from([0xc3, 0x28]),
          Buffer.from([0]),
          Buffer.from(notes(18), 'hex'),
        ]),
      ),
    )
    const tip = commit(
      tree([
        ['100644', 'a.md', notes(19)],
        ['100644', 'é.md', notes(14)],
        ['40000', 'dir', inner(9)],
      ]),
    )

    const [inPlace, parsed] = await packBothWays(tip)
    expect(inPlace).toBe(parsed)
  })

  it('writes the same pack for a folder of many files that doubles, some become folders', async () => {
    // Each added entry is looked for in the base as the other kind (a file become a folder):
    // a search by name, not a scan of the base from its start (review18-maint R1).
    parent = null
    const count = 400
    const one = blob('one note')
    const two = blob('another note')
    const inner = tree([['100644', 'in.md', blob('inner')]])
    // Every 50th name a file holding a folder's id that becomes a folder with that id (its
    // tree then needs no walk, as with parsed trees), then a file again.
    const files = Array.from(
      { length: count },
      (_, i) => ['100644', `note-${i}`, i % 50 === 0 ? inner : one] as Entry,
    )
    commit(tree([['40000', 'notes', tree(files)]]))
    const doubled: Entry[] = [
      ...files.map(([mode, name, oid], i) => [i % 50 === 0 ? '40000' : mode, name, oid] as Entry),
      ...Array.from({ length: count }, (_, i) => ['100644', `note-${i}.md`, two] as Entry),
      ...Array.from({ length: count / 50 }, (_, i) => ['40000', `note-${i}-dir`, inner] as Entry),
    ]
    commit(tree([['40000', 'notes', tree(doubled)]]))
    const again = [...files, ['100644', 'note-0-dir', inner] as Entry]
    const tip = commit(tree([['40000', 'notes', tree(again)]]))

    const [inPlace, parsed] = await packBothWays(tip)
    expect(inPlace).toBe(parsed)
  })

  it('writes the same pack with a file "x/" beside a folder "x" (the same key)', async () => {
    // git never writes a name with '/', but a tree made elsewhere may hold one and parseTree
    // takes it: the file `x/` and the folder `x` are two entries, never the same one.
    parent = null
    const notes = (n: number) => blob(`notes ${n}`)
    const inner = (n: number) => tree([['100644', 'in.md', notes(100 + n)]])
    const kept = inner(1)
    // 1: a file `x/` holding a folder's id; 2: the folder `x` with that id (another entry:
    // its tree is walked, not taken as the file's unchanged).
    commit(
      tree([
        ['100644', 'top.md', notes(1)],
        ['100644', 'x/', kept],
      ]),
    )
    commit(
      tree([
        ['100644', 'top.md', notes(1)],
        ['40000', 'x', kept],
      ]),
    )
    // 3: both, the file first (git's order here); 4: both, the folder first (out of order).
    commit(
      tree(
        [
          ['100644', 'top.md', notes(2)],
          ['100644', 'x/', notes(3)],
          ['40000', 'x', inner(2)],
        ],
        true,
      ),
    )
    commit(
      tree(
        [
          ['100644', 'top.md', notes(2)],
          ['40000', 'x', inner(3)],
          ['100644', 'x/', notes(4)],
        ],
        true,
      ),
    )
    // 5: the reviewer's case; 6: the file `x/` alone, with the folder's last id.
    commit(
      tree(
        [
          ['100644', 'top.md', notes(5)],
          ['100644', 'x/', notes(6)],
          ['40000', 'x', inner(4)],
        ],
        true,
      ),
    )
    const tip = commit(
      tree([
        ['100644', 'top.md', notes(5)],
        ['100644', 'x/', inner(4)],
      ]),
    )

    const [inPlace, parsed] = await packBothWays(tip)
    expect(inPlace).toBe(parsed)
  })
})
