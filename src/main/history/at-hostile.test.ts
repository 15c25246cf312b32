import { afterEach, describe, expect, it } from 'vitest'
import type { CommitSummary } from '../../shared/types'
import { createCore, type Core } from '../core'
import { gitCli, memoryTestBed } from './test-helpers'

// Acceptance of issue #12 the hostile way: "memory at a commit", blame, compare and search
// given an id that names a real object of the history which is not a commit (a file's
// version, a folder's tree), or a commit from before a file existed.

const bed = memoryTestBed({ memory: false })
let core: Core | null = null

// Registered after the bed's: runs first, while the folder is still there.
afterEach(async () => {
  await core?.close()
  core = null
})

describe('reading history at an id that is no commit', () => {
  it('refuses a blob or tree id plainly, for every channel that takes one, and changes nothing', async () => {
    const { dataDir } = bed
    core = await createCore({ dataDir })
    const call = (channel: string, payload: unknown) => core!.dispatch(channel, payload)
    const written = await call('memory:write', { path: '/memories/d/a.md', content: 'one\n' })
    const commit = (written as { value: { commit: CommitSummary } }).value.commit.oid
    await call('memory:write', { path: '/memories/d/a.md', content: 'two\n' })
    const blob = gitCli(dataDir, 'rev-parse', `${commit}:d/a.md`).trim()
    const tree = gitCli(dataDir, 'rev-parse', `${commit}^{tree}`).trim()
    const sub = gitCli(dataDir, 'rev-parse', `${commit}:d`).trim()
    const before = gitCli(dataDir, 'rev-parse', 'main').trim()

    for (const id of [blob, tree, sub]) {
      const requests: Array<[string, unknown]> = [
        ['memory:tree', { at: id }],
        ['memory:read', { path: '/memories/d/a.md', at: id }],
        ['history:blame', { path: '/memories/d/a.md', oid: id }],
        ['history:compare', { from: id }],
        ['history:compare', { from: commit, to: id }],
        ['history:search', { text: 'one', matchCase: true, before: id }],
        ['history:show', { oid: id }],
        ['history:readAt', { path: '/memories/d/a.md', oid: id }],
      ]
      for (const [channel, payload] of requests) {
        const answer = await call(channel, payload)
        const what = `${channel} ${JSON.stringify(payload)}`
        expect(answer, what).toMatchObject({ ok: false })
        const error = (answer as { error: { code: string; message: string } }).error
        // A plain refusal, not a fault of Cairn's, saying nothing of the host.
        expect(error.code, what).toBe('not-found')
        expect(JSON.stringify(answer), what).not.toContain(dataDir)
        expect(error.message, what).not.toMatch(/\n\s+at /)
      }
    }
    expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(before)
    expect(gitCli(dataDir, 'fsck', '--no-dangling')).toBe('')
  })

  it('says a file did not exist yet at a commit before it was written', async () => {
    const { dataDir } = bed
    core = await createCore({ dataDir })
    const call = (channel: string, payload: unknown) => core!.dispatch(channel, payload)
    const first = await call('memory:write', { path: '/memories/a.md', content: 'a\n' })
    const oid = (first as { value: { commit: CommitSummary } }).value.commit.oid
    await call('memory:write', { path: '/memories/b.md', content: 'b\n' })
    expect(await call('memory:read', { path: '/memories/b.md', at: oid })).toMatchObject({
      ok: false,
      error: { code: 'not-found' },
    })
    expect(await call('history:blame', { path: '/memories/b.md', oid })).toMatchObject({
      ok: false,
      error: { code: 'not-found' },
    })
    expect(await call('history:readAt', { path: '/memories/b.md', oid })).toMatchObject({
      ok: true,
      value: null,
    })
  })
})
