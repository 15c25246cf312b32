/**
 * Sync where names ignore case, as on macOS and Windows (`Notes.md` is `notes.md`), judged so
 * on any system through the `namesFoldCase` core option: two names the folder cannot hold
 * apart never both reach it, and nothing either machine wrote is lost.
 */
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { expectIdle, expectSound, linesOfHistory, useSyncServer } from './test-support'

const ctx = useSyncServer()
const folding = { namesFoldCase: true }

describe('sync where names ignore case', () => {
  it('joins Notes.md from one machine and notes.md from another as one file, keeping both', async () => {
    const { server } = ctx
    const { repo, laptop, desktop } = await ctx.shared(
      'fold-merge',
      (d) => d.write('other.md', 'shared\n'),
      undefined,
      folding,
    )
    await expectIdle(desktop, laptop)

    await laptop.write('Notes.md', 'from the laptop\n')
    expect((await laptop.sync()).state).toBe('idle')
    await desktop.write('notes.md', 'from the desktop\n')
    const merged = await desktop.sync()
    // One file, under this machine's spelling, holding both versions for the person to settle.
    expect([...(await desktop.files()).keys()].sort()).toEqual(['notes.md', 'other.md'])
    const text = (await desktop.files()).get('notes.md') ?? ''
    expect(text).toContain('from the laptop')
    expect(text).toContain('from the desktop')
    expect(merged.conflicts.map((c) => c.path)).toEqual(['/memories/notes.md'])
    expect(server.git(repo, 'ls-tree', '--name-only', 'main').trim().split('\n')).toEqual([
      'notes.md',
      'other.md',
    ])

    // The laptop takes the merge: its Notes.md is that one file now.
    const taken = await laptop.sync()
    expect([...(await laptop.files()).keys()].sort()).toEqual(['notes.md', 'other.md'])
    expect(taken.conflicts.map((c) => c.path)).toEqual(['/memories/notes.md'])
    const remote = await expectSound(server, repo, [laptop, desktop])
    const lines = linesOfHistory(remote)
    expect(lines).toContain('from the laptop')
    expect(lines).toContain('from the desktop')
  })

  it('refuses a remote that holds Notes.md and notes.md both, changing nothing', async () => {
    const { server } = ctx
    const repo = ctx.newRepo('fold-refuse')
    // A machine whose names keep case (Linux) holds both.
    const linux = await ctx.machine('linux', undefined, { namesFoldCase: false })
    await linux.write('Notes.md', 'capital\n')
    // Cairn no longer makes a case twin itself (handler31): git does, as a person on Linux may.
    const memories = path.join(linux.dir, 'memories')
    writeFileSync(path.join(memories, 'notes.md'), 'small\n')
    const asAnn = ['--work-tree', memories, '-c', 'user.name=Ann', '-c', 'user.email=a@x']
    linux.git(...asAnn, 'add', 'notes.md')
    linux.git(...asAnn, 'commit', '-q', '-m', 'A case twin made with git')
    await linux.connect(server, repo)
    expect((await linux.sync()).state).toBe('idle')

    const mac = await ctx.machine('mac', undefined, folding)
    await mac.write('mine.md', 'the mac’s own\n')
    const head = mac.git('rev-parse', 'main')
    await mac.connect(server, repo)
    expect((await mac.sync()).join).toMatchObject({ reason: 'unrelated' })
    const status = await mac.call('sync:join', { choice: 'merge' })
    expect(status.state).toBe('error')
    expect(status.error?.code).toBe('sync-unsafe-content')
    expect(status.error?.message).toContain('(the same name as Notes.md on this system)')
    expect(JSON.stringify(status)).not.toContain(mac.dir)
    expect(mac.git('rev-parse', 'main')).toBe(head)
    expect(Object.fromEntries(await mac.files())).toEqual({ 'mine.md': 'the mac’s own\n' })
    await expectSound(server, repo, [linux, mac])
  })
})
