/**
 * Settling a conflict never writes over what the person did not see, and every choice is a
 * commit the other machine learns from (review hunt11 D3, D4, D5). Real machines through the
 * real git server on loopback; the git CLI reads what each history holds.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { TINY_PNG } from '../../../test/fixtures/images'
import type { SyncStatus } from '../../shared/types'
import { openVersionedMemory } from '../history'
import { CLAUDE } from '../history/test-helpers'
import { expectSound, type Machine, useSyncServer } from './test-support'

const sync = useSyncServer()
const { machine } = sync

/** Both machines hold `files`; each then writes its own `prefs.md`, and the laptop merges. */
async function conflicted(
  base: Record<string, string>,
  laptopText: string,
  desktopText: string,
): Promise<{ repo: string; laptop: Machine; desktop: Machine }> {
  const { repo, laptop, desktop } = await sync.shared('choices', async (desktop) => {
    for (const [file, text] of Object.entries(base)) await desktop.write(file, text)
  })
  await desktop.write('prefs.md', desktopText)
  await desktop.sync()
  await laptop.write('prefs.md', laptopText)
  expect((await laptop.sync()).state).toBe('conflicts')
  return { repo, laptop, desktop }
}

/** A person's edit of `prefs.md` on `m`: the first `from` in it becomes `to`. */
async function edit(m: Machine, from: string, to: string): Promise<void> {
  await m.write('prefs.md', (await m.files()).get('prefs.md')!.replace(from, to))
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

/** Bytes that are not UTF-8 (a PNG's signature), ending in `tag`. */
const picture = (tag: string) =>
  Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00]), Buffer.from(tag)])

async function putPicture(on: Machine, tag: string): Promise<void> {
  await writeFile(path.join(on.dir, 'memories', 'photo.png'), picture(tag))
}

async function pictureOf(on: Machine, name: string): Promise<string> {
  return (await readFile(path.join(on.dir, 'memories', name))).subarray(7).toString()
}

describe('a binary file in conflict twice (D5)', () => {
  it('keeps the second other version under a fresh name; keeping both closes it everywhere', async () => {
    const { repo, laptop, desktop } = await sync.shared('binary', async (desktop) => {
      await desktop.write('a.md', 'a\n')
      await putPicture(desktop, 'v0')
    })

    await putPicture(desktop, 'D1')
    await desktop.sync()
    await putPicture(laptop, 'L1')
    const first = await laptop.sync()
    expect(first.conflicts.map((c) => c.otherPath)).toEqual(['/memories/photo (desktop).png'])
    const settled = await laptop.call('sync:resolve', {
      path: '/memories/photo.png',
      choice: 'both',
    })
    expect(settled.conflicts).toEqual([])
    // "Both" is a commit too: the desktop learns the conflict is settled.
    expect(laptop.git('log', '-1', '--format=%B', 'main')).toContain(
      'Settled: %2Fmemories%2Fphoto.png',
    )
    expect(laptop.git('diff', '--stat', 'main~1', 'main')).toBe('')
    await laptop.sync()
    expect((await desktop.sync()).conflicts).toEqual([])
    expect(await pictureOf(desktop, 'photo (desktop).png')).toBe('D1')

    // Both change it again: the other version gets a name of its own.
    await putPicture(desktop, 'D2')
    await desktop.sync()
    await putPicture(laptop, 'L2')
    const second = await laptop.sync()
    expect(second.conflicts.map((c) => [c.path, c.otherPath])).toEqual([
      ['/memories/photo.png', '/memories/photo (desktop 2).png'],
    ])
    expect(await pictureOf(laptop, 'photo (desktop 2).png')).toBe('D2')
    await laptop.call('sync:resolve', { path: '/memories/photo.png', choice: 'theirs' })
    expect(await pictureOf(laptop, 'photo.png')).toBe('D2')
    expect(await pictureOf(laptop, 'photo (desktop).png')).toBe('D1')
    await laptop.sync()
    await desktop.sync()
    await expectSound(sync.server, repo, [laptop, desktop])
  })
})

