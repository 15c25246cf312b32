import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEMP_FILE_PREFIX } from '../lib/folders'
import { DamagedHistoryError, entryNameProblem } from './damage'
import {
  createObjectStore,
  initRepository,
  parseTreeEncoded,
  type EncodedTree,
  type RawTreeEntry,
} from './object-store'

// `parseTreeEncoded` as it was before ASCII names were read without a decoder: every tree,
// well formed or not, must parse to the same entries and offsets, or fail with the same damage.
const CANONICAL_MODES: ReadonlySet<string> = new Set(['100644', '100755', '120000', '40000'])
const utf8 = new TextDecoder('utf-8', { fatal: true })
function referenceParse(oid: string, content: Buffer, foreign = false): EncodedTree {
  const entries: RawTreeEntry[] = []
  const names = new Set<string>()
  let idAt: Map<string, number> | null = new Map()
  let at = 0
  while (at < content.length) {
    const space = content.indexOf(0x20, at)
    const nul = content.indexOf(0, space + 1)
    if (space < 0 || nul < 0 || nul + 21 > content.length) {
      throw new DamagedHistoryError(oid, 'a folder listing that cannot be read')
    }
    const rawMode = content.toString('latin1', at, space)
    let name: string
    try {
      name = utf8.decode(content.subarray(space + 1, nul))
    } catch {
      throw new DamagedHistoryError(oid, 'a file name that is not UTF-8')
    }
    const problem = foreign ? null : entryNameProblem(name)
    if (problem) throw new DamagedHistoryError(oid, problem)
    if (names.has(name)) throw new DamagedHistoryError(oid, `the name "${name}" twice`)
    names.add(name)
    const entryOid = content.toString('hex', nul + 1, nul + 21)
    if (!CANONICAL_MODES.has(rawMode)) idAt = null
    idAt?.set(name, nul + 1)
    at = nul + 21
    if (rawMode === '40000' || rawMode === '040000') {
      entries.push({ name, kind: 'tree', oid: entryOid, mode: '40000' })
    } else if (rawMode === '100644' || rawMode === '100755') {
      entries.push({ name, kind: 'blob', oid: entryOid, mode: rawMode })
    } else if (foreign && (rawMode === '120000' || rawMode === '160000')) {
      entries.push({ name, kind: 'blob', oid: entryOid, mode: rawMode })
    } else {
      throw new DamagedHistoryError(oid, 'a link or submodule, which Cairn never writes')
    }
  }
  return { entries, bytes: content, idAt }
}

type Outcome =
  | { readonly ok: true; readonly entries: RawTreeEntry[]; readonly idAt: unknown }
  | { readonly ok: false; readonly damage: string }

function outcome(parse: () => EncodedTree): Outcome {
  try {
    const { entries, idAt } = parse()
    return { ok: true, entries, idAt: idAt ? [...idAt] : null }
  } catch (error) {
    if (!(error instanceof DamagedHistoryError)) throw error
    return { ok: false, damage: error.detail }
  }
}

const ID = Buffer.from('0123456789abcdef0123456789abcdef01234567', 'hex')

function entryBytes(mode: string, name: Buffer | string): Buffer {
  return Buffer.concat([Buffer.from(`${mode} `), Buffer.from(name), Buffer.from([0]), ID])
}

// Names as bytes: ASCII, UTF-8 of every width, bytes that are not UTF-8 (a lone continuation
// byte, a cut sequence, an overlong form, a surrogate), and names Cairn refuses.
const NAMES: ReadonlyArray<Buffer> = [
  'notes.md',
  'a',
  'Élan.md',
  'naïve',
  '日本語.md',
  '😀.md',
  'x\u0080y',
  '\u00a0',
  '.git',
  'GIT~1',
  `${TEMP_FILE_PREFIX}x`,
  'a\tb',
  'a\x7fb',
  '..',
  '.',
  'back\\slash',
  '',
].map((name) => Buffer.from(name, 'utf8'))
const NOT_UTF8: ReadonlyArray<Buffer> = [
  Buffer.from([0x61, 0x80]),
  Buffer.from([0xc3]),
  Buffer.from([0x61, 0xe6, 0x97]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xff, 0x61]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
]

describe('parseTreeEncoded', () => {
  it('parses crafted trees to the same entries, offsets and damage as before', () => {
    const trees: Buffer[] = []
    const all = [...NAMES, ...NOT_UTF8]
    for (const mode of ['100644', '100755', '40000', '040000', '120000', '160000', '644']) {
      for (const name of all) trees.push(entryBytes(mode, name))
    }
    for (const a of all) {
      for (const b of all)
        trees.push(Buffer.concat([entryBytes('100644', a), entryBytes('40000', b)]))
    }
    // Torn: cut at every byte of a two-entry tree with a UTF-8 name.
    const whole = Buffer.concat([entryBytes('100644', 'Élan.md'), entryBytes('40000', 'dir')])
    for (let cut = 0; cut < whole.length; cut++) trees.push(whole.subarray(0, cut))
    let damaged = 0
    for (const tree of trees) {
      for (const foreign of [false, true]) {
        const expected = outcome(() => referenceParse('t', tree, foreign))
        expect(outcome(() => parseTreeEncoded('t', tree, { foreign }))).toEqual(expected)
        if (!expected.ok) damaged++
      }
    }
    // The crafted set holds both kinds, and the non-UTF-8 names are refused as such.
    expect(damaged).toBeGreaterThan(100)
    expect(damaged).toBeLessThan(trees.length * 2)
    for (const name of NOT_UTF8) {
      expect(outcome(() => parseTreeEncoded('t', entryBytes('100644', name)))).toEqual({
        ok: false,
        damage: 'a file name that is not UTF-8',
      })
    }
  })

  describe('on trees git wrote', () => {
    let dir: string
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-parse-tree-'))
    })
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10 }))

    it('reads the names and ids git ls-tree reports, ASCII and not', async () => {
      const gitdir = path.join(dir, 'history.git')
      await initRepository(gitdir)
      const git = (args: string[], input?: string) =>
        execFileSync('git', ['--git-dir', gitdir, ...args], { input, encoding: 'utf8' })
      const blob = git(['hash-object', '-w', '--stdin'], 'content\n').trim()
      const names = ['notes.md', 'Élan.md', '日本語.md', '😀', 'a b', 'Z', 'zz~1', 'x\u00a0y']
      const sub = git(['mktree'], `100644 blob ${blob}\tinner.md\n`).trim()
      const listing =
        names.map((name) => `100644 blob ${blob}\t${name}\n`).join('') + `040000 tree ${sub}\tdir\n`
      const tree = git(['mktree'], listing).trim()
      const store = createObjectStore(gitdir)
      try {
        const { entries, idAt } = await store.readTreeEncoded(tree)
        const fromGit = git(['ls-tree', '-z', tree])
          .split('\0')
          .filter(Boolean)
          .map((line) => {
            const [meta, name] = line.split('\t') as [string, string]
            const [mode, type, oid] = meta.split(' ') as [string, string, string]
            return { name, kind: type, oid, mode: mode === '040000' ? '40000' : mode }
          })
        expect(entries).toEqual(fromGit)
        expect(entries.map((entry) => entry.name).sort()).toEqual([...names, 'dir'].sort())
        // Each id sits where the offsets say.
        const { bytes } = await store.readTreeEncoded(tree)
        for (const entry of entries) {
          const at = idAt?.get(entry.name) as number
          expect(bytes.toString('hex', at, at + 20)).toBe(entry.oid)
        }
      } finally {
        store.close()
      }
    })
  })
})
