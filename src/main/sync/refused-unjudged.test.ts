/**
 * Packs a fetch brought that no sync judged (took in, or removed as refused): a sync killed
 * (SIGKILL) once its fetch had moved the tracking ref to a commit it then refuses, and a Test
 * connection's own fetch of such a commit. Each leaves the fetch's packs with their `.keep`, and
 * the next sync judges them with what it fetches, or, refusing a commit it refused before
 * without fetching it again, on their own. Before, the next sync's fetch got no pack back (the
 * tracking ref already named the commit), so nothing marked the refused objects for removal,
 * and they stayed for good. A real git server, a real child killed, git as second opinion.
 */
import { readdirSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { expect, it } from 'vitest'
import { openVersionedMemory } from '../history'
import { runKilledChild } from '../history/test-helpers'
import type { HistoryGit } from '../history/types'
import { createRecordingLogger } from '../lib/logger'
import {
  otherClient as git,
  pushDamagedListing,
  syncServiceOver,
  trackingFile,
  useSyncServer,
  withEio,
  type Machine,
} from './test-support'

const sync = useSyncServer()

/** Another client's push of a commit Cairn refuses (`d.md` twice): what only it brought. */
const pushDamaged = (repo: string, tag: string): string[] =>
  pushDamagedListing(sync.server.gitdir(repo), tag)

const has = (machine: Machine, oid: string): boolean => {
  try {
    machine.git('cat-file', '-e', oid)
    return true
  } catch {
    return false
  }
}

const packFolder = (machine: Machine) => path.join(machine.dir, 'history.git', 'objects', 'pack')
const keeps = (machine: Machine) =>
  readdirSync(packFolder(machine)).filter((name) => name.endsWith('.keep'))

/** The refused objects are gone, nothing is kept from later folds, git finds the store sound. */
function expectRemoved(machine: Machine, oids: ReadonlyArray<string>, head: string): void {
  for (const oid of oids) expect(has(machine, oid), oid).toBe(false)
  expect(keeps(machine)).toEqual([])
  expect(machine.git('for-each-ref', '--format=%(objectname)')).not.toContain(oids[0])
  machine.git('fsck', '--strict')
  expect(machine.git('rev-parse', 'main').trim()).toBe(head)
}

it('removes what a fetch brought when the sync was killed once the tracking ref named it, before its refusal', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-unjudged-kill-'))
  // Closed before the folder goes, should the test fail part-way.
  let open: Machine | null = null
  try {
    const laptop = await sync.machine('laptop', dir)
    open = laptop
    await laptop.write('a.md', 'mine\n')
    const repo = sync.newRepo('unjudged-kill')
    await laptop.connect(sync.server, repo)
    expect((await laptop.sync()).state).toBe('idle')
    const head = laptop.git('rev-parse', 'main').trim()
    const refused = pushDamaged(repo, 'killed')
    await sync.stop(laptop)
    open = null

    // The same machine, syncing, killed at the first disk call after the fetch's rename of the
    // tracking ref into place: the fetch is whole, the refusal has not begun.
    const tracking = trackingFile(path.join(dir, 'history.git'))
    await runKilledChild(`
      const { nodeDisk, setDisk } = await import(${JSON.stringify(path.resolve('src/main/lib/disk.ts'))})
      const { hookDisk } = await import(${JSON.stringify(path.resolve('src/main/lib/disk-hooks.ts'))})
      const { createCore } = await import(${JSON.stringify(path.resolve('src/main/core.ts'))})
      const { createFileSecretStore } = await import(${JSON.stringify(path.resolve('src/main/settings/index.ts'))})
      const { createRecordingLogger } = await import(${JSON.stringify(path.resolve('src/main/lib/logger.ts'))})
      let moved = false
      setDisk(hookDisk(nodeDisk, (call) => {
        if (moved) process.kill(process.pid, 'SIGKILL')
        moved = call.name === 'renameSync' && String(call.args[1]) === ${JSON.stringify(tracking)}
      }).disk)
      const core = await createCore({
        dataDir: ${JSON.stringify(dir)},
        hostName: () => 'laptop',
        logger: createRecordingLogger(),
        syncTokenStore: createFileSecretStore({ file: ${JSON.stringify(path.join(dir, 'sync-token.json'))} }),
        syncDebounceMs: 3_600_000,
        env: {},
      })
      await core.dispatch('sync:now')
    `)

    const again = await sync.machine('laptop', dir)
    open = again
    // The kill came with the refused commit fetched and named by the tracking ref.
    expect(again.git('rev-parse', 'refs/remotes/cairn-sync/main').trim()).toBe(refused[0])
    for (const oid of refused) expect(has(again, oid)).toBe(true)
    expect(keeps(again).length).toBeGreaterThan(0)

    const status = await again.sync()
    expect(status.error?.code).toBe('sync-unsafe-content')
    // Before, this fetch brought nothing (the server was told the machine has the commit), no
    // pack was marked for removal, and the refused objects stayed.
    expectRemoved(again, refused, head)
    // Refused again as it stands, without fetching it.
    expect((await again.sync()).error?.message).toContain('did not download it again')
    expectRemoved(again, refused, head)
  } finally {
    if (open) await sync.stop(open)
    await rm(dir, { recursive: true, force: true, maxRetries: 10 })
  }
}, 120_000)