describe('a conflicted file over 2,000,000 characters (D10)', () => {
  it('is settled with text written by hand, within the history’s 32 MiB', async () => {
    const body = `${'x'.repeat(999)}\n`.repeat(2_600)
    const put = (on: Machine, first: string) =>
      writeFile(path.join(on.dir, 'memories', 'big.md'), `${first}\n${body}`)
    const { laptop, desktop } = await sync.shared('large', (desktop) => put(desktop, 'base'))
    await put(desktop, 'desktop')
    await desktop.sync()
    await put(laptop, 'laptop')
    expect((await laptop.sync()).conflicts.map((c) => c.path)).toEqual(['/memories/big.md'])

    const basis = await readFile(path.join(laptop.dir, 'memories', 'big.md'), 'utf8')
    const text = `laptop and desktop\n${body}`
    expect(text.length).toBeGreaterThan(2_000_000)
    const status = await laptop.call('sync:resolve', {
      path: '/memories/big.md',
      choice: 'edit',
      text,
      basis,
    })
    expect(status.conflicts).toEqual([])
    expect(await readFile(path.join(laptop.dir, 'memories', 'big.md'), 'utf8')).toBe(text)
    expect(laptop.git('show', 'main:big.md')).toBe(text)
  })
})

describe('a second conflict on a file whose first is still open (review11 N1)', () => {
  it('is shown with the first, and "ours" settles both on both machines', async () => {
    const { repo, laptop, desktop } = await sync.shared('twice', (desktop) =>
      desktop.write('prefs.md', 'A: 1\nx\ny\nz\nB: 1\n'),
    )
    await edit(desktop, 'A: 1', 'A: desktop')
    await desktop.sync()
    await edit(laptop, 'A: 1', 'A: laptop')
    expect((await laptop.sync()).state).toBe('conflicts')
    // Neither machine settles the first; both change B.
    await desktop.sync()
    await edit(desktop, 'B: 1', 'B: desktop')
    await desktop.sync()
    await edit(laptop, 'B: 1', 'B: laptop')
    const status = await laptop.sync()
    expect(status.state).toBe('conflicts')
    expect(status.conflicts.map((c) => [c.path, c.blockCount])).toEqual([['/memories/prefs.md', 2]])
    const sides = status.conflicts[0]!.blocks.map((b) => [b.ours, b.theirs])
    expect(sides).toEqual([
      ['A: laptop\n', 'A: desktop\n'],
      ['B: laptop\n', 'B: desktop\n'],
    ])
    const other = (await desktop.sync()).conflicts
    expect(other.map((c) => [c.path, c.blockCount])).toEqual([['/memories/prefs.md', 2]])

    const after = await laptop.call('sync:resolve', { path: '/memories/prefs.md', choice: 'ours' })
    expect(after.conflicts).toEqual([])
    const settled = (await laptop.files()).get('prefs.md')!
    expect(settled).toBe('A: laptop\nx\ny\nz\nB: laptop\n')
    expect(settled).not.toMatch(/^[<=>]{7}/m)
    await laptop.sync()
    const desktopNow = await desktop.sync()
    expect(desktopNow.conflicts).toEqual([])
    expect((await desktop.files()).get('prefs.md')).toBe(settled)
    await expectSound(sync.server, repo, [laptop, desktop])
  })
})

