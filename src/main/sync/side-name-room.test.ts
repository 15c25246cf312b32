import { describe, expect, it, vi } from 'vitest'
import { parseMemoryPath } from '../memory'
import { sideName } from './merge-trees'

// The old search never ended (sync hung the main process for good): every name it tries goes
// through the path rules, so rules that stop answering past any bound a finite search needs
// turn that into a failure instead of a hung test run.
const budget = vi.hoisted(() => ({ left: Infinity }))
vi.mock('../memory', async (original) => {
  const real = await original<typeof import('../memory')>()
  return {
    ...real,
    parseMemoryPath: (path: string) => {
      if (--budget.left < 0) throw new Error('sideName keeps searching')
      return real.parseMemoryPath(path)
    },
  }
})

describe('sideName with no room left (hunt13-followups D2)', () => {
  // /memories/ + dir + one character = 512: a room of one character.
  const dir = `${['a', 'b', 'c', 'd'].map((c) => c.repeat(120)).join('/')}/${'e'.repeat(16)}/`
  const bounded = <T>(run: () => T): T => {
    budget.left = 100_000
    try {
      return run()
    } finally {
      budget.left = Infinity
    }
  }

  it('ends, with a free name the rules accept, when the short numbers are taken', () => {
    expect(`/memories/${dir}a`).toHaveLength(512)
    const taken = new Map<string, unknown>([[`${dir}a`, null]])
    for (let n = 1; n < 36; n++) taken.set(`${dir}${n.toString(36)}`, null)
    const name = bounded(() => sideName(`${dir}a`, 'laptop', taken))
    expect(name.slice(0, dir.length)).toBe(dir)
    expect(taken.has(name)).toBe(false)
    expect(parseMemoryPath(`/memories/${name}`)).toMatchObject({ ok: true })
  })

  it('takes no name a folder holds', () => {
    const taken = new Map<string, unknown>([[`${dir}a`, null]])
    for (let n = 2; n < 36; n++) taken.set(`${dir}${n.toString(36)}`, null)
    taken.set(`${dir}1/inner.md`, null)
    const name = bounded(() => sideName(`${dir}a`, 'laptop', taken))
    expect(name).not.toBe(`${dir}1`)
    expect(taken.has(name)).toBe(false)
    expect(parseMemoryPath(`/memories/${name}`)).toMatchObject({ ok: true })
  })

  it('refuses with a clear error when every name that fits is taken', () => {
    const taken = new Map<string, unknown>()
    for (const c of "0123456789abcdefghijklmnopqrstuvwxyz_-+=@!#$&'(),;[]^{}~") {
      taken.set(`${dir}${c}`, null)
    }
    expect(() => bounded(() => sideName(`${dir}a`, 'laptop', taken))).toThrow(
      /no free name left for the other machine’s copy/,
    )
  })

  it('ends in a room of two characters with every number of two taken', () => {
    const deep = `${dir.slice(0, -2)}/`
    expect(`/memories/${deep}ab`).toHaveLength(512)
    const taken = new Map<string, unknown>()
    for (let n = 1; n < 36 * 36; n++) taken.set(`${deep}${n.toString(36)}`, null)
    const name = bounded(() => sideName(`${deep}ab`, 'laptop', taken))
    expect(taken.has(name)).toBe(false)
    expect(name.length - deep.length).toBeLessThanOrEqual(2)
    expect(parseMemoryPath(`/memories/${name}`)).toMatchObject({ ok: true })
  })
})
