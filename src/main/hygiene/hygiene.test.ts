import { mkdir, stat, truncate, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  reply,
  startFakeAnthropic,
  type FakeAnthropic,
  type FakeResponse,
} from '../../../test/fixtures/fake-anthropic'
import type { RequestChannel, RequestResults } from '../../shared/contract'
import type { AgentEvent } from '../../shared/types'
import { createCore, type Core } from '../core'
import { MAX_VERSIONED_BYTES, openVersionedMemory, type VersionedMemory } from '../history'
import { commitCount, fsck, gitCli, tempDataDir, userWrite } from '../history/test-helpers'
import { createRecordingLogger } from '../lib/logger'
import { MAX_VIEW_CHARS } from '../memory'
import { createReviewService, type ReviewService } from '../review'
import { createHygieneService, MAX_PROPOSALS, type HygieneService } from './hygiene-service'
import { openReadLog } from './read-log'

const DAY = 24 * 60 * 60 * 1000

let dataDir: string
let cleanup: () => Promise<void>

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

describe('through the core', () => {
  let core: Core
  let fake: FakeAnthropic

  beforeEach(async () => {
    fake = await startFakeAnthropic()
    core = await createCore({
      dataDir,
      env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: fake.url },
      anthropicMaxRetries: 0,
    })
  })
  afterEach(async () => {
    await core.close()
    await fake.close()
  })

  async function call<C extends RequestChannel>(channel: C, payload?: unknown) {
    const result = await core.dispatch(channel, payload)
    if (!result.ok) throw new Error(`${channel}: ${result.error.code} ${result.error.message}`)
    return result.value as RequestResults[C]
  }

  async function turn(...responses: FakeResponse[]) {
    fake.script(...responses)
    const { turnId } = await call('chat:send', { conversationId: null, text: 'go', clientId: 'c' })
    await new Promise<void>((resolve) => {
      const stop = core.events.on((name, data) => {
        const event = data as AgentEvent
        if (name === 'agent:event' && event.turnId === turnId && event.type === 'turn-finished') {
          stop()
          resolve()
        }
      })
    })
  }

  it('records when Claude read and changed each file, not folder views', async () => {
    await call('memory:write', { path: '/memories/mine.md', content: 'by hand\n' })
    await turn(
      reply.toolUse({ input: { command: 'view', path: '/memories' } }),
      reply.toolUse({ input: { command: 'view', path: '/memories/mine.md' } }),
      reply.toolUse({
        input: { command: 'create', path: '/memories/claude.md', file_text: 'by Claude\n' },
      }),
      reply.text('ok'),
    )
    const stats = await call('hygiene:stats')
    const byPath = new Map(stats.files.map((f) => [f.path, f]))
    expect(byPath.get('/memories/mine.md')).toMatchObject({ lastChangedAt: null })
    expect(byPath.get('/memories/mine.md')!.lastReadAt).toEqual(expect.any(Number))
    expect(byPath.get('/memories/claude.md')).toMatchObject({ lastReadAt: null })
    expect(byPath.get('/memories/claude.md')!.lastChangedAt).toEqual(expect.any(Number))
  })

  it('meters a text file named like an image as the text Claude is shown', async () => {
    // Claude's view shows a `.png` that holds text as text (numbered lines, cut when too long).
    const long = Array.from({ length: 900 }, (_, i) => `line ${i}: ${'x'.repeat(20)}`).join('\n')
    await call('memory:write', { path: '/memories/notes.png', content: long })
    const stats = await call('hygiene:stats')
    const notes = stats.files.find((f) => f.path === '/memories/notes.png')!
    // On main: an image's most, 1,600 tokens, and never too long for one view.
    expect(notes.tokens).toBeGreaterThan(long.length / 4)
    expect(notes.overViewLimit).toBe(true)
  })

  it('meters the memory: total size, tokens to view it all, and files too long for one view', async () => {
    const long = Array.from({ length: 900 }, (_, i) => `line ${i}: ${'x'.repeat(20)}`).join('\n')
    await call('memory:write', { path: '/memories/short.md', content: 'Likes tea.\n' })
    await call('memory:write', { path: '/memories/long.md', content: long })
    const stats = await call('hygiene:stats')
    expect(stats.totalBytes).toBe(11 + Buffer.byteLength(long))
    expect(stats.viewLimit).toBe(MAX_VIEW_CHARS)
    const byPath = new Map(stats.files.map((f) => [f.path, f]))
    expect(byPath.get('/memories/long.md')!.overViewLimit).toBe(true)
    expect(byPath.get('/memories/short.md')!.overViewLimit).toBe(false)
    // About four characters a token, plus line numbers: well within a factor of two.
    expect(byPath.get('/memories/long.md')!.tokens).toBeGreaterThan(long.length / 4)
    expect(byPath.get('/memories/long.md')!.tokens).toBeLessThan(long.length / 2)
    expect(stats.totalTokens).toBeGreaterThan(
      byPath.get('/memories/long.md')!.tokens + byPath.get('/memories/short.md')!.tokens,
    )
    // Proof that one view cannot show it: Claude's own view of it is cut.
    await turn(
      reply.toolUse({ id: 'toolu_long', input: { command: 'view', path: '/memories/long.md' } }),
      reply.text('ok'),
    )
    const viewed = fake.messageRequests()[1]!.body!.messages!.at(-1)!.content as Array<{
      content: string
    }>
    expect(viewed[0]!.content).toContain('[Output cut')
  })

  it('expires a file as a delete commit named "expire", which History brings back', async () => {
    await call('memory:write', { path: '/memories/old.md', content: 'stale\n' })
    const expired = await call('hygiene:expire', { path: '/memories/old.md' })
    expect(expired.message).toBe(
      'Expired /memories/old.md. History keeps it: you can bring it back from there.',
    )
    expect(expired.commit).toMatchObject({ actor: 'user', command: 'delete', subject: 'expire' })
    expect(gitCli(dataDir, 'log', '-1', '--format=%s%n%an').trim()).toBe('expire\nYou')
    expect((await call('memory:tree')).map((e) => e.path)).toEqual([])
    await call('history:restoreDeleted', { path: '/memories/old.md' })
    expect(await call('memory:read', { path: '/memories/old.md' })).toMatchObject({
      text: 'stale\n',
    })
    fsck(dataDir)
  })

  it('refuses to expire a file History holds no copy of, and keeps it', async () => {
    const big = path.join(dataDir, 'memories', 'export.log')
    await writeFile(big, '')
    await truncate(big, MAX_VERSIONED_BYTES + 1)
    const commits = commitCount(dataDir)
    const result = await core.dispatch('hygiene:expire', { path: '/memories/export.log' })
    expect(result).toMatchObject({ ok: false, error: { code: 'too-large' } })
    if (!result.ok) {
      expect(result.error.message).toContain('is not in History')
      expect(result.error.message).not.toContain('History keeps it')
      expect(result.error.message).not.toContain(dataDir)
    }
    expect((await stat(big)).size).toBe(MAX_VERSIONED_BYTES + 1)
    expect(commitCount(dataDir)).toBe(commits)
  })

  it('refuses to expire a folder, a missing file or a bad path, changing nothing', async () => {
    await call('memory:write', { path: '/memories/d/a.md', content: 'a\n' })
    const attempts: Array<[string, string]> = [
      ['/memories/d', 'not-a-file'],
      ['/memories/nope.md', 'not-found'],
      ['/memories/../etc/passwd', 'invalid-path'],
      ['/memories', 'not-found'],
    ]
    for (const [file, code] of attempts) {
      const result = await core.dispatch('hygiene:expire', { path: file })
      expect(result).toMatchObject({ ok: false, error: { code } })
      if (!result.ok) expect(result.error.message).not.toContain(dataDir)
    }
    expect(commitCount(dataDir)).toBe(1)
  })
})

