/**
 * Stop with several memory calls in one reply. The SDK starts every call of a reply at once;
 * they wait their turn in the history's serial queue. Stop pressed while the first runs lets
 * that one finish and commit, and nothing queued behind it runs or commits (issue #5, Stop).
 * The real SDK against the fake Messages API, the real versioned memory (git).
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import {
  reply,
  startFakeAnthropic,
  type FakeAnthropic,
} from '../../../test/fixtures/fake-anthropic'
import type { AgentEvent } from '../../shared/types'
import { createConversationStore } from '../conversations'
import { openVersionedMemory, type VersionedMemory } from '../history'
import { createRecordingLogger } from '../lib/logger'
import { createRunnableMemoryTool } from '../memory'
import { createMemorySecretStore, createSettingsService } from '../settings'
import { createChatService } from './chat-service'
import { NOT_RUN_STOPPED } from './messages'
import type { TurnMemory } from './run-turn'

let dataDir: string
let fake: FakeAnthropic
let memory: VersionedMemory

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-stop-queued-'))
  fake = await startFakeAnthropic()
  memory = await openVersionedMemory({ dataDir, logger: createRecordingLogger() })
})

afterEach(async () => {
  await memory.close()
  await fake.close()
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
})

const gitLog = () =>
  execFileSync('git', [`--git-dir=${path.join(dataDir, 'history.git')}`, 'log', '--format=%s'], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n')

it('runs none of the calls still queued behind a running one when Stop is pressed', async () => {
  // The first create holds the queue (inside it, after its dry run) until the test lets go,
  // so Stop lands while it runs and the second waits behind it.
  let running!: () => void
  const firstRunning = new Promise<void>((resolve) => (running = resolve))
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  const gated: TurnMemory = {
    execute: (input, origin, options) =>
      memory.execute(input, origin, {
        ...options,
        beforeRun:
          (input as { path?: string }).path === '/memories/a.md'
            ? async () => {
                running()
                await released
                return { run: true }
              }
            : undefined,
      }),
  }
  const events: AgentEvent[] = []
  const conversations = createConversationStore({ dataDir })
  const chat = createChatService({
    conversations,
    settings: createSettingsService({
      dataDir,
      secretStore: createMemorySecretStore(),
      env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: fake.url },
    }),
    memory: gated,
    memoryHead: () => memory.head(),
    createMemoryTool: createRunnableMemoryTool,
    emit: (event) => events.push(event),
    onConversationChanged: () => {},
    maxRetries: 0,
    logger: createRecordingLogger(),
  })
  fake.script(
    reply.toolUses([
      { id: 'toolu_A', input: { command: 'create', path: '/memories/a.md', file_text: 'A\n' } },
      { id: 'toolu_B', input: { command: 'create', path: '/memories/b.md', file_text: 'B\n' } },
      { id: 'toolu_C', input: { command: 'view', path: '/memories' } },
    ]),
    reply.text('never asked for'),
  )
  const { conversationId } = await chat.send(null, 'remember two things', 'client-1')
  await firstRunning
  // Every call of the reply has been handed to the memory by now (the runner starts them together).
  expect(events.filter((e) => e.type === 'tool-call').map((e) => e.toolUseId)).toEqual([
    'toolu_A',
    'toolu_B',
    'toolu_C',
  ])
  chat.stop(conversationId)
  release()
  await chat.settled(conversationId)
  await chat.close()

  expect(gitLog()).toEqual(['create /memories/a.md'])
  expect(memory.head()).not.toBeNull()
  expect(fake.messageRequests()).toHaveLength(1)
  const stored = await conversations.get(conversationId)
  expect(stored.messages.at(-1)?.content).toEqual([
    {
      type: 'tool_result',
      tool_use_id: 'toolu_A',
      content: 'File created successfully at: /memories/a.md',
      is_error: false,
    },
    { type: 'tool_result', tool_use_id: 'toolu_B', content: NOT_RUN_STOPPED, is_error: true },
    { type: 'tool_result', tool_use_id: 'toolu_C', content: NOT_RUN_STOPPED, is_error: true },
  ])
  expect(Object.keys(stored.toolCommits)).toEqual(['toolu_A'])
  const results = events.filter((e) => e.type === 'tool-result')
  expect(results.map((e) => [e.toolUseId, e.isError])).toEqual([
    ['toolu_A', false],
    ['toolu_B', true],
    ['toolu_C', true],
  ])
})
