import { describe, expect, it } from 'vitest'
import { createAncestry, timelineOrder } from './ancestry'
import type { IndexEntry } from './side-index'

/** A commit of a made-up history: `oid` a name, parents by name, `time` in minutes. */
function commit(
  oid: string,
  parents: ReadonlyArray<string>,
  time: number,
  files: ReadonlyArray<string> = [],
): IndexEntry {
  const [parent = null, ...others] = parents
  return {
    oid,
    parent,
    ...(others.length > 0 ? { otherParents: others } : {}),
    time: time * 60_000,
    actor: 'claude',
    command: others.length > 0 ? 'merge' : 'str_replace',
    subject: oid,
    paths: files,
    conversationId: null,
    toolUseId: null,
    overwrite: false,
    restoredFrom: null,
    files,
  }
}

const shown = (entries: ReadonlyArray<IndexEntry>) =>
  Array.from(timelineOrder(entries))
    .reverse()
    .map((p) => entries[p]?.oid)

describe('the timeline’s order', () => {
  it('keeps a line of commits as it is, whatever their clocks said', () => {
    const entries = [commit('a', [], 5), commit('b', ['a'], 1), commit('c', ['b'], 9)]
    expect(shown(entries)).toEqual(['c', 'b', 'a'])
  })

  it('interleaves two machines by time, and never shows a commit below its parent', () => {
    // Index order: this machine's line first, then the other's, then the merge (sync's order).
    const entries = [
      commit('base', [], 0),
      commit('mine-1', ['base'], 10),
      commit('mine-2', ['mine-1'], 30),
      commit('theirs-1', ['base'], 20),
      // A clock running ahead: newer than the merge that joins it.
      commit('theirs-2', ['theirs-1'], 99),
      commit('merge', ['mine-2', 'theirs-2'], 40),
    ]
    expect(shown(entries)).toEqual(['merge', 'theirs-2', 'mine-2', 'theirs-1', 'mine-1', 'base'])
  })

  it('grows a line on top of a merged history the same as ordering it anew', () => {
    const entries = [
      commit('base', [], 0),
      commit('mine', ['base'], 10),
      commit('theirs', ['base'], 5),
      commit('merge', ['mine', 'theirs'], 20),
    ]
    const ancestry = createAncestry(() => entries)
    const before = ancestry.newestFirst()
    expect(Array.from({ length: before.length }, (_, k) => entries[before.at(k)]?.oid)).toEqual([
      'merge',
      'mine',
      'theirs',
      'base',
    ])
    entries.push(commit('next', ['merge'], 3))
    const after = ancestry.newestFirst()
    expect(Array.from({ length: after.length }, (_, k) => entries[after.at(k)]?.oid)).toEqual(
      shown(entries),
    )
    expect(after.indexOf(2)).toBe(3)
  })
})

describe('ancestry', () => {
  it('finds the change that produced a file along first parents, past other machines’', () => {
    const entries = [
      commit('base', [], 0, ['/memories/a.md', '/memories/b.md']),
      commit('mine', ['base'], 1, ['/memories/b.md']),
      // The other machine changed a.md; the merge took it (a.md changed against `mine`).
      commit('theirs', ['base'], 2, ['/memories/a.md']),
      commit('merge', ['mine', 'theirs'], 3, ['/memories/a.md']),
    ]
    const ancestry = createAncestry(() => entries)
    expect(ancestry.producerOf('/memories/b.md', 3)).toBe(1)
    expect(ancestry.producerOf('/memories/a.md', 3)).toBe(3)
    // From `mine`, the other machine's change to a.md is not in the past.
    expect(ancestry.producerOf('/memories/a.md', 1)).toBe(0)
    expect(ancestry.parentPositions(3)).toEqual([1, 2])
    expect(ancestry.firstParentOf(2)).toBe(0)
    expect(ancestry.producerOf('/memories/none.md', 3)).toBe(-1)
  })

  it('starts again when the index was replaced rather than grown', () => {
    let entries = [commit('a', [], 0), commit('b', ['a'], 1)]
    const ancestry = createAncestry(() => entries)
    expect(ancestry.positionOf('b')).toBe(1)
    const first = ancestry.generation()
    entries = [...entries, commit('c', ['b'], 2)]
    expect(ancestry.generation()).toBe(first)
    // A switch to another history: same length or longer, other commits.
    entries = [commit('a', [], 0), commit('x', ['a'], 1), commit('y', ['x'], 2)]
    expect(ancestry.generation()).toBe(first + 1)
    expect(ancestry.positionOf('b')).toBe(-1)
    expect(ancestry.positionOf('y')).toBe(2)
  })
})
