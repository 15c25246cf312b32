/**
 * Large files across machines: a file of 200,000 lines edited on both sides merges line by
 * line (no stack overflow), and a merge whose result history could not keep is never pushed.
 * Real data folders syncing through a real git server on loopback; the git CLI checks.
 */
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { expectSound, type Machine, useSyncServer } from './test-support'

const sync = useSyncServer()
const { machine } = sync

/** Two machines sharing one remote, each holding what `laptop` had at its first sync. */
async function pair(): Promise<{ repo: string; laptop: Machine; desktop: Machine }> {
  const repo = sync.newRepo('large')
  const laptop = await machine('laptop')
  const desktop = await machine('desktop')
  return { repo, laptop, desktop }
}

const memoryFile = (m: Machine, name: string) => path.join(m.dir, 'memories', name)

describe('a file of 200,000 lines', () => {
  it('edited on both machines at different lines, merges with no markers', async () => {
    const { repo, laptop, desktop } = await pair()
    const lines = Array.from({ length: 200_000 }, (_, i) => `entry ${i}\n`)
    // Written as an editor would (1.6 MB: over the Memory tool's limit, under history's).
    await writeFile(memoryFile(laptop, 'list.md'), lines.join(''))
    await laptop.connect(sync.server, repo)
    expect((await laptop.sync()).state).toBe('idle')
    await desktop.connect(sync.server, repo)
    expect((await desktop.sync()).state).toBe('idle')

    await writeFile(
      memoryFile(laptop, 'list.md'),
      ['first line changed on the laptop\n', ...lines.slice(1)].join(''),
    )
    expect((await laptop.sync()).state).toBe('idle')
    await writeFile(
      memoryFile(desktop, 'list.md'),
      [...lines.slice(0, -1), 'last line changed on the desktop\n'].join(''),
    )
    const status = await desktop.sync()

    expect(status.error).toBeUndefined()
    expect(status.state).toBe('idle')
    const merged = [
      'first line changed on the laptop\n',
      ...lines.slice(1, -1),
      'last line changed on the desktop\n',
    ].join('')
    expect(await readFile(memoryFile(desktop, 'list.md'), 'utf8')).toBe(merged)
    expect((await laptop.sync()).state).toBe('idle')
    expect(await readFile(memoryFile(laptop, 'list.md'), 'utf8')).toBe(merged)
    await expectSound(sync.server, repo, [laptop, desktop])
    expect(sync.server.git(repo, 'show', 'main:list.md')).toBe(merged)
  })
})

