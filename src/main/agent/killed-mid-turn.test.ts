/**
 * Cairn killed in the middle of a turn (issue #5: a conversation reopened after a restart
 * continues; memory is consistent with history). A child process runs the real core against the
 * fake Messages API; Claude's create runs and commits; the child is killed (SIGKILL) while the
 * next request of the turn waits for its answer. A new core on the same folder then finds the
 * commit in history, as `git` sees it, and the conversation continues with every call answered.
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import {
  invalidMessages,
  reply,
  sse,
  startFakeAnthropic,
  type FakeAnthropic,
} from '../../../test/fixtures/fake-anthropic'
import { callCore, killChatChild } from '../core-test-support'
import { createCore, type Core } from '../core'
import { createRecordingLogger } from '../lib/logger'

const CHILD = path.resolve('test/fixtures/chat-child.ts')

let dataDir: string
let fake: FakeAnthropic
let core: Core | null = null

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-killed-turn-'))
  fake = await startFakeAnthropic()
})

afterEach(async () => {
  await core?.close()
  core = null
  await fake.close()
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
})

function git(...args: string[]): string {
  return execFileSync('git', [`--git-dir=${path.join(dataDir, 'history.git')}`, ...args], {
    encoding: 'utf8',
  })
}

it('finds the command committed and the conversation able to go on after a kill mid-turn', async () => {
  fake.script(
    reply.toolUse({
      id: 'toolu_kill',
      input: { command: 'create', path: '/memories/plan.md', file_text: 'step 1\n' },
    }),
    // The turn's next request is never answered: the child is killed while it waits.
    reply.raw('', { head: false, ending: 'hang' }),
  )
  const conversationId = await killChatChild(
    [dataDir, fake.url, 'Plan it'],
    fake.waitForMessageRequests(2),
  )

  core = await createCore({
    dataDir,
    env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: fake.url },
    anthropicMaxRetries: 0,
    logger: createRecordingLogger(),
  })
  // The create ran and committed before the kill; history and the folder agree.
  const head = git('rev-parse', 'HEAD').trim()
  expect(git('show', `${head}:plan.md`)).toBe('step 1\n')
  expect(await readFile(path.join(dataDir, 'memories', 'plan.md'), 'utf8')).toBe('step 1\n')
  expect(git('log', '-1', '--format=%B', head)).toContain('Tool-Use-Id: toolu_kill')
  expect(git('log', '-1', '--format=%B', head)).toContain(`Conversation-Id: ${conversationId}`)
  git('fsck', '--strict')

  const stored = await callCore(core, 'conversations:get', { id: conversationId })
  expect(stored.messages.slice(0, 2).map((m) => m.role)).toEqual(['user', 'assistant'])
  expect(stored.messages[1]!.content).toEqual([expect.objectContaining({ id: 'toolu_kill' })])

  fake.script(reply.text('Carrying on.'))
  const events: unknown[] = []
  const finished = new Promise<void>((resolve) =>
    core!.events.on((name, data) => {
      if (name !== 'agent:event') return
      events.push(data)
      if ((data as { type: string }).type === 'turn-finished') resolve()
    }),
  )
  await callCore(core, 'chat:send', { conversationId, text: 'Go on', clientId: 'after' })
  await finished
  expect(events.some((e) => (e as { type: string }).type === 'error')).toBe(false)
  const sent = fake.messageRequests().at(-1)!.body!.messages!
  expect(invalidMessages(sent)).toBeNull()
  // Claude learns the create's result: saved before the kill, or found in history by its
  // Tool-Use-Id when the kill came first (never "may or may not have run": it did).
  const answer = (sent[2]!.content as Array<Record<string, unknown>>)[0]
  expect(answer).toEqual({
    type: 'tool_result',
    tool_use_id: 'toolu_kill',
    content: 'File created successfully at: /memories/plan.md',
  })
  const after = await callCore(core, 'conversations:get', { id: conversationId })
  expect(after.toolCommits).toEqual({ toolu_kill: head })
})

it('says after a restart that the turn a kill cut off did not finish, until the person dismisses it', async () => {
  // Half a reply streams in, then the API says nothing more until the child is killed.
  fake.script(reply.raw(sse.messageStart() + sse.text(0, 'Half a rep'), { ending: 'hang' }))
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, fake.url, 'Tell me'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let said = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (said += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('close', (_code, signal) => resolve(signal)),
  )
  const told = new Promise<void>((resolve) =>
    child.stdout.on('data', () => /^turn \S+$/m.test(said) && resolve()),
  )
  await Promise.race([
    Promise.all([fake.waitForMessageRequests(1), told]),
    exited.then(() => {
      throw new Error(`the child ended early: ${stderr}`)
    }),
  ])
  child.kill('SIGKILL')
  expect(await exited).toBe('SIGKILL')
  const conversationId = /^sent (\S+)$/m.exec(said)![1]!
  const turnId = /^turn (\S+)$/m.exec(said)![1]!

  core = await createCore({
    dataDir,
    env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: fake.url },
    anthropicMaxRetries: 0,
    logger: createRecordingLogger(),
  })
  const stored = await callCore(core, 'conversations:get', { id: conversationId })
  expect(stored.messages.map((m) => m.role)).toEqual(['user'])
  expect(stored.openTurn).toBe(turnId)
  expect(stored.lastError).toBeUndefined()

  // Dismissed, it is not told again, nor after another restart; the conversation keeps its
  // place in the list (dismissing is no news).
  await callCore(core, 'chat:dismiss', { conversationId, turnId })
  expect(
    (await callCore(core, 'conversations:get', { id: conversationId })).openTurn,
  ).toBeUndefined()
  await core.close()
  core = await createCore({
    dataDir,
    env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: fake.url },
    anthropicMaxRetries: 0,
    logger: createRecordingLogger(),
  })
  const after = await callCore(core, 'conversations:get', { id: conversationId })
  expect(after.openTurn).toBeUndefined()
  expect(after.updatedAt).toBe(stored.updatedAt)
  expect(after.messages).toEqual(stored.messages)
})
