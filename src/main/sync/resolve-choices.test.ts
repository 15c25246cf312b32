/**
 * Settling a conflict never writes over what the person did not see, and every choice is a
 * commit the other machine learns from (review hunt11 D3, D4, D5). Real machines through the
 * real git server on loopback; the git CLI reads what each history holds.
 */
import { describe, expect, it } from 'vitest'
import { expectSound, type Machine, useSyncServer } from './test-support'

const sync = useSyncServer()
const { machine } = sync

/** Both machines hold `files`; each then writes its own `prefs.md`, and the laptop merges. */
async function conflicted(
  base: Record<string, string>,
  laptopText: string,
  desktopText: string,
): Promise<{ repo: string; laptop: Machine; desktop: Machine }> {
  const repo = sync.newRepo('choices')
  const laptop = await machine('laptop')
  const desktop = await machine('desktop')
  for (const [file, text] of Object.entries(base)) await desktop.write(file, text)
  await desktop.connect(sync.server, repo)
  await desktop.sync()
  await laptop.connect(sync.server, repo)
  await laptop.sync()
  await desktop.write('prefs.md', desktopText)
  await desktop.sync()
  await laptop.write('prefs.md', laptopText)
  expect((await laptop.sync()).state).toBe('conflicts')
  return { repo, laptop, desktop }
}

describe('the conflict dialog’s Edit (D4)', () => {
  it('writes nothing when the file changed after the dialog loaded it', async () => {
    const { repo, laptop, desktop } = await conflicted(
      { 'prefs.md': 'Editor: Vim\nTheme: dark\n' },
      'Editor: Zed\nTheme: dark\n',
      'Editor: Helix\nTheme: dark\n',
    )
    const loaded = (await laptop.call('memory:read', { path: '/memories/prefs.md' })).text!
    // Claude writes a line while the person edits.
    const now = (await laptop.files()).get('prefs.md')!
    await laptop.write('prefs.md', `${now}Allergy: peanuts (severe)\n`)
    const edited = 'Editor: Zed\nTheme: dark\n'

    const code = await laptop.refused('sync:resolve', {
      path: '/memories/prefs.md',
      choice: 'edit',
      text: edited,
      basis: loaded,
    })
    expect(code).toBe('conflict')
    expect((await laptop.files()).get('prefs.md')).toContain('Allergy: peanuts (severe)')
    expect((await laptop.call('sync:status')).conflicts.map((c) => c.path)).toEqual([
      '/memories/prefs.md',
    ])

    // Started again from the file as it is now, the edit lands.
    const again = (await laptop.call('memory:read', { path: '/memories/prefs.md' })).text!
    const status = await laptop.call('sync:resolve', {
      path: '/memories/prefs.md',
      choice: 'edit',
      text: 'Editor: Zed\nTheme: dark\nAllergy: peanuts (severe)\n',
      basis: again,
    })
    expect(status.conflicts).toEqual([])
    expect((await laptop.files()).get('prefs.md')).toBe(
      'Editor: Zed\nTheme: dark\nAllergy: peanuts (severe)\n',
    )
    await laptop.sync()
    await desktop.sync()
    await expectSound(sync.server, repo, [laptop, desktop])
  })
})

const CHEAT_SHEET = [
  '# Git cheat sheet',
  '',
  '```',
  '<<<<<<< HEAD',
  'my line',
  '=======',
  'their line',
  '>>>>>>> feature',
  '```',
  '',
].join('\n')

describe('a conflict example quoted in a note (D3)', () => {
  it('is the person’s text: never shown as a conflict, kept by every choice', async () => {
    const { repo, laptop, desktop } = await conflicted(
      { 'prefs.md': `${CHEAT_SHEET}\nEditor: Vim\n` },
      `${CHEAT_SHEET}\nEditor: Zed\n`,
      `${CHEAT_SHEET}\nEditor: Helix\n`,
    )
    const [conflict] = (await laptop.call('sync:status')).conflicts
    expect(conflict?.blocks).toEqual([{ ours: 'Editor: Zed\n', theirs: 'Editor: Helix\n' }])
    // The other machine learns the conflict from the merge commit, with the same blocks.
    const desktopView = (await desktop.sync()).conflicts
    expect(desktopView.map((c) => c.blocks)).toEqual([
      [{ ours: 'Editor: Helix\n', theirs: 'Editor: Zed\n' }],
    ])

    await laptop.call('sync:resolve', { path: '/memories/prefs.md', choice: 'ours' })
    expect((await laptop.files()).get('prefs.md')).toBe(`${CHEAT_SHEET}\nEditor: Zed\n`)
    expect((await laptop.call('sync:status')).conflicts).toEqual([])
    await laptop.sync()

    // Settled by hand on the desktop (an editor, Claude): the conflict closes there too.
    await desktop.write('prefs.md', `${CHEAT_SHEET}\nEditor: Helix or Zed\n`)
    expect((await desktop.call('sync:status')).conflicts).toEqual([])
    await desktop.sync()
    await laptop.sync()
    await expectSound(sync.server, repo, [laptop, desktop])
  })
})