it("removes what a Test connection's own fetch brought of a commit the next sync refuses", async () => {
  const { repo, laptop } = await sync.alone('unjudged-test')
  const head = laptop.git('rev-parse', 'main').trim()
  const refused = pushDamaged(repo, 'tested')
  const tested = await laptop.call('sync:test', {
    url: sync.server.url(repo),
    username: sync.server.user,
    token: sync.server.token,
  })
  expect(tested.ok).toBe(true)
  // It fetched the commit to say whose memory the remote holds.
  for (const oid of refused) expect(has(laptop, oid)).toBe(true)

  expect((await laptop.sync()).error?.code).toBe('sync-unsafe-content')
  // Before, the tracking ref named the commit already, the sync's fetch brought nothing, and
  // what the Test connection fetched stayed.
  expectRemoved(laptop, refused, head)
}, 120_000)

it("judges packs left unjudged while a refusal is remembered (no fetch comes): a person's .keep stays", async () => {
  const { repo, laptop } = await sync.alone('unjudged-remembered')
  const head = laptop.git('rev-parse', 'main').trim()
  const refused = pushDamaged(repo, 'remembered')
  expect((await laptop.sync()).error?.code).toBe('sync-unsafe-content')
  expectRemoved(laptop, refused, head)
  // A pack a person made with git, kept from folds by a `.keep` of their own.
  const blob = laptop.git('rev-parse', 'main:a.md').trim()
  const theirs = execGitPack(laptop, blob)
  writeFileSync(path.join(packFolder(laptop), `${theirs}.keep`), 'kept by hand\n')
  // A Test connection fetches the refused commit again: its packs are left to the next sync.
  const tested = await laptop.call('sync:test', {
    url: sync.server.url(repo),
    username: sync.server.user,
    token: sync.server.token,
  })
  expect(tested.ok).toBe(true)
  expect(has(laptop, refused[0]!)).toBe(true)

  // Refused again without a download: no fetch's clean-up runs, yet the packs are judged.
  const status = await laptop.sync()
  expect(status.error?.message).toContain('did not download it again')
  for (const oid of refused) expect(has(laptop, oid), oid).toBe(false)
  expect(keeps(laptop)).toEqual([`${theirs}.keep`])
  expect(readdirSync(packFolder(laptop))).toContain(`${theirs}.pack`)
  laptop.git('fsck', '--strict')
  expect(laptop.git('rev-parse', 'main').trim()).toBe(head)
}, 120_000)

