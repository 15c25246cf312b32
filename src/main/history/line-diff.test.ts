import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { diffLines, LineTable, splitLines, type Hunk, type Lines } from './line-diff'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-line-diff-'))
})
afterAll(() => rm(dir, { recursive: true, force: true, maxRetries: 10 }))

/** The hunks `git diff --no-index -U0` finds (indent heuristic off), 0-based. */
async function gitHunks(before: string, after: string): Promise<Hunk[]> {
  const a = path.join(dir, 'a')
  const b = path.join(dir, 'b')
  await writeFile(a, before)
  await writeFile(b, after)
  let out = ''
  try {
    execFileSync(
      'git',
      ['diff', '--no-index', '--no-color', '-U0', '--no-indent-heuristic', '--', a, b],
      { encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir } },
    )
  } catch (error) {
    // Exit status 1 means "the files differ", with the diff on stdout.
    out = (error as { stdout: string }).stdout
  }
  const hunks: Hunk[] = []
  for (const line of out.split('\n')) {
    const match = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line)
    if (!match) continue
    const oldCount = match[2] === undefined ? 1 : Number(match[2])
    const newCount = match[4] === undefined ? 1 : Number(match[4])
    const oldLine = Number(match[1])
    const newLine = Number(match[3])
    hunks.push({
      oldStart: oldCount === 0 ? oldLine : oldLine - 1,
      oldCount,
      newStart: newCount === 0 ? newLine : newLine - 1,
      newCount,
    })
  }
  return hunks
}

const bytes = (text: string) => new TextEncoder().encode(text)

function seeded(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
    return state / 2_147_483_648
  }
}

/** A text and an edited copy: lines from a small alphabet (so many repeat), edited at random. */
function randomPair(random: () => number): [string, string] {
  const alphabet = ['', 'a', 'b', 'c', '}', '  x = 1', '# title', 'the end']
  const pick = () => alphabet[Math.floor(random() * alphabet.length)] as string
  const fresh = () => `line ${Math.floor(random() * 1e6)}`
  const lines = Array.from({ length: Math.floor(random() * 30) }, () =>
    random() < 0.5 ? pick() : fresh(),
  )
  const edited = [...lines]
  const edits = Math.floor(random() * 6)
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(random() * (edited.length + 1))
    const kind = random()
    if (kind < 0.3) edited.splice(at, 0, random() < 0.5 ? pick() : fresh())
    else if (kind < 0.55) edited.splice(at, 1)
    else if (kind < 0.8) edited[at] = random() < 0.5 ? pick() : fresh()
    else {
      // Move a block of lines elsewhere.
      const [moved] = edited.splice(at, 1)
      if (moved !== undefined) edited.splice(Math.floor(random() * (edited.length + 1)), 0, moved)
    }
  }
  const ending = (list: string[]) => list.join('\n') + (random() < 0.85 ? '\n' : '')
  return [ending(lines), ending(edited)]
}

