/**
 * More of sync where names ignore case: a rename that changes only the case on one machine
 * while the other edits, and a folder spelt two ways by two machines.
 */
import { describe, expect, it } from 'vitest'
import { foldedName } from '../lib/text'
import { expectIdle, expectSound, useSyncServer } from './test-support'

const ctx = useSyncServer()
const folding = { namesFoldCase: true }

/** Files and folders in `names` that another one folds to (names a folder cannot hold apart). */
function twins(names: string[]): string[] {
  const dirs = (n: string) =>
    n
      .split('/')
      .slice(0, -1)
      .map((_, i, a) => a.slice(0, i + 1).join('/'))
  const all = names.flatMap((n) => [n, ...dirs(n)])
  const seen = new Map<string, Set<string>>()
  for (const n of all) {
    const f = foldedName(n)
    seen.set(f, (seen.get(f) ?? new Set()).add(n))
  }
  return [...seen.values()].filter((s) => s.size > 1).flatMap((s) => [...s])
}

describe('sync where names ignore case, further', () => {
  it('a rename that changes only the case, against an edit on the other machine', async () => {
    const { server } = ctx
    const { repo, laptop, desktop } = await ctx.shared(
      'fold-rename',
      (d) => d.write('notes.md', 'one\ntwo\nthree\n'),
      undefined,
      folding,
    )
    await expectIdle(desktop, laptop)

    await laptop.rename('notes.md', 'Notes.md')
    expect((await laptop.sync()).state).toBe('idle')
    await desktop.write('notes.md', 'one\ntwo\nthree\nfour from the desktop\n')
    const merged = await desktop.sync()
    const names = [...(await desktop.files()).keys()].sort()
    const remoteNames = server.git(repo, 'ls-tree', '-r', '--name-only', 'main').trim().split('\n')
    expect({ state: merged.state, names, remoteNames, twins: twins(remoteNames) }).toMatchObject({
      state: 'idle',
      twins: [],
    })
    const all = [...(await desktop.files()).values()].join('')
    expect(all).toContain('four from the desktop')
    await expectSound(server, repo, [laptop, desktop])
  })

  it('Docs/a.md from one machine and docs/b.md from another', async () => {
    const { server } = ctx
    const { repo, laptop, desktop } = await ctx.shared(
      'fold-folder',
      (d) => d.write('other.md', 'shared\n'),
      undefined,
      folding,
    )
    await expectIdle(desktop, laptop)

    await laptop.write('Docs/a.md', 'from the laptop\n')
    expect((await laptop.sync()).state).toBe('idle')
    await desktop.write('docs/b.md', 'from the desktop\n')
    const merged = await desktop.sync()
    const remoteNames = server.git(repo, 'ls-tree', '-r', '--name-only', 'main').trim().split('\n')
    expect({ state: merged.state, remoteNames, twins: twins(remoteNames) }).toMatchObject({
      state: 'idle',
      twins: [],
    })
    // The laptop's file joins the desktop's folder, as this system could only hold it.
    expect(remoteNames).toEqual(['docs/a.md', 'docs/b.md', 'other.md'])
    expect(Object.fromEntries(await desktop.files())).toMatchObject({
      'docs/a.md': 'from the laptop\n',
      'docs/b.md': 'from the desktop\n',
    })
    expect((await laptop.sync()).state).toBe('idle')
    expect([...(await laptop.files()).keys()].sort()).toEqual([
      'docs/a.md',
      'docs/b.md',
      'other.md',
    ])
    await expectSound(server, repo, [laptop, desktop])
  })
})
