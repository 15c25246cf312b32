import { describe, expect, it } from 'vitest'
import { TEMP_FILE_PREFIX } from '../lib/folders'
import { entryNameProblem } from './damage'
import { isUntracked } from './work-tree'

// `entryNameProblem` as it was before its fast path for plain names: the fast path must give
// the same answer for every name, so this reference is kept here, word for word.
const CONTROL = /\p{Cc}/u
function referenceProblem(name: string): string | null {
  if (name === '') return 'an entry without a name'
  if (name === '.' || name === '..') return `an entry named "${name}"`
  if (name.includes('/') || name.includes('\\')) return 'an entry whose name holds a path separator'
  if (CONTROL.test(name)) return 'an entry whose name holds a control character'
  const folded = name.toLowerCase().replace(/[. ]+$/, '')
  if (folded === '.git' || /^git~\d+$/.test(folded)) return 'an entry named ".git"'
  if (name.startsWith(TEMP_FILE_PREFIX)) return "an entry named like one of Cairn's temp files"
  return null
}

// Pieces names are built from: the characters and words each check looks for, in both
// cases, and characters whose lower case is not themselves or not one character.
const PIECES = [
  'a',
  'z',
  'A',
  'g',
  'G',
  'i',
  'I',
  't',
  'T',
  '~',
  '0',
  '1',
  '9',
  '.',
  ' ',
  '-',
  '_',
  'x',
  '/',
  '\\',
  '\0',
  '\t',
  '\n',
  '\r',
  '\x1b',
  '\x1f',
  '\x7f',
  '\x80',
  '\x85',
  '\x9f',
  '\xa0',
  'é',
  'İ',
  'ı',
  '\u212a',
  'ǧ',
  'Σ',
  '\u0307',
  '\u200b',
  '\ufeff',
  '\ud83d\ude00',
  '\ud800',
  '\udfff',
  'git',
  'GIT',
  'Git',
  '.git',
  '.GIT',
  'git~1',
  'GIT~12',
  TEMP_FILE_PREFIX,
  '.cairn-tmp',
  'notes.md',
  'memory',
]

// A small deterministic generator (mulberry32): the same names on every run.
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

// Every name whose answer differs from the reference's (escaped, so control characters show).
function mismatches(names: ReadonlyArray<string>): string[] {
  const wrong: string[] = []
  for (const name of names) {
    const expected = referenceProblem(name)
    if (entryNameProblem(name) !== expected || isUntracked(name) !== (expected !== null)) {
      wrong.push(JSON.stringify(name))
    }
  }
  return wrong
}

describe('entryNameProblem', () => {
  it('answers every single UTF-16 code unit as the full check does', () => {
    const names = Array.from({ length: 0x10000 }, (_, code) => String.fromCharCode(code))
    expect(names).toHaveLength(0x10000)
    expect(mismatches(names)).toEqual([])
  })

  it('answers every pair and every pair + "t~1" of the pieces as the full check does', () => {
    const names: string[] = ['']
    for (const a of PIECES) {
      for (const b of PIECES) names.push(a + b, `${a}${b}t~1`, `${a}${b}T~1. .`, `${a}${b}`)
    }
    expect(mismatches(names)).toEqual([])
  })

  it('answers the spellings of .git, git~N and temp names as the full check does', () => {
    const names: string[] = []
    for (const base of ['.git', '.Git', '.gIT', 'git~1', 'Git~2', 'GIT~10', 'gIt~', 'git~x']) {
      for (const tail of ['', '.', ' ', '. ', ' .', '..', '  ', 'a', '.md', '\u0307']) {
        for (const head of ['', ' ', 'x', '\u212a', 'İ', '.']) names.push(head + base + tail)
      }
    }
    for (const tail of ['', 'x', 'abc.md', '\n', '/a']) names.push(TEMP_FILE_PREFIX + tail)
    // Names the refusal is about, and plain ones, answered as expected (not only alike).
    expect(mismatches(names)).toEqual([])
    for (const refused of ['.git', '.GIT. ', 'GIT~1', 'git~12..', `${TEMP_FILE_PREFIX}x`]) {
      expect(entryNameProblem(refused)).not.toBeNull()
    }
    for (const plain of ['notes.md', 'general.md', 'Gift ideas', 'gitlog.md', 'Élan', 'x.git']) {
      expect(entryNameProblem(plain)).toBeNull()
    }
  })

  it('answers 200,000 random names of the pieces as the full check does', () => {
    const next = random(15)
    const names: string[] = []
    for (let n = 0; n < 200_000; n++) {
      let name = ''
      const parts = Math.floor(next() * 7)
      for (let p = 0; p < parts; p++) name += PIECES[Math.floor(next() * PIECES.length)]
      names.push(name)
    }
    expect(new Set(names).size).toBeGreaterThan(100_000)
    expect(mismatches(names)).toEqual([])
  })
})