it('a .keep the disk will not delete after judging left packs: the refusal is said, the failure logged, the other pack released', async () => {
  const logger = createRecordingLogger()
  const { repo, laptop } = await sync.alone('unjudged-unlink', { logger })
  const head = laptop.git('rev-parse', 'main').trim()
  const refused = pushDamaged(repo, 'unlink')
  expect((await laptop.sync()).error?.code).toBe('sync-unsafe-content')
  // Two packs left unjudged: an older Cairn's fetch's (a `.keep` noting no commits), of what
  // `main` holds, and a Test connection's of the refused commit.
  const blob = laptop.git('rev-parse', 'main:a.md').trim()
  const older = execGitPack(laptop, blob)
  writeFileSync(
    path.join(packFolder(laptop), `${older}.keep`),
    'cairn: a sync is checking what its fetch brought\n',
  )
  const test = () =>
    laptop.call('sync:test', {
      url: sync.server.url(repo),
      username: sync.server.user,
      token: sync.server.token,
    })
  expect((await test()).ok).toBe(true)
  expect(keeps(laptop)).toHaveLength(2)

  // The first `.keep` to go fails once. Before, the disk's error was the sync's, not the
  // refusal, and the other pack stayed held until a restart, never judged again.
  let failing: string | null = null
  const { result: status, failed } = await withEio(
    (call) => {
      if (call.name !== 'unlinkSync' || failing !== null) return false
      const file = String(call.args[0])
      if (!file.endsWith('.keep')) return false
      failing = path.basename(file)
      return true
    },
    () => laptop.sync(),
  )
  expect(failed).toBe(1)
  expect(status.error?.message).toContain('did not download it again')
  for (const oid of refused) expect(has(laptop, oid), oid).toBe(false)
  expect(logger.entries.some((e) => e.message.includes('could not be left to maintenance'))).toBe(
    true,
  )
  expect(keeps(laptop)).toEqual([failing])

  // The next sync judges again every pack still kept: none is left held.
  const withPack = (keep: string) =>
    readdirSync(packFolder(laptop)).includes(keep.replace(/\.keep$/, '.pack'))
  expect((await laptop.sync()).error?.message).toContain('did not download it again')
  expect(keeps(laptop).filter(withPack)).toEqual([])
  expect(has(laptop, blob)).toBe(true)
  laptop.git('fsck', '--strict')
  expect(laptop.git('rev-parse', 'main').trim()).toBe(head)
}, 120_000)

/** Packs `oid` with git into the machine's pack folder; returns the pack's name. */
function execGitPack(machine: Machine, oid: string): string {
  const base = path.join(packFolder(machine), 'pack')
  const sum = git(path.join(machine.dir, 'history.git'), `${oid}\n`, 'pack-objects', base)
  return `pack-${sum}`
}

it('takes in what a Test connection fetched of a change the next sync accepts, and lets maintenance fold it', async () => {
  const { repo, laptop, desktop } = await sync.behind('unjudged-taken')
  const tested = await laptop.call('sync:test', {
    url: sync.server.url(repo),
    username: sync.server.user,
    token: sync.server.token,
  })
  expect(tested.ok).toBe(true)
  expect((await laptop.sync()).state).toBe('idle')
  expect((await laptop.files()).get('log.md')).toBe('one\ntwo\n')
  expect(keeps(laptop)).toEqual([])
  expect(laptop.git('rev-parse', 'main').trim()).toBe(desktop.git('rev-parse', 'main').trim())
  laptop.git('fsck', '--strict')
}, 120_000)

