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
