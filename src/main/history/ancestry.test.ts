import { createHash } from 'node:crypto'
import { mkdtempSync, openSync, closeSync, rmSync, writeSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createAncestry, timelineOrder } from './ancestry'
import { IndexDamagedError, IndexFile, writeIndex } from './index-file'
import type { IndexEntry } from './side-index'

/** A made-up commit id for a commit named `name`. */
const id = (name: string) => createHash('sha1').update(name).digest('hex')

/** A commit of a made-up history: parents by name, `time` in minutes. */
function commit(
  name: string,
  parents: ReadonlyArray<string>,
  time: number,
  files: ReadonlyArray<string> = [],
): IndexEntry {
  const [parent = null, ...others] = parents.map(id)
  return {
    oid: id(name),
    parent,
    ...(others.length > 0 ? { otherParents: others } : {}),
    time: time * 60_000,
    actor: 'claude',
    command: others.length > 0 ? 'merge' : 'str_replace',
    subject: name,
    paths: files,
    conversationId: null,
    toolUseId: null,
    overwrite: false,
    restoredFrom: null,
    files,
  }
}

const dirs: string[] = []
const opened: IndexFile[] = []
afterEach(() => {
  for (const index of opened.splice(0)) index.close()
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
})

/** A real side index on disk holding `entries`, oldest first. */
function indexOf(entries: ReadonlyArray<IndexEntry>): IndexFile {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-ancestry-'))
  dirs.push(dir)
  writeIndex(path.join(dir, 'index'), entries)
  const index = IndexFile.open(path.join(dir, 'index'))
  opened.push(index)
  return index
}

const nameOf = (index: IndexFile, position: number) => index.at(position).subject

const shown = (index: IndexFile) =>
  Array.from(timelineOrder(index))
    .reverse()
    .map((p) => nameOf(index, p))

describe('the timeline’s order', () => {
  it('keeps a line of commits as it is, whatever their clocks said', () => {
    const index = indexOf([commit('a', [], 5), commit('b', ['a'], 1), commit('c', ['b'], 9)])
    expect(shown(index)).toEqual(['c', 'b', 'a'])
  })

  it('interleaves two machines by time, and never shows a commit below its parent', () => {
    // Index order: this machine's line first, then the other's, then the merge (sync's order).
    const index = indexOf([
      commit('base', [], 0),
      commit('mine-1', ['base'], 10),
      commit('mine-2', ['mine-1'], 30),
      commit('theirs-1', ['base'], 20),
      // A clock running ahead: newer than the merge that joins it.
      commit('theirs-2', ['theirs-1'], 99),
      commit('merge', ['mine-2', 'theirs-2'], 40),
    ])
    expect(shown(index)).toEqual(['merge', 'theirs-2', 'mine-2', 'theirs-1', 'mine-1', 'base'])
  })

  it('grows a line on top of a merged history the same as ordering it anew', () => {
    const index = indexOf([
      commit('base', [], 0),
      commit('mine', ['base'], 10),
      commit('theirs', ['base'], 5),
      commit('merge', ['mine', 'theirs'], 20),
    ])
    const ancestry = createAncestry(() => index)
    const list = (order: ReturnType<typeof ancestry.newestFirst>) =>
      Array.from({ length: order.length }, (_, k) => nameOf(index, order.at(k)))
    expect(list(ancestry.newestFirst())).toEqual(['merge', 'mine', 'theirs', 'base'])
    index.append(commit('next', ['merge'], 3))
    const after = ancestry.newestFirst()
    expect(list(after)).toEqual(shown(index))
    expect(after.indexOf(2)).toBe(3)
  })
})

describe('the timeline’s order, as asked for', () => {
  // Two machines joined by a merge, then a line of commits with clocks all over the place.
  const history = [
    commit('base', [], 0),
    commit('mine-1', ['base'], 10),
    commit('theirs-1', ['base'], 20),
    commit('mine-2', ['mine-1'], 30),
    commit('theirs-2', ['theirs-1'], 99),
    commit('merge', ['mine-2', 'theirs-2'], 40),
    commit('after-1', ['merge'], 5),
    commit('after-2', ['after-1'], 200),
    commit('after-3', ['after-2'], 1),
  ]
  it('keeps showing the history as it was when asked for, after commits are appended', () => {
    const index = indexOf(history)
    const whole = Array.from(timelineOrder(index)).reverse()
    const order = createAncestry(() => index).newestFirst()
    expect(order.at(0)).toBe(8)
    index.append(commit('later', ['after-3'], 300))
    expect(order.length).toBe(history.length)
    expect(Array.from({ length: order.length }, (_, k) => order.at(k))).toEqual(whole)
    expect(order.indexOf(9)).toBe(-1)
  })
})