it('sets the tracking ref back when stopped between the fetch and the refusal; the next sync removes what the fetch brought', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-unjudged-stop-'))
  const gitdir = path.join(dataDir, 'history.git')
  const memory = await openVersionedMemory({
    dataDir,
    watch: false,
    maintenance: false,
    machine: 'desktop',
    logger: createRecordingLogger(),
  })
  // Once armed: the first time the sync enters the queue after a fetch, Stop is pressed.
  let armed = false
  let fetched = false
  let stopped: Promise<unknown> | null = null
  const gitOfSync: HistoryGit = {
    ...memory.git,
    transfer: async <T>(task: () => Promise<T>) => {
      const done = await memory.git.transfer(task)
      fetched ||= armed
      return done
    },
    exclusive: async (task) => {
      if (fetched && stopped === null) stopped = service.stop()
      return memory.git.exclusive(task)
    },
  }
  const service = syncServiceOver(dataDir, memory, gitOfSync)
  try {
    await memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'mine\n' },
      { actor: 'user' },
    )
    const repo = sync.newRepo('unjudged-stop')
    await service.configure({
      url: sync.server.url(repo),
      username: sync.server.user,
      token: sync.server.token,
      intervalMinutes: 0,
    })
    expect((await service.syncNow()).state).toBe('idle')
    const tracking = git(gitdir, null, 'rev-parse', 'refs/remotes/cairn-sync/main')
    const head = git(gitdir, null, 'rev-parse', 'main')
    const refused = pushDamaged(repo, 'stopped')

    armed = true
    expect((await service.syncNow()).error?.code).toBe('sync-stopped')
    await stopped
    // Stopped with the commit fetched: the tracking ref is where it was before the sync.
    expect(() => git(gitdir, null, 'cat-file', '-e', refused[0]!)).not.toThrow()
    expect(git(gitdir, null, 'rev-parse', 'refs/remotes/cairn-sync/main')).toBe(tracking)

    armed = false
    fetched = false
    expect((await service.syncNow()).error?.code).toBe('sync-unsafe-content')
    // Before, the Stop left the tracking ref on the commit and its packs released: this sync
    // fetched nothing, and the refused objects stayed.
    for (const oid of refused) {
      expect(() => git(gitdir, null, 'cat-file', '-e', oid), oid).toThrow()
    }
    expect(
      readdirSync(path.join(gitdir, 'objects', 'pack')).filter((f) => f.endsWith('.keep')),
    ).toEqual([])
    git(gitdir, null, 'fsck', '--strict')
    expect(git(gitdir, null, 'rev-parse', 'main')).toBe(head)
  } finally {
    await service.close()
    await memory.close()
    await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
  }
}, 120_000)

it('removes what a fetch brought when the sync asked first (an unrelated history) and the answer found it refused', async () => {
  const { repo, laptop } = await sync.alone('unjudged-question')
  const head = laptop.git('rev-parse', 'main').trim()
  // The remote now holds an unrelated history Cairn refuses once it reads its files (a link),
  // though the question about it reads only its listing.
  const remote = sync.server.gitdir(repo)
  const target = git(remote, '../outside asked\n', 'hash-object', '-w', '--stdin')
  const note = git(remote, 'theirs asked\n', 'hash-object', '-w', '--stdin')
  const tree = git(remote, `120000 blob ${target}\tlink.md\n100644 blob ${note}\tn.md\n`, 'mktree')
  const lone = git(remote, null, 'commit-tree', tree, '-m', 'unrelated, with a link')
  git(remote, null, 'update-ref', 'refs/heads/main', lone)
  const refused = [lone, tree, target, note]
  const asked = await laptop.sync()
  expect(asked.error?.code).toBe('sync-join-needed')
  // The question is asked before the content is judged: the fetch's packs wait, unjudged.
  for (const oid of refused) expect(has(laptop, oid), oid).toBe(true)

  const answered = await laptop.call('sync:join', { choice: 'merge' })
  expect(answered.error?.code).toBe('sync-unsafe-content')
  // Before, the question released the packs as judged, the answer's fetch brought nothing
  // (the tracking ref named the commit), and the refused objects stayed for good.
  expectRemoved(laptop, refused, head)
}, 120_000)
