/**
 * Issue #14 against #13's review gate: a sync that runs while a change Claude asked for is
 * held for review. The sync neither waits for the person's decision nor lets the held change
 * land, unseen, over the text the other machine sent; the real SDK loop runs against the fake
 * Messages API and the other machine syncs through the real git server on loopback.
 */
import { execFileSync } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { reply } from '../../../test/fixtures/fake-anthropic'
import type { PendingChange } from '../../shared/types'
import { coreThroughFakeApi } from '../core-test-support'
import { expectSound, useSyncServer } from './test-support'

let pendingEvents: Array<ReadonlyArray<PendingChange>> = []
beforeEach(() => {
  pendingEvents = []
})
const sync = useSyncServer()
const cairn = coreThroughFakeApi({
  prefix: 'probe34b-review-14-',
  quiet: true,
  onEvent: (name, data) => {
    if (name === 'review:pending') pendingEvents.push(data as ReadonlyArray<PendingChange>)
  },
})
const { call, until, finished } = cairn

function git(...args: string[]): string {
  return execFileSync('git', [`--git-dir=${path.join(cairn.dataDir, 'history.git')}`, ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cairn.dataDir },
  })
}
const memoryFile = (name: string) =>
  readFile(path.join(cairn.dataDir, 'memories', name), 'utf8').catch(() => null)

describe('a sync while a review holds a change', () => {
  it('brings the other machine’s edit at once; the held change never lands over it unseen', async () => {
    const repo = sync.newRepo('review-held')
    cairn.fake.script(
      reply.toolUse({
        id: 'toolu_seed',
        input: { command: 'create', path: '/memories/n.md', file_text: 'tea: green\n' },
      }),
      reply.text('Saved.'),
    )
    await cairn.turn(null, 'Remember my tea')
    await call('sync:configure', {
      url: sync.server.url(repo),
      username: sync.server.user,
      token: sync.server.token,
      intervalMinutes: 0,
    })
    expect((await call('sync:now')).state).toBe('idle')
    const laptop = await sync.machine('laptop')
    await laptop.connect(sync.server, repo)
    expect((await laptop.sync()).state).toBe('idle')

    await call('settings:update', { reviewMode: 'all' })
    cairn.fake.script(
      reply.toolUse({
        id: 'toolu_held',
        input: {
          command: 'str_replace',
          path: '/memories/n.md',
          old_str: 'tea: green',
          new_str: 'tea: green, no sugar',
        },
      }),
      reply.text('ok'),
    )
    const { turnId } = await cairn.send(null, 'no sugar')
    await until(() => (pendingEvents.at(-1)?.length ?? 0) === 1)
    const [held] = await call('review:list')

    await laptop.write('n.md', 'tea: black\n')
    expect((await laptop.sync()).state).toBe('idle')
    // The held change does not hold the sync.
    const status = await call('sync:now')
    expect(status.state).toBe('idle')
    expect(await memoryFile('n.md')).toBe('tea: black\n')

    const result = await cairn.core.dispatch('review:decide', {
      id: held!.id,
      decision: 'approve',
      revision: held!.revision,
    })
    expect(result.ok).toBe(false)
    if (!result.ok) {
      expect(result.error.code).toBe('review-unappliable')
      expect(result.error.message).not.toContain(cairn.dataDir)
    }
    expect(await memoryFile('n.md')).toBe('tea: black\n')
    const [again] = await call('review:list')
    expect(again!.problem ?? '').toMatch(/tea: green/)
    await call('review:decide', { id: again!.id, decision: 'decline' })
    await finished(turnId)
    expect(await memoryFile('n.md')).toBe('tea: black\n')
    expect(git('log', '--format=%(trailers:key=Tool-Use-Id,valueonly)', 'main')).not.toContain(
      'toolu_held',
    )
    expect((await call('sync:now')).state).toBe('idle')
    expect(sync.server.git(repo, 'rev-parse', 'main')).toBe(git('rev-parse', 'main'))
    git('fsck', '--strict', '--no-dangling')
    await expectSound(sync.server, repo, [laptop])
  }, 120_000)
})
