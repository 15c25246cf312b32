import { chmod, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SyncStatus } from '../../shared/types'
import { expectSound, type Machine, useSyncServer } from './test-support'

const sync = useSyncServer()
const { machine } = sync

// hunt13-followups D1: two merges that did not know of each other (the tablet's, refused at its
// push, and the desktop's) both took markers of 8; the file then held a block of each, and
// one machine per size oriented the desktop's block by the tablet's merge: "ours" on the
// desktop threw away its own edit.
describe('two blocks of one marker size made on two machines (three machines)', () => {
  it(
    'each block shown with each machine’s own side first, and ours keeps its own line',
    { timeout: 300_000 },
    async () => {
      const repo = sync.newRepo('three')
      const laptop = await machine('laptop')
      const desktop = await machine('desktop')
      const tablet = await machine('tablet')
      await desktop.write('prefs.md', 'A: 1\nx\ny\nz\nB: 1\nx\ny\nz\nC: 1\n')
      await desktop.connect(sync.server, repo)
      await desktop.sync()
      await laptop.connect(sync.server, repo)
      await laptop.sync()
      await tablet.connect(sync.server, repo)
      await tablet.sync()
      const edit = async (m: Machine, from: string, to: string) =>
        m.write('prefs.md', (await m.files()).get('prefs.md')!.replace(from, to))
      // merge #1 on the laptop: A, markers of 7
      await edit(desktop, 'A: 1', 'A: desktop')
      await desktop.sync()
      await edit(laptop, 'A: 1', 'A: laptop')
      expect((await laptop.sync()).state).toBe('conflicts')
      await desktop.sync()
      await tablet.sync()
      // laptop changes B and C
      await edit(laptop, 'B: 1', 'B: laptop')
      await edit(laptop, 'C: 1', 'C: laptop')
      await laptop.sync()
      // the tablet merges C (markers of 8) but its push is refused for now
      const hook = path.join(sync.server.gitdir(repo), 'hooks', 'pre-receive')
      await writeFile(hook, '#!/bin/sh\necho "offline for a moment" >&2\nexit 1\n')
      await chmod(hook, 0o755)
      await edit(tablet, 'C: 1', 'C: tablet')
      expect((await tablet.sync()).state).toBe('error')
      await rm(hook)
      // the desktop merges B (markers of 8 too: it never saw the tablet's)
      await edit(desktop, 'B: 1', 'B: desktop')
      expect((await desktop.sync()).state).toBe('conflicts')
      // the tablet's merge meets the desktop's: a clean merge of two blocks of 8
      await tablet.sync()
      await laptop.sync()
      await desktop.sync()
      const file = (await tablet.files()).get('prefs.md')!
      expect(file).toContain('<<<<<<<< desktop')
      expect(file).toContain('<<<<<<<< tablet')
      const onLaptop = await laptop.call('sync:status')
      const onDesktop = await desktop.call('sync:status')
      const onTablet = await tablet.call('sync:status')
      const blocksOf = (s: SyncStatus) => s.conflicts[0]!.blocks.map((b) => [b.ours, b.theirs])
      expect(blocksOf(onLaptop)).toContainEqual(['B: laptop\n', 'B: desktop\n'])
      expect(blocksOf(onLaptop)).toContainEqual(['C: laptop\n', 'C: tablet\n'])
      await desktop.call('sync:resolve', { path: '/memories/prefs.md', choice: 'ours' })
      expect((await desktop.files()).get('prefs.md')).toContain('B: desktop')
      expect(blocksOf(onDesktop)).toContainEqual(['B: desktop\n', 'B: laptop\n'])
      expect(blocksOf(onTablet)).toContainEqual(['C: tablet\n', 'C: laptop\n'])
      // ours on the laptop keeps the laptop's lines
      await laptop.call('sync:resolve', { path: '/memories/prefs.md', choice: 'ours' })
      const settled = (await laptop.files()).get('prefs.md')!
      expect(settled).toBe('A: laptop\nx\ny\nz\nB: laptop\nx\ny\nz\nC: laptop\n')
      await laptop.sync()
      await desktop.sync()
      await tablet.sync()
      await expectSound(sync.server, repo, [laptop, desktop, tablet])
    },
  )
})