describe('a merge larger than history keeps', () => {
  it('keeps the two versions side by side, which the dialog settles', async () => {
    const { repo, laptop, desktop } = await pair()
    await laptop.write('notes.md', 'hello\n')
    await laptop.connect(sync.server, repo)
    expect((await laptop.sync()).state).toBe('idle')
    await desktop.connect(sync.server, repo)
    expect((await desktop.sync()).state).toBe('idle')
    // Each machine adds its own big.md, each under the 32 MiB history versions; merged line
    // by line they would be over it.
    // Lines of 1 MiB: few lines keep the line-by-line comparison quick.
    const line = (who: string) => `${who} ${'x'.repeat(1024 * 1024)}\n`
    const laptopBig = line('laptop').repeat(17)
    const desktopBig = line('desktop').repeat(17)
    await writeFile(memoryFile(laptop, 'big.md'), laptopBig)
    expect((await laptop.sync()).state).toBe('idle')
    await writeFile(memoryFile(desktop, 'big.md'), desktopBig)

    const merged = await desktop.sync()
    expect(merged.error).toBeUndefined()
    expect(merged.conflicts).toEqual([
      expect.objectContaining({
        path: '/memories/big.md',
        kind: 'binary',
        otherPath: '/memories/big (laptop).md',
      }),
    ])
    expect(await readFile(memoryFile(desktop, 'big.md'), 'utf8')).toBe(desktopBig)
    expect(await readFile(memoryFile(desktop, 'big (laptop).md'), 'utf8')).toBe(laptopBig)
    // The other machine takes the merge (nothing in it is larger than history keeps).
    const taken = await laptop.sync()
    expect(taken.error).toBeUndefined()
    expect(await readFile(memoryFile(laptop, 'big (laptop).md'), 'utf8')).toBe(laptopBig)

    // Settled in the dialog: the laptop's version, written by the history (over 1 MiB).
    const settled = await desktop.call('sync:resolve', {
      path: '/memories/big.md',
      choice: 'theirs',
    })
    expect(settled.conflicts).toEqual([])
    expect(await readFile(memoryFile(desktop, 'big.md'), 'utf8')).toBe(laptopBig)
    expect((await desktop.sync()).state).toBe('idle')
    expect((await laptop.sync()).state).toBe('idle')
    await expectSound(sync.server, repo, [laptop, desktop])
  }, 180_000)

  it('settles a text conflict in a file over the Memory tool’s 1 MiB', async () => {
    const { repo, laptop, desktop } = await pair()
    const filler = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${'y'.repeat(100)}\n`)
    const text = ['Editor: Helix\n', ...filler].join('')
    await writeFile(memoryFile(laptop, 'log.md'), text)
    await laptop.connect(sync.server, repo)
    expect((await laptop.sync()).state).toBe('idle')
    await desktop.connect(sync.server, repo)
    expect((await desktop.sync()).state).toBe('idle')
    await writeFile(memoryFile(laptop, 'log.md'), text.replace('Helix', 'Zed'))
    expect((await laptop.sync()).state).toBe('idle')
    await writeFile(memoryFile(desktop, 'log.md'), text.replace('Helix', 'Neovim'))
    const merged = await desktop.sync()
    expect(merged.conflicts).toEqual([
      expect.objectContaining({ path: '/memories/log.md', kind: 'text' }),
    ])

    const settled = await desktop.call('sync:resolve', {
      path: '/memories/log.md',
      choice: 'theirs',
    })
    expect(settled.conflicts).toEqual([])
    expect(await readFile(memoryFile(desktop, 'log.md'), 'utf8')).toBe(text.replace('Helix', 'Zed'))
    expect((await desktop.sync()).state).toBe('idle')
    await expectSound(sync.server, repo, [laptop, desktop])
  })
})

describe('a conflict of very long versions', () => {
  it('reaches the window as the start of each side, and settles whole', async () => {
    const { repo, laptop, desktop } = await pair()
    const base = '# Notes\nSummary: short\n'
    await laptop.write('notes.md', base)
    await laptop.connect(sync.server, repo)
    expect((await laptop.sync()).state).toBe('idle')
    await desktop.connect(sync.server, repo)
    expect((await desktop.sync()).state).toBe('idle')
    // 6 MiB a side, saved by an editor (over the Memory tool's limit).
    const side = (word: string) => base.replace('short', `${word} `.repeat(1.5 * 1024 * 1024))
    await writeFile(memoryFile(laptop, 'notes.md'), side('moss'))
    expect((await laptop.sync()).state).toBe('idle')
    await writeFile(memoryFile(desktop, 'notes.md'), side('tide'))
    await desktop.sync()

    const status = await desktop.call('sync:status')
    expect(status.conflicts).toEqual([
      expect.objectContaining({ path: '/memories/notes.md', blockCount: 1, cut: true }),
    ])
    // Was 12 MiB of JSON, on every status and every announcement.
    expect(JSON.stringify(status).length).toBeLessThan(64 * 1024)
    const [block] = status.conflicts[0]!.blocks
    expect(block!.ours.startsWith('Summary: tide tide')).toBe(true)
    expect(block!.theirs.startsWith('Summary: moss moss')).toBe(true)

    await desktop.call('sync:resolve', { path: '/memories/notes.md', choice: 'theirs' })
    expect(await readFile(memoryFile(desktop, 'notes.md'), 'utf8')).toBe(side('moss'))
    expect((await desktop.sync()).state).toBe('idle')
    await expectSound(sync.server, repo, [laptop, desktop])
  }, 120_000)
})
