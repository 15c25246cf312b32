/**
 * A commit from a machine whose clock is days behind (or dated back on purpose), received on
 * top of the person's fresh edit, does not hide that edit from "changed in the last 24 hours"
 * (the review's person-edited flag; review hunt11 D9). The other machine is the git CLI
 * pushing to the real git server on loopback; the laptop is a real core.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { openVersionedMemory } from '../history'
import { createRecordingLogger } from '../lib/logger'
import { useSyncServer } from './test-support'

const sync = useSyncServer()
const DAY_MS = 86_400_000

describe('a commit dated days back, received on top of a fresh edit', () => {
  it('does not hide the edit from the changes of the last 24 hours', async () => {
    const repo = sync.newRepo('skew')
    const laptop = await sync.machine(
      'laptop',
      await mkdtemp(path.join(os.tmpdir(), 'cairn-skew-')),
    )
    await laptop.write('other.md', 'other\n')
    await laptop.write('prefs.md', 'I like tea.\n')
    await laptop.connect(sync.server, repo)
    await laptop.sync()

    // Another machine, its clock three days behind, changes other.md on top and pushes.
    const work = await mkdtemp(path.join(os.tmpdir(), 'cairn-skew-desk-'))
    try {
      const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: work }
      const clone = path.join(work, 'c')
      execFileSync('git', ['clone', '-q', sync.server.gitdir(repo), clone], { env })
      await writeFile(path.join(clone, 'other.md'), 'other\nfrom desktop\n')
      const when = `${Math.floor((Date.now() - 3 * DAY_MS) / 1000)} +0000`
      const dated = { ...env, GIT_AUTHOR_DATE: when, GIT_COMMITTER_DATE: when }
      const identity = ['-c', 'user.name=Cairn', '-c', 'user.email=cairn@localhost']
      execFileSync(
        'git',
        ['-C', clone, ...identity, 'commit', '-qam', 'edit /memories/other.md\n\nMachine: desktop'],
        { env: dated },
      )
      execFileSync('git', ['-C', clone, 'push', '-q', 'origin', 'HEAD:main'], { env })
    } finally {
      await rm(work, { recursive: true, force: true, maxRetries: 10 })
    }
    expect((await laptop.sync()).state).toBe('idle')
    expect(laptop.git('log', '-1', '--format=%s', 'main').trim()).toBe('edit /memories/other.md')
    await sync.stop(laptop)

    const memory = await openVersionedMemory({
      dataDir: laptop.dir,
      watch: false,
      maintenance: false,
      logger: createRecordingLogger(),
    })
    try {
      const recent = await memory.changesSince('/memories/prefs.md', Date.now() - DAY_MS)
      expect(recent.map((c) => c.subject)).toEqual([expect.stringContaining('/memories/prefs.md')])
    } finally {
      await memory.close()
      await rm(laptop.dir, { recursive: true, force: true, maxRetries: 10 })
    }
  })
})
