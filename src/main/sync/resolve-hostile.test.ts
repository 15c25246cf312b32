/**
 * `sync:resolve` the hostile way (issue #14's acceptance check): a path with no conflict, a
 * path that tries to leave memory, a wrong choice, `edit` without text — each a clear error
 * that changes nothing and leaves the conflict open; choices racing each other or a sync —
 * exactly one choice is written, as one commit by You, and both machines end settled.
 */
import { describe, expect, it } from 'vitest'
import { expectSound, useSyncServer, type Machine } from './test-support'

const sync = useSyncServer()

/** Both machines wrote the same line of `prefs.md`; the laptop merged and holds the conflict. */
async function conflicted(): Promise<{ repo: string; laptop: Machine; desktop: Machine }> {
  const { repo, laptop, desktop } = await sync.shared('resolve-hostile', (desktop) =>
    desktop.write('prefs.md', 'Editor: Vim\nTheme: dark\n'),
  )
  await desktop.write('prefs.md', 'Editor: Helix\nTheme: dark\n')
  expect((await desktop.sync()).state).toBe('idle')
  await laptop.write('prefs.md', 'Editor: Zed\nTheme: dark\n')
  expect((await laptop.sync()).state).toBe('conflicts')
  return { repo, laptop, desktop }
}

async function refusal(m: Machine, payload: unknown): Promise<{ code: string; message: string }> {
  const result = await m.core.dispatch('sync:resolve', payload as never)
  if (result.ok) throw new Error(`sync:resolve ${JSON.stringify(payload)} succeeded`)
  return result.error
}

describe('a resolve the conflict does not allow', () => {
  it('is a clear error that changes nothing and leaves the conflict open', async () => {
    const { repo, laptop, desktop } = await conflicted()
    const head = laptop.git('rev-parse', 'main')
    const file = (await laptop.files()).get('prefs.md')
    for (const path of [
      '/memories/other.md',
      '/memories/../history.git/config',
      'prefs.md',
      '/memories/PREFS.md',
    ]) {
      const error = await refusal(laptop, { path, choice: 'ours' })
      expect(error.code).toBe('sync-no-conflict')
      expect(error.message).not.toContain(laptop.dir)
    }
    expect(await refusal(laptop, { path: '/memories/prefs.md', choice: 'mine' })).toMatchObject({
      code: 'invalid-payload',
    })
    expect(await refusal(laptop, { path: '/memories/prefs.md', choice: 'edit' })).toEqual({
      code: 'invalid-input',
      message: 'Write the text to keep, or choose a version.',
    })
    expect(laptop.git('rev-parse', 'main')).toBe(head)
    expect((await laptop.files()).get('prefs.md')).toBe(file)
    expect((await laptop.call('sync:status')).conflicts.map((c) => c.path)).toEqual([
      '/memories/prefs.md',
    ])
    await expectSound(sync.server, repo, [laptop, desktop])
  })
})

describe('choices made at once', () => {
  it('write exactly one, as one commit by You; the others change nothing', async () => {
    const { repo, laptop, desktop } = await conflicted()
    const head = laptop.git('rev-parse', 'main').trim()
    const choices = [
      { path: '/memories/prefs.md', choice: 'ours' },
      { path: '/memories/prefs.md', choice: 'theirs' },
      { path: '/memories/prefs.md', choice: 'edit', text: 'Editor: Emacs\nTheme: dark\n' },
    ] as const
    const results = await Promise.all(choices.map((c) => laptop.core.dispatch('sync:resolve', c)))
    const won = results.flatMap((r, i) => (r.ok ? [i] : []))
    expect(won).toHaveLength(1)
    // A choice that lost was beaten by the person's own other choice: told so, not that Claude
    // or another program wrote to the file.
    for (const r of results) {
      if (!r.ok) {
        expect(r.error).toEqual({
          code: 'sync-no-conflict',
          message:
            '/memories/prefs.md is already resolved: your other choice for it was written, so this one changed nothing.',
        })
      }
    }
    const expected =
      ['Editor: Zed\nTheme: dark\n', 'Editor: Helix\nTheme: dark\n'][won[0]!] ??
      'Editor: Emacs\nTheme: dark\n'
    expect((await laptop.files()).get('prefs.md')).toBe(expected)
    // One commit on top of the merge, by You.
    expect(laptop.git('rev-parse', 'main~1').trim()).toBe(head)
    expect(laptop.git('log', '-1', '--format=%s', 'main').trim()).toBe('resolve /memories/prefs.md')
    expect((await laptop.call('sync:status')).conflicts).toEqual([])
    expect((await laptop.sync()).state).toBe('idle')
    expect((await desktop.sync()).state).toBe('idle')
    expect((await desktop.files()).get('prefs.md')).toBe(expected)
    expect((await desktop.call('sync:status')).conflicts).toEqual([])
    await expectSound(sync.server, repo, [laptop, desktop])
  })

  it('a choice made while a sync runs lands, and reaches the other machine', async () => {
    const { repo, laptop, desktop } = await conflicted()
    // The desktop changes another file: the laptop's sync has something to take. (The desktop
    // learns of the conflict from the laptop's merge.)
    await desktop.write('log.md', 'from the desktop\n')
    expect((await desktop.sync()).state).toBe('conflicts')
    const [synced, resolved] = await Promise.all([
      laptop.sync(),
      laptop.call('sync:resolve', { path: '/memories/prefs.md', choice: 'both' }),
    ])
    expect(synced.state === 'error' ? synced.error : null).toBeNull()
    expect(resolved.conflicts).toEqual([])
    // Whatever order they ran in, the next sync carries everything both ways.
    expect((await laptop.sync()).state).toBe('idle')
    expect((await desktop.sync()).state).toBe('idle')
    const both = 'Editor: Zed\nEditor: Helix\nTheme: dark\n'
    for (const m of [laptop, desktop]) {
      expect(Object.fromEntries(await m.files())).toEqual({
        'prefs.md': both,
        'log.md': 'from the desktop\n',
      })
      expect((await m.call('sync:status')).conflicts).toEqual([])
    }
    await expectSound(sync.server, repo, [laptop, desktop])
  })
})