describe('expiry proposals', () => {
  let memory: VersionedMemory
  let review: ReviewService
  let hygiene: HygieneService
  const realNow = Date.now()
  let clock = realNow

  beforeEach(async () => {
    clock = realNow - 100 * DAY
    memory = await openVersionedMemory({ dataDir, watch: false })
    review = createReviewService({ memory, now: () => clock })
    const readLog = await openReadLog({
      dataDir,
      now: () => clock,
      logger: createRecordingLogger(),
    })
    hygiene = createHygieneService({ memory, readLog, review, now: () => clock })
    memory.onCommit((commit) => hygiene.noteCommit(commit))
  })
  afterEach(async () => {
    review.close()
    await hygiene.close()
    await memory.close()
  })

  it('proposes expiring files unread for N days, as pending changes from Cairn, never silently', async () => {
    await userWrite(memory, '/memories/read.md', 'read lately\n')
    await userWrite(memory, '/memories/unread.md', 'never read\n')
    clock = realNow + 35 * DAY
    await hygiene.noteViewed('/memories/read.md')
    clock = realNow + 40 * DAY

    hygiene.setExpireAfterDays(null)
    expect(await hygiene.proposeExpiries()).toEqual([])
    hygiene.setExpireAfterDays(30)
    const proposed = await hygiene.proposeExpiries()
    expect(proposed).toMatchObject([
      {
        origin: 'cairn',
        toolUseId: null,
        conversationId: null,
        command: 'delete',
        path: '/memories/unread.md',
        before: 'never read\n',
        after: null,
      },
    ])
    // Proposed, not done: the file is there and nothing was committed for it.
    expect(commitCount(dataDir)).toBe(2)
    expect(await hygiene.proposeExpiries()).toEqual([])
    expect(review.list()).toHaveLength(1)

    const decided = await review.decide({ id: proposed[0]!.id, decision: 'approve' })
    expect(decided.commit).toMatchObject({
      actor: 'system',
      command: 'delete',
      subject: 'expire',
      review: 'approved',
    })
    expect(gitCli(dataDir, 'log', '-1', '--format=%an%n%B')).toContain('Cairn\nexpire\n')
    expect(gitCli(dataDir, 'log', '-1', '--format=%B')).toContain('Reviewed-by: You')
    await memory.restoreDeleted('/memories/unread.md')
    fsck(dataDir)
  })

  it('never proposes expiring a file History holds no copy of', async () => {
    await userWrite(memory, '/memories/old.md', 'old\n')
    const big = path.join(dataDir, 'memories', 'export.log')
    await writeFile(big, '')
    await truncate(big, MAX_VERSIONED_BYTES + 1)
    clock = realNow + 40 * DAY
    hygiene.setExpireAfterDays(30)
    const proposed = await hygiene.proposeExpiries()
    expect(proposed.map((change) => change.path)).toEqual(['/memories/old.md'])
  })

  it('does not propose again a file the person chose to keep', async () => {
    await userWrite(memory, '/memories/keep.md', 'keep me\n')
    clock = realNow + 40 * DAY
    hygiene.setExpireAfterDays(30)
    const [proposal] = await hygiene.proposeExpiries()
    await review.decide({ id: proposal!.id, decision: 'decline' })
    expect(await hygiene.proposeExpiries()).toEqual([])
    clock += 31 * DAY
    expect(await hygiene.proposeExpiries()).toHaveLength(1)
  })

  it('keeps at most a batch of proposals waiting at once', async () => {
    await mkdir(path.join(dataDir, 'memories', 'many'), { recursive: true })
    for (let i = 0; i < MAX_PROPOSALS + 5; i++) {
      await writeFile(path.join(dataDir, 'memories', 'many', `f${i}.md`), `${i}\n`)
    }
    clock = realNow + 40 * DAY
    hygiene.setExpireAfterDays(30)
    expect(await hygiene.proposeExpiries()).toHaveLength(MAX_PROPOSALS)
    expect(await hygiene.proposeExpiries()).toHaveLength(0)
  })
})