describe('the line diff', () => {
  it('splits lines with their newlines, the last one possibly without', () => {
    const lines = splitLines(bytes('a\nbb\nc'))
    expect(lines.count).toBe(3)
    expect([...lines.starts]).toEqual([0, 2, 5, 6])
    expect(splitLines(bytes('')).count).toBe(0)
    expect(splitLines(bytes('\n\n')).count).toBe(2)
  })

  it('finds nothing between equal texts and a plain edit in between', () => {
    expect(diffLines(bytes('a\nb\n'), bytes('a\nb\n'))).toEqual([])
    expect(diffLines(bytes('a\nb\nc\n'), bytes('a\nB\nc\n'))).toEqual([
      { oldStart: 1, oldCount: 1, newStart: 1, newCount: 1 },
    ])
  })

  it('tells a last line without a newline from the same line with one', () => {
    expect(diffLines(bytes('a\nb'), bytes('a\nb\n'))).toEqual([
      { oldStart: 1, oldCount: 1, newStart: 1, newCount: 1 },
    ])
  })

  it('agrees with git diff on random edits, moves and repeated lines', async () => {
    const random = seeded(7)
    for (let round = 0; round < 250; round++) {
      const [before, after] = randomPair(random)
      const ours = diffLines(bytes(before), bytes(after))
      expect(ours, JSON.stringify({ before, after })).toEqual(await gitHunks(before, after))
    }
  })

  it('agrees with git diff past its cost limits and its common-tail trimming', async () => {
    const random = seeded(99)
    for (let round = 0; round < 6; round++) {
      const size = 800 + Math.floor(random() * 800)
      const base = Array.from({ length: size }, (_, i) =>
        random() < 0.2 ? '' : `row ${i % 97} ${random() < 0.5 ? 'x' : 'y'}`,
      )
      const edited = base.map((line) => (random() < 0.35 ? `changed ${random()}` : line))
      for (let k = 0; k < 40; k++) {
        edited.splice(Math.floor(random() * edited.length), 0, `new ${random()}`)
      }
      const before = `${base.join('\n')}\n`
      const after = `${edited.join('\n')}\n${'unchanged tail line\n'.repeat(200)}`
      const beforeWithTail = `${before}${'unchanged tail line\n'.repeat(200)}`
      expect(diffLines(bytes(beforeWithTail), bytes(after))).toEqual(
        await gitHunks(beforeWithTail, after),
      )
    }
  })

  it('splits a version like its neighbour exactly as it splits it on its own', () => {
    const random = seeded(31)
    const table = new LineTable()
    const texts = (lines: Lines) => {
      const text = Buffer.from(lines.bytes).toString('latin1')
      return Array.from({ length: lines.count }, (_, i) =>
        text.slice(lines.starts[i], lines.starts[i + 1]),
      )
    }
    for (let round = 0; round < 400; round++) {
      const [before, edited] = randomPair(random)
      let after = edited
      // Some texts that differ only around a last line without a newline, or not at all.
      if (round % 10 === 0) after = before.endsWith('\n') ? before.slice(0, -1) : `${before}é\n`
      if (round % 10 === 1) after = before
      const like = table.split(bytes(before))
      const derived = table.splitLike(bytes(after), like)
      const whole = table.split(bytes(after))
      expect([...derived.starts], JSON.stringify({ before, after })).toEqual([...whole.starts])
      expect([...(derived.ids ?? [])]).toEqual([...(whole.ids ?? [])])
      // One id per distinct line, across both texts.
      const all = [...texts(like), ...texts(derived)]
      const ids = [...(like.ids ?? []), ...(derived.ids ?? [])]
      const idOf = new Map<string, number>()
      const textOf = new Map<number, string>()
      all.forEach((text, i) => {
        const id = ids[i] as number
        expect(idOf.get(text) ?? id).toBe(id)
        expect(textOf.get(id) ?? text).toBe(text)
        idOf.set(text, id)
        textOf.set(id, text)
      })
    }
  })

  it('diffs a version split like its neighbour exactly as it diffs the two split apart', () => {
    // `splitLike` hands `diffLines` the length of the common end it found, in place of the
    // search of 1 KiB blocks from the end (which decides the lines git leaves out): long
    // common ends (several KiB, many lines, some repeated) and files of up to 3,000 lines,
    // past the diff's kept per-line arrays, both ways round.
    const random = seeded(77)
    const filler = (n: number) =>
      Array.from({ length: n }, (_, i) => (i % 7 === 0 ? '' : `filler line ${i % 13}`))
    let sharedUsed = 0
    for (let round = 0; round < 300; round++) {
      const [before, edited] = randomPair(random)
      const head = filler(Math.floor(random() * (round % 5 === 0 ? 1500 : 100))).join('\n')
      const tail = filler(Math.floor(random() * (round % 3 === 0 ? 1500 : 200))).join('\n')
      const whole = (middle: string) => `${head}\n${middle}\n${tail}${round % 4 === 0 ? '' : '\n'}`
      const table = new LineTable()
      const newer = table.split(bytes(whole(edited)))
      const older = table.splitLike(bytes(whole(before)), newer)
      if (older.sharedEnd !== undefined) sharedUsed++
      const apart = new LineTable()
      const newerApart = apart.split(bytes(whole(edited)))
      const olderApart = apart.split(bytes(whole(before)))
      const context = JSON.stringify({ round, before, edited })
      expect(diffLines(older, newer), context).toEqual(diffLines(olderApart, newerApart))
      expect(diffLines(newer, older), context).toEqual(diffLines(newerApart, olderApart))
    }
    // The common end was handed over in most rounds (not where one text is the end of the
    // other, nor where the two are equal).
    expect(sharedUsed).toBeGreaterThan(150)
  })

  it('diffs texts longer than the arrays it keeps between diffs, and short ones after them', () => {
    const long = Array.from({ length: 70_000 }, (_, i) => `line ${i}\n`)
    const edited = [...long]
    edited[40_000] = 'changed\n'
    edited.splice(65_000, 0, 'added\n')
    const table = new LineTable()
    const newer = table.split(bytes(edited.join('')))
    const older = table.splitLike(bytes(long.join('')), newer)
    expect(diffLines(older, newer)).toEqual([
      { oldStart: 40_000, oldCount: 1, newStart: 40_000, newCount: 1 },
      { oldStart: 65_000, oldCount: 0, newStart: 65_000, newCount: 1 },
    ])
    expect(diffLines(bytes('a\nb\nc\n'), bytes('a\nB\nc\n'))).toEqual([
      { oldStart: 1, oldCount: 1, newStart: 1, newCount: 1 },
    ])
  })

  it('agrees with git diff along random histories split version by version, as blame does', async () => {
    const random = seeded(2024)
    const alphabet = ['', '}', 'same', '# heading', '  - item']
    for (let history = 0; history < 6; history++) {
      // Versions newest first, each split like the one after it (the walk goes back in time).
      let content = Array.from({ length: 40 + Math.floor(random() * 200) }, (_, i) =>
        random() < 0.3 ? (alphabet[i % alphabet.length] as string) : `fact ${history}.${i}`,
      )
      const versions: string[] = []
      for (let v = 0; v < 12; v++) {
        versions.push(`${content.join('\n')}${random() < 0.9 ? '\n' : ''}`)
        content = [...content]
        for (let e = Math.floor(random() * 4); e >= 0; e--) {
          const at = Math.floor(random() * (content.length + 1))
          const roll = random()
          const line =
            random() < 0.4 ? (alphabet[Math.floor(random() * 5)] as string) : `new ${random()}`
          if (roll < 0.35) content.splice(at, 0, line)
          else if (roll < 0.6) content.splice(at, Math.ceil(random() * 3))
          else content[at] = line
        }
      }
      const table = new LineTable()
      let newer = table.split(bytes(versions[0] as string))
      for (let v = 1; v < versions.length; v++) {
        const older = table.splitLike(bytes(versions[v] as string), newer)
        const label = JSON.stringify({ history, v })
        expect(diffLines(older, newer), label).toEqual(
          await gitHunks(versions[v] as string, versions[v - 1] as string),
        )
        newer = older
      }
    }
  })
})
