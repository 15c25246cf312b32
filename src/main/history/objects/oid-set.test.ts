import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { OidSet } from './oid-set'

const oid = (n: number) => createHash('sha1').update(String(n)).digest('hex')

describe('OidSet', () => {
  it('holds what was added, once, and nothing else', () => {
    const set = new OidSet()
    const added = Array.from({ length: 20_000 }, (_, i) => oid(i))
    for (const id of added) expect(set.add(id)).toBe(true)
    expect(set.size).toBe(20_000)
    for (const id of added) expect(set.add(id)).toBe(false)
    expect(set.size).toBe(20_000)
    for (let i = 0; i < 20_000; i++) {
      expect(set.has(oid(i))).toBe(true)
      expect(set.has(oid(i + 20_000))).toBe(false)
    }
  })

  it('iterates every id once, by first byte, then in the order they were added', () => {
    const set = new OidSet()
    const added = Array.from({ length: 5_000 }, (_, i) => oid(i))
    for (const id of added) set.add(id)
    const seen = [...set]
    expect(seen).toHaveLength(5_000)
    expect(new Set(seen)).toEqual(new Set(added))
    const expected = [...added].sort((a, b) => a.slice(0, 2).localeCompare(b.slice(0, 2)))
    expect(seen).toEqual(expected)
  })

  it('tells ids apart that share all but their last byte', () => {
    const set = new OidSet()
    const base = 'ab'.repeat(19)
    for (let i = 0; i < 256; i++) set.add(base + i.toString(16).padStart(2, '0'))
    expect(set.size).toBe(256)
    expect(set.has(`${base}ff`)).toBe(true)
    expect(set.has('ab'.repeat(20).replace(/^ab/, 'ac'))).toBe(false)
  })

  it('refuses what is not an object id', () => {
    const set = new OidSet()
    expect(() => set.add('abc')).toThrow(TypeError)
    expect(() => set.has(`${'0'.repeat(39)}z`)).toThrow(TypeError)
    expect(set.size).toBe(0)
  })
})
