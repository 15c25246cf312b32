/**
 * A maintenance pass that folds every pack between a sync's fetch and its refusal of what the
 * fetch brought: the fetch's packs are kept out of the fold (a `.keep` beside each until the
 * sync is done with them, as `git fetch` keeps its pack from `git gc`), so the refusal still
 * removes them whole. Before, the pass folded the fetched pack into its new one, the removal
 * found no pack of the fetch left, and the remote's refused objects stayed for good. The same
 * with a Test connection between (its fetch's clean-up took the sync's `.keep`s away). A real
 * history, a real git server, git as second opinion.
 */
import { readdirSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'
import { openVersionedMemory } from '../history'
import type { HistoryGit, VersionedMemory } from '../history/types'
import { createRecordingLogger } from '../lib/logger'
import type { SyncTestResult } from '../../shared/types'
import {
  otherClient as git,
  pushDamagedListing,
  syncServiceOver,
  useSyncServer,
} from './test-support'

const shared = useSyncServer()

it.each([
  ['alone', false],
  // A Test connection's fetch runs once the sync has left the fetch queue; its clean-up took
  // away the `.keep`s of the sync still checking its packs, and the pass folded them.
  ['after a Test connection', true],
])(
  'removes what a refused fetch brought though a pass folded every pack before the refusal (%s)',
  async (_, testFirst) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-refused-fold-'))
    const memory = await openVersionedMemory({
      dataDir,
      watch: false,
      maintenance: false,
      machine: 'desktop',
      logger: createRecordingLogger(),
    })
    // Once armed: after the sync's fetch, before it integrates (and refuses) what it brought, a
    // pass folds every pack it may.
    let armed = false
    let fetched = false
    let pass: Awaited<ReturnType<VersionedMemory['maintain']>> | null = null
    let tested: SyncTestResult | null = null
    let transfers = 0
    let url = ''
    const gitOfSync: HistoryGit = {
      ...memory.git,
      transfer: async <T>(task: () => Promise<T>) => {
        transfers++
        const done = await memory.git.transfer(task)
        fetched ||= armed
        return done
      },
      exclusive: async (task) => {
        if (fetched && pass === null) {
          if (testFirst) {
            const before = transfers
            tested = await sync.test({
              url,
              username: shared.server.user,
              token: shared.server.token,
            })
            // It fetched (the remote's `main` is not in this history).
            expect(transfers).toBe(before + 1)
          }
          pass = await memory.maintain({ mergeAll: true })
        }
        return memory.git.exclusive(task)
      },
    }
    const sync = syncServiceOver(dataDir, memory, gitOfSync)
    try {
      await memory.execute(
        { command: 'create', path: '/memories/a.md', file_text: 'mine\n' },
        { actor: 'user' },
      )
      const repo = shared.newRepo(`refused-fold-${testFirst ? 'test' : 'alone'}`)
      url = shared.server.url(repo)
      await sync.configure({
        url,
        username: shared.server.user,
        token: shared.server.token,
        intervalMinutes: 0,
      })
      expect((await sync.syncNow()).state).toBe('idle')
      // Another client pushes a commit whose folder listing names `d.md` twice.
      const [bad, tree, one, two] = pushDamagedListing(shared.server.gitdir(repo))
      const gitdir = path.join(dataDir, 'history.git')
      const head = git(gitdir, null, 'rev-parse', 'main')

      armed = true
      const status = await sync.syncNow()

      expect(status.error?.code).toBe('sync-unsafe-content')
      if (testFirst) expect(tested).toMatchObject({ ok: true })
      // The pass ran between the fetch and the refusal, and folded packs.
      expect(pass).not.toBeNull()
      expect(pass!.mergedPacks + pass!.packed).toBeGreaterThan(0)
      // Nothing of the refused commit is left, in any pack: git fsck --strict finds the store clean.
      for (const oid of [bad, tree, one, two]) {
        expect(() => git(gitdir, null, 'cat-file', '-e', oid)).toThrow()
      }
      git(gitdir, null, 'fsck', '--strict')
      expect(git(gitdir, null, 'rev-parse', 'main')).toBe(head)
      // The sync is done with its packs: no `.keep` of its is left to keep them from later folds.
      expect(
        readdirSync(path.join(gitdir, 'objects', 'pack')).filter((f) => f.endsWith('.keep')),
      ).toEqual([])
    } finally {
      await sync.close()
      await memory.close()
      await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
    }
  },
  120_000,
)