describe('ancestry', () => {
  it('finds the change that produced a file along first parents, past other machines’', () => {
    const index = indexOf([
      commit('base', [], 0, ['/memories/a.md', '/memories/b.md']),
      commit('mine', ['base'], 1, ['/memories/b.md']),
      // The other machine changed a.md; the merge took it (a.md changed against `mine`).
      commit('theirs', ['base'], 2, ['/memories/a.md']),
      commit('merge', ['mine', 'theirs'], 3, ['/memories/a.md']),
    ])
    const ancestry = createAncestry(() => index)
    expect(ancestry.producerOf('/memories/b.md', 3)).toBe(1)
    expect(ancestry.producerOf('/memories/a.md', 3)).toBe(3)
    // From `mine`, the other machine's change to a.md is not in the past.
    expect(ancestry.producerOf('/memories/a.md', 1)).toBe(0)
    // A folder is produced by any change under it.
    expect(ancestry.producerOf('/memories', 2)).toBe(2)
    expect(ancestry.parentPositions(3)).toEqual([1, 2])
    expect(ancestry.parentPositions(0)).toEqual([])
    expect(ancestry.firstParentOf(2)).toBe(0)
    expect(ancestry.producerOf('/memories/none.md', 3)).toBe(-1)
    expect(ancestry.positionOf(id('theirs'), 2)).toBe(-1)
    expect(ancestry.positionOf(id('theirs'), 3)).toBe(2)
  })

  it('sees a file a later commit adds to the index', () => {
    const index = indexOf([commit('a', [], 0, ['/memories/a.md'])])
    const ancestry = createAncestry(() => index)
    expect(ancestry.producerOf('/memories/new.md', 0)).toBe(-1)
    index.append(commit('b', ['a'], 1, ['/memories/new.md']))
    expect(ancestry.producerOf('/memories/new.md', 1)).toBe(1)
  })

  it('starts again when the index was replaced by another history, not when rebuilt', () => {
    let index = indexOf([commit('a', [], 0), commit('b', ['a'], 1)])
    const ancestry = createAncestry(() => index)
    expect(ancestry.positionOf(id('b'))).toBe(1)
    const first = ancestry.generation()
    index.append(commit('c', ['b'], 2))
    expect(ancestry.generation()).toBe(first)
    // The same history rebuilt (another index object): positions still hold.
    index = indexOf([commit('a', [], 0), commit('b', ['a'], 1), commit('c', ['b'], 2)])
    expect(ancestry.generation()).toBe(first)
    // A switch to another history: same length or longer, other commits.
    index = indexOf([commit('a', [], 0), commit('x', ['a'], 1), commit('y', ['x'], 2)])
    expect(ancestry.generation()).toBe(first + 1)
    expect(ancestry.positionOf(id('b'))).toBe(-1)
    expect(ancestry.positionOf(id('y'))).toBe(2)
  })
})

/**
 * A real index on disk whose record at `position` names `parent` as its first parent (what a
 * damaged or crafted side file says), opened as Cairn opens it: only the newest record is
 * checked then, the rest by the idle check later.
 */
function indexNaming(
  entries: ReadonlyArray<IndexEntry>,
  patches: ReadonlyArray<{ position: number; parent: number }>,
): IndexFile {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-ancestry-'))
  dirs.push(dir)
  writeIndex(path.join(dir, 'index'), entries)
  const fd = openSync(path.join(dir, 'index', 'commits'), 'r+')
  for (const { position, parent } of patches) {
    const word = Buffer.alloc(4)
    word.writeUInt32LE(parent)
    writeSync(fd, word, 0, 4, position * 64 + 20)
  }
  closeSync(fd)
  const index = IndexFile.open(path.join(dir, 'index'))
  opened.push(index)
  return index
}

/**
 * `index`, its parents counted: more steps than it has entries is a walk in a circle, failed
 * here (a plain loop would never end, nor let the test end).
 */
function counted(index: IndexFile): IndexFile {
  let steps = 0
  return new Proxy(index, {
    get(target, key) {
      if (key === 'parentAt') {
        return (i: number) => {
          if (++steps > 10 * target.size) throw new Error('walked the index in a circle')
          return target.parentAt(i)
        }
      }
      const value = Reflect.get(target, key) as unknown
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value
    },
  })
}

describe('an index whose record names itself or a later entry as its parent', () => {
  const line = [
    commit('a', [], 0, ['/memories/a.md']),
    commit('b', ['a'], 1, ['/memories/b.md']),
    commit('c', ['b'], 2, ['/memories/c.md']),
    commit('d', ['c'], 3, ['/memories/d.md']),
    commit('e', ['d'], 4, ['/memories/e.md']),
  ]

  for (const [what, patches] of [
    ['itself', [{ position: 2, parent: 2 }]],
    ['a later entry (a circle)', [{ position: 1, parent: 3 }]],
  ] as const) {
    it(`is damage, never a walk without end: ${what}`, () => {
      const index = counted(indexNaming(line, patches))
      const ancestry = createAncestry(() => index)
      // The walks down first parents: a file's producer, a commit's parents.
      expect(() => ancestry.producerOf('/memories/none.md', 4)).toThrow(IndexDamagedError)
      const at = patches[0]!.position
      expect(() => ancestry.firstParentOf(at)).toThrow(IndexDamagedError)
      expect(() => ancestry.parentPositions(at)).toThrow(IndexDamagedError)
      // What lies above the damage is still read.
      expect(ancestry.producerOf('/memories/e.md', 4)).toBe(4)
      // The idle check finds it too.
      expect(() => index.checkStructure(0, index.size)).toThrow(IndexDamagedError)
    })
  }

  it('is damage for the timeline of a merged history', () => {
    const merged = [
      commit('base', [], 0),
      commit('mine', ['base'], 1),
      commit('theirs', ['base'], 2),
      commit('merge', ['mine', 'theirs'], 3),
      commit('next', ['merge'], 4),
    ]
    const index = counted(indexNaming(merged, [{ position: 1, parent: 1 }]))
    expect(() => timelineOrder(index)).toThrow(IndexDamagedError)
    expect(() => createAncestry(() => index).newestFirst()).toThrow(IndexDamagedError)
  })
})
