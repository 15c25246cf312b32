import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandbox, text, type Sandbox } from './test-support'

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
})
afterEach(async () => {
  await box.cleanup()
})

const pad = (n: number) => String(n).padStart(3, '0')

// The entry paths a listing reply names (the listed folder's own line left out).
function named(reply: string, listed: string): string[] {
  return reply
    .split('\n')
    .slice(2)
    .flatMap((line) => /^\S+\t(\/memories\S*)$/.exec(line)?.[1] ?? [])
    .filter((p) => p !== listed)
}

// Views `listed`, then follows each note's view_range until a page ends without one.
async function readWholeListing(listed: string): Promise<{ replies: string[]; paths: string[] }> {
  const replies: string[] = []
  let range: [number, number] | undefined
  for (let guard = 0; guard < 50; guard++) {
    const result = await box.run({ command: 'view', path: listed, view_range: range })
    expect(result.isError).toBe(false)
    const reply = text(result)
    replies.push(reply)
    const next = /view_range: \[(\d+), (-?\d+)\]\]$/.exec(reply)
    if (!next) break
    range = [Number(next[1]), Number(next[2])]
  }
  return { replies, paths: replies.flatMap((r) => named(r, listed)) }
}

describe('a listing too long for one reply', () => {
  it('names every first-level folder, and its notes lead to every entry exactly once', async () => {
    const expected: string[] = []
    for (let d = 0; d < 40; d++) {
      expected.push(`/memories/topic-${pad(d)}/`)
      for (let f = 0; f < 20; f++) {
        await box.write(`topic-${pad(d)}/note-${pad(f)}.md`, 'x\n')
        expected.push(`/memories/topic-${pad(d)}/note-${pad(f)}.md`)
      }
    }
    const { replies, paths } = await readWholeListing('/memories')
    const first = replies[0]!
    for (let d = 0; d < 40; d++) expect(first).toContain(`\t/memories/topic-${pad(d)}/\n`)
    expect(replies.length).toBeGreaterThan(1)
    for (const reply of replies) expect(reply.length).toBeLessThanOrEqual(16_000)
    expect(first).toMatch(/entries 1 to \d+ of 840 shown/)
    expect([...paths].sort()).toEqual([...expected].sort())
    expect(new Set(paths).size).toBe(paths.length)
    // The last page says what it showed and offers nothing more.
    expect(replies.at(-1)).toMatch(
      /\[Listing of \/memories: entries \d+ to 840 of 840 shown .*\.\]$/,
    )
  })

  it('reaches every note of a flat folder through the view_range its note names', async () => {
    const expected: string[] = []
    for (let i = 0; i < 700; i++) {
      await box.write(`note-${pad(i)}.md`, 'x\n')
      expected.push(`/memories/note-${pad(i)}.md`)
    }
    const first = text(await box.run({ command: 'view', path: '/memories' }))
    const shown = named(first, '/memories').length
    expect(shown).toBeLessThan(700)
    expect(first.endsWith(`To continue, view /memories with view_range: [${shown + 1}, -1]]`)).toBe(
      true,
    )
    const { paths } = await readWholeListing('/memories')
    expect(paths).toEqual(expected)
  })

  it('shows exactly the entries of a bounded view_range, numbered as the first page numbers them', async () => {
    for (let i = 0; i < 700; i++) await box.write(`note-${pad(i)}.md`, 'x\n')
    await box.write('zz-folder/inside.md', 'x\n')
    const page = text(await box.run({ command: 'view', path: '/memories', view_range: [3, 7] }))
    expect(named(page, '/memories')).toEqual(
      [3, 4, 5, 6, 7].map((i) => `/memories/note-${pad(i - 1)}.md`),
    )
    expect(page.split('\n')[1]).toMatch(/^\S+\t\/memories$/)
    expect(page).toMatch(/\[Listing of \/memories: entries 3 to 7 of 702 shown .*\.\]$/)
    // First-level entries come before any folder's contents.
    const tail = text(await box.run({ command: 'view', path: '/memories', view_range: [700, -1] }))
    expect(named(tail, '/memories')).toEqual([
      '/memories/note-699.md',
      '/memories/zz-folder/',
      '/memories/zz-folder/inside.md',
    ])
  })

  it('refuses a view_range past the listing with the range of its entries', async () => {
    for (let i = 0; i < 700; i++) await box.write(`note-${pad(i)}.md`, 'x\n')
    const result = await box.run({ command: 'view', path: '/memories', view_range: [701, -1] })
    expect(result.isError).toBe(true)
    expect(result.errorCode).toBe('invalid-range')
    expect(text(result)).toBe(
      'Error: Invalid `view_range`: [701, -1]. Its first element `701` should be within the range of entries of the listing: [1, 700]',
    )
  })
})

describe('a listing that fits in one reply', () => {
  it('stays whole and in the official order, with or without a view_range', async () => {
    await box.write('b/one.md', '1')
    await box.write('a.md', 'a')
    await box.write('c/two.md', '2')
    await fs.mkdir(path.join(box.root, 'b', 'sub'))
    const plain = text(await box.run({ command: 'view', path: '/memories' }))
    expect(named(plain, '/memories')).toEqual([
      '/memories/a.md',
      '/memories/b/',
      '/memories/b/one.md',
      '/memories/b/sub/',
      '/memories/c/',
      '/memories/c/two.md',
    ])
    expect(plain).not.toContain('[Listing')
    const ranged = text(await box.run({ command: 'view', path: '/memories', view_range: [2, 3] }))
    expect(ranged).toBe(plain)
  })
})