describe('a second conflict made on the other machine (review11-fixsync2 R1)', () => {
  it('shows and settles each block by the machine that merged it, on both machines', async () => {
    const { repo, laptop, desktop } = await sync.shared('crossed', (desktop) =>
      desktop.write('prefs.md', 'A: 1\nx\ny\nz\nB: 1\n'),
    )
    // Merge #1 on the laptop (line A); the desktop fast-forwards to it, the conflict open.
    await edit(desktop, 'A: 1', 'A: desktop')
    await desktop.sync()
    await edit(laptop, 'A: 1', 'A: laptop')
    expect((await laptop.sync()).state).toBe('conflicts')
    expect((await desktop.sync()).state).toBe('conflicts')
    // Merge #2 (line B) on the desktop: the laptop pushes first this time.
    await edit(laptop, 'B: 1', 'B: laptop')
    await laptop.sync()
    await edit(desktop, 'B: 1', 'B: desktop')
    const onDesktop = await desktop.sync()
    // The file's blocks: each merge puts its own machine's side first.
    const file = (await desktop.files()).get('prefs.md')!
    expect(file).toMatch(/^<{7} laptop\nA: laptop\n={7}\nA: desktop\n>{7} desktop\n/)
    expect(file).toMatch(/\n<{8} desktop\nB: desktop\n={8}\nB: laptop\n>{8} laptop\n$/)
    const sides = (status: SyncStatus) =>
      status.conflicts.map((c) => [c.oursLabel, c.blocks.map((b) => [b.ours, b.theirs])])
    expect(sides(onDesktop)).toEqual([
      [
        'desktop',
        [
          ['A: desktop\n', 'A: laptop\n'],
          ['B: desktop\n', 'B: laptop\n'],
        ],
      ],
    ])
    // The laptop learns merge #2 (and who made it) from the commit.
    const onLaptop = await laptop.sync()
    expect(sides(onLaptop)).toEqual([
      [
        'laptop',
        [
          ['A: laptop\n', 'A: desktop\n'],
          ['B: laptop\n', 'B: desktop\n'],
        ],
      ],
    ])
    // The same after a restart: what each machine saved says who merged which block.
    await sync.stop(laptop)
    const reopened = await machine('laptop', laptop.dir)
    expect(sides(await reopened.call('sync:status'))).toEqual(sides(onLaptop))

    // "Ours" keeps each machine's own lines in every block.
    await reopened.call('sync:resolve', { path: '/memories/prefs.md', choice: 'ours' })
    expect((await reopened.files()).get('prefs.md')).toBe('A: laptop\nx\ny\nz\nB: laptop\n')
    await desktop.call('sync:resolve', { path: '/memories/prefs.md', choice: 'ours' })
    expect((await desktop.files()).get('prefs.md')).toBe('A: desktop\nx\ny\nz\nB: desktop\n')
    await reopened.sync()
    await desktop.sync()
    await reopened.sync()
    await expectSound(sync.server, repo, [reopened, desktop])
    await sync.stop(reopened)
    await rm(laptop.dir, { recursive: true, force: true, maxRetries: 10 })
  })
})

describe('a later merge inside an open block (review11-fixsync2 R2)', () => {
  it('keeps the conflict open on the block a choice leaves, then settles it', async () => {
    const { repo, laptop, desktop } = await sync.shared('nested', (desktop) =>
      desktop.write('prefs.md', 'A: 1\nx\n'),
    )
    await edit(desktop, 'A: 1', 'A: desktop')
    await desktop.sync()
    await edit(laptop, 'A: 1', 'A: laptop')
    expect((await laptop.sync()).state).toBe('conflicts')
    await desktop.sync()
    // Both edit the laptop's side inside the open block, differently.
    await edit(desktop, 'A: laptop\n', 'A: laptop2 (desktop)\n')
    await desktop.sync()
    await edit(laptop, 'A: laptop\n', 'A: laptop3\n')
    expect((await laptop.sync()).state).toBe('conflicts')
    expect((await laptop.files()).get('prefs.md')).toBe(
      '<<<<<<< laptop\n<<<<<<<< laptop\nA: laptop3\n========\nA: laptop2 (desktop)\n' +
        '>>>>>>>> desktop\n=======\nA: desktop\n>>>>>>> desktop\nx\n',
    )

    // "Ours" of the outer block is the laptop's side, which holds the inner block whole.
    const after = await laptop.call('sync:resolve', { path: '/memories/prefs.md', choice: 'ours' })
    const left =
      '<<<<<<<< laptop\nA: laptop3\n========\nA: laptop2 (desktop)\n>>>>>>>> desktop\nx\n'
    expect((await laptop.files()).get('prefs.md')).toBe(left)
    expect(after.state).toBe('conflicts')
    expect(after.conflicts.map((c) => c.blocks)).toEqual([
      [{ ours: 'A: laptop3\n', theirs: 'A: laptop2 (desktop)\n' }],
    ])
    // The desktop learns the choice and keeps the conflict open on what is left.
    await laptop.sync()
    const onDesktop = await desktop.sync()
    expect((await desktop.files()).get('prefs.md')).toBe(left)
    expect(onDesktop.conflicts.map((c) => c.blocks)).toEqual([
      [{ ours: 'A: laptop2 (desktop)\n', theirs: 'A: laptop3\n' }],
    ])

    const settled = await laptop.call('sync:resolve', {
      path: '/memories/prefs.md',
      choice: 'ours',
    })
    expect([settled.state, settled.conflicts]).toEqual(['idle', []])
    expect((await laptop.files()).get('prefs.md')).toBe('A: laptop3\nx\n')
    await laptop.sync()
    expect((await desktop.sync()).conflicts).toEqual([])
    await expectSound(sync.server, repo, [laptop, desktop])
  })
})

