/**
 * Stop while the SDK waits to retry (issue #5: the user can stop a turn at any moment; Cairn
 * uses the SDK's retries). The API answers 529 and asks for a 59-second wait; Stop ends the turn
 * during that wait, no second request goes out, and the conversation goes on. Through the real
 * core with the SDK's retries on, against the fake Messages API.
 */
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
import { callCore } from '../core-test-support'
import { createCore, type Core } from '../core'
import { createRecordingLogger } from '../lib/logger'

let dataDir: string
let fake: FakeAnthropic
let core: Core
let events: AgentEvent[]
const waiters = new Set<() => void>()

/** Resolves once the turn has finished (woken by the core's events). */
function finished(turnId: string): Promise<void> {
  const check = () => events.some((e) => e.turnId === turnId && e.type === 'turn-finished')
  return new Promise((resolve) => {
    const wake = () => {
      if (!check()) return
      waiters.delete(wake)
      resolve()
    }
    waiters.add(wake)
    wake()
  })
}

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-retry-wait-'))
  fake = await startFakeAnthropic()
  core = await createCore({
    dataDir,
    env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: fake.url },
    anthropicMaxRetries: 2,
    logger: createRecordingLogger(),
  })
  events = []
  core.events.on((name, data) => {
    if (name !== 'agent:event') return
    events.push(data as AgentEvent)
    for (const wake of [...waiters]) wake()
  })
})

afterEach(async () => {
  await core.close()
  await fake.close()
  await rm(dataDir, { recursive: true, force: true })
})

it('ends the turn at Stop while the SDK waits to retry an overloaded API', async () => {
  // The SDK honours a retry-after-ms under a minute: a wait no test would sit through.
  fake.script(reply.error(529, { retryAfterMs: 59_000 }), reply.text('Never sent'))
  const { conversationId, turnId } = await callCore(core, 'chat:send', {
    conversationId: null,
    text: 'hi',
    clientId: 'c-1',
  })
  const done = finished(turnId)
  await fake.waitForMessageRequests(1)
  await callCore(core, 'chat:stop', { conversationId })
  await done
  const mine = events.filter((e) => e.turnId === turnId)
  expect(mine.at(-1)).toMatchObject({ type: 'turn-finished', stopped: true })
  expect(mine.some((e) => e.type === 'error')).toBe(false)
  expect(fake.messageRequests()).toHaveLength(1)
  expect(fake.remaining()).toBe(1)

  const next = await callCore(core, 'chat:send', { conversationId, text: 'again', clientId: 'c-2' })
  await finished(next.turnId)
  expect(events.filter((e) => e.turnId === next.turnId).some((e) => e.type === 'error')).toBe(false)
  const stored = await callCore(core, 'conversations:get', { id: conversationId })
  expect(stored.messages.map((m) => m.role)).toEqual(['user', 'user', 'assistant'])
  expect(stored.messages.at(-1)!.content).toEqual([{ type: 'text', text: 'Never sent' }])
})