describe('a binary conflict on a file with a long name (review11-fixsync2 R5)', () => {
  it('keeps the other version under a name Claude’s memory tool can view and delete', async () => {
    const laptopDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-longname-'))
    // 124 characters: a name the path rules allow (up to 128); with " (desktop)" it is not.
    const name = `${'s'.repeat(120)}.png`
    // A real PNG (an image to Claude's view since images are known by their structure, not
    // their signature alone), each version told apart by bytes after its end.
    const png = (tag: string) => Buffer.concat([TINY_PNG, Buffer.from(tag)])
    const put = (on: Machine, tag: string) =>
      writeFile(path.join(on.dir, 'memories', name), png(tag))
    const { repo, laptop, desktop } = await sync.shared(
      'longname',
      async (desktop) => {
        await desktop.write('a.md', 'a\n')
        await put(desktop, 'v0')
      },
      laptopDir,
    )
    await put(desktop, 'D1')
    await desktop.sync()
    await put(laptop, 'L1')
    const status = await laptop.sync()
    const other = `/memories/${'s'.repeat(114)} (desktop).png`
    expect(status.conflicts.map((c) => [c.path, c.otherPath])).toEqual([
      [`/memories/${name}`, other],
    ])
    expect(
      await readFile(path.join(laptopDir, 'memories', other.slice('/memories/'.length))),
    ).toEqual(png('D1'))
    await laptop.sync()
    await sync.stop(laptop)

    // Claude's memory tool, on the laptop's memory: the copy is a path its rules accept.
    const memory = await openVersionedMemory({ dataDir: laptopDir, watch: false })
    try {
      const viewed = await memory.execute({ command: 'view', path: other }, CLAUDE)
      expect(viewed.isError).toBe(false)
      expect(JSON.stringify(viewed.content)).toContain(png('D1').toString('base64'))
      const deleted = await memory.execute({ command: 'delete', path: other }, CLAUDE)
      expect([deleted.isError, deleted.content]).toEqual([false, expect.stringContaining(other)])
    } finally {
      await memory.close()
    }
    // Deleting the copy settles the conflict, here and on the desktop.
    const reopened = await machine('laptop', laptopDir)
    expect((await reopened.sync()).conflicts).toEqual([])
    expect((await desktop.sync()).conflicts).toEqual([])
    expect(desktop.git('ls-tree', '--name-only', 'main').trim().split('\n')).toEqual(['a.md', name])
    await expectSound(sync.server, repo, [reopened, desktop])
    await sync.stop(reopened)
    await rm(laptopDir, { recursive: true, force: true, maxRetries: 10 })
  })
})

describe('a marker size that comes back in a later merge (review12-sync D1)', () => {
  it('takes the newest merge’s machine for that size, on both machines', async () => {
    const { repo, laptop, desktop } = await sync.shared('size-again', (desktop) =>
      desktop.write('prefs.md', 'A: 1\nx\ny\nz\nB: 1\nx\ny\nz\nC: 1\n'),
    )
    // Merge #1 on the laptop (A, markers of 7); merge #2 on the desktop (B, markers of 8).
    await edit(desktop, 'A: 1', 'A: desktop')
    await desktop.sync()
    await edit(laptop, 'A: 1', 'A: laptop')
    expect((await laptop.sync()).state).toBe('conflicts')
    await desktop.sync()
    await edit(laptop, 'B: 1', 'B: laptop')
    await laptop.sync()
    await edit(desktop, 'B: 1', 'B: desktop')
    await desktop.sync()
    await laptop.sync()
    // B's block alone is settled by a plain write (Claude or an editor), keeping both lines.
    const open = (await desktop.files()).get('prefs.md')!
    const settledB = open.replace(/<{8} [^\n]*\n([^\n]*\n)={8}\n([^\n]*\n)>{8} [^\n]*\n/, '$1$2')
    expect(settledB).not.toBe(open)
    await desktop.write('prefs.md', settledB)
    await desktop.sync()
    await laptop.sync()
    // Merge #3 on the laptop (C): markers of 8 again, this time the laptop's.
    await edit(desktop, 'C: 1', 'C: desktop')
    await desktop.sync()
    await edit(laptop, 'C: 1', 'C: laptop')
    const onLaptop = await laptop.sync()
    const file = (await laptop.files()).get('prefs.md')!
    expect(file).toMatch(/\n<{8} laptop\nC: laptop\n={8}\nC: desktop\n>{8} desktop\n$/)
    const sides = (status: SyncStatus) =>
      status.conflicts.map((c) => c.blocks.map((b) => [b.ours, b.theirs]))
    expect(sides(onLaptop)).toEqual([
      [
        ['A: laptop\n', 'A: desktop\n'],
        ['C: laptop\n', 'C: desktop\n'],
      ],
    ])
    const onDesktop = await desktop.sync()
    expect(sides(onDesktop)).toEqual([
      [
        ['A: desktop\n', 'A: laptop\n'],
        ['C: desktop\n', 'C: laptop\n'],
      ],
    ])
    // The same after a restart (what the laptop saved), and "ours" keeps each machine's lines.
    await sync.stop(laptop)
    const reopened = await machine('laptop', laptop.dir)
    expect(sides(await reopened.call('sync:status'))).toEqual(sides(onLaptop))
    await reopened.call('sync:resolve', { path: '/memories/prefs.md', choice: 'ours' })
    expect((await reopened.files()).get('prefs.md')).toBe(
      'A: laptop\nx\ny\nz\nB: desktop\nB: laptop\nx\ny\nz\nC: laptop\n',
    )
    await desktop.call('sync:resolve', { path: '/memories/prefs.md', choice: 'ours' })
    expect((await desktop.files()).get('prefs.md')).toBe(
      'A: desktop\nx\ny\nz\nB: desktop\nB: laptop\nx\ny\nz\nC: desktop\n',
    )
    await reopened.sync()
    await desktop.sync()
    await reopened.sync()
    await expectSound(sync.server, repo, [reopened, desktop])
    await sync.stop(reopened)
    await rm(laptop.dir, { recursive: true, force: true, maxRetries: 10 })
  })
})

describe('a binary conflict in a folder that leaves no room for a tag (review12-sync D4)', () => {
  it('keeps the other side under a name the rules accept, which Claude can delete', async () => {
    // A path of exactly 512 characters, allowed: no room for " (desktop)" beside the name.
    const dir = `${['a', 'b', 'c', 'd'].map((c) => c.repeat(120)).join('/')}/${'e'.repeat(11)}`
    const file = `${dir}/ab.png`
    expect(`/memories/${file}`).toHaveLength(512)
    const png = (tag: string) =>
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0x00, ...Buffer.from(tag)])
    const put = async (m: Machine, tag: string) => {
      await mkdir(path.join(m.dir, 'memories', dir), { recursive: true })
      await writeFile(path.join(m.dir, 'memories', file), png(tag))
    }
    const { repo, laptop, desktop } = await sync.shared('deep-binary', async (desktop) => {
      await desktop.write('a.md', 'a\n')
      await put(desktop, 'v0')
    })
    await put(desktop, 'desktop')
    await desktop.sync()
    await put(laptop, 'laptop')
    const status = await laptop.sync()
    expect(status.state).toBe('conflicts')
    const other = status.conflicts[0]!.otherPath!
    expect(other).toBe(`/memories/${dir}/1.png`)
    // Both sides are there, each whole; the git CLI reads the other side's copy from history.
    expect(await readFile(path.join(laptop.dir, 'memories', file))).toEqual(png('laptop'))
    expect(await readFile(path.join(laptop.dir, 'memories', dir, '1.png'))).toEqual(png('desktop'))
    expect(laptop.git('show', `main:${dir}/1.png`)).toContain('desktop')
    // Claude's memory tool can view and delete it.
    expect((await laptop.call('memory:read', { path: other })).path).toBe(other)
    await laptop.call('memory:delete', { path: other })
    await laptop.sync()
    await desktop.sync()
    await laptop.sync()
    await expectSound(sync.server, repo, [laptop, desktop])
  })
})
