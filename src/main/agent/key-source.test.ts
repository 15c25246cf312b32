/**
 * Which API key a turn sends when `ANTHROPIC_API_KEY` is set and a key is saved in Settings, and
 * what a 401 tells the person: through createCore + dispatch, the real SDK and the fake API.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  apiKeyOf,
  reply,
  startFakeAnthropic,
  type FakeAnthropic,
} from '../../../test/fixtures/fake-anthropic'
import type { RequestChannel } from '../../shared/contract'
import type { AgentEvent } from '../../shared/types'
import { createCore, type Core } from '../core'
import { callCore } from '../core-test-support'

const ENV_KEY = `sk-ant-api03-${'r'.repeat(93)}AA`
const SAVED_KEY = `sk-ant-api03-${'g'.repeat(93)}AA`

let dataDir: string
let fake: FakeAnthropic
let core: Core
const events: AgentEvent[] = []

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-key-source-'))
  fake = await startFakeAnthropic()
  events.length = 0
  core = await createCore({
    dataDir,
    env: { ANTHROPIC_API_KEY: ENV_KEY, ANTHROPIC_BASE_URL: fake.url },
    anthropicMaxRetries: 0,
  })
  core.events.on((name, data) => {
    if (name === 'agent:event') events.push(data as AgentEvent)
  })
})

afterEach(async () => {
  await core.close()
  await fake.close()
  await rm(dataDir, { recursive: true, force: true })
})

const call = <C extends RequestChannel>(channel: C, payload?: unknown) =>
  callCore(core, channel, payload)

let clientIds = 0

// One turn through chat:send; resolves with its error event (null when it went well).
async function turn(conversationId: string | null, text: string) {
  const sent = await call('chat:send', { conversationId, text, clientId: `c-${++clientIds}` })
  await new Promise<void>((resolve) => {
    const finished = () =>
      events.some((e) => e.turnId === sent.turnId && e.type === 'turn-finished')
    if (finished()) return resolve()
    const stop = core.events.on(() => {
      if (!finished()) return
      stop()
      resolve()
    })
  })
  const error = events.find((e) => e.turnId === sent.turnId && e.type === 'error')
  return { id: sent.conversationId, error: error?.type === 'error' ? error : null }
}

describe('a key saved in Settings and ANTHROPIC_API_KEY', () => {
  it('uses the saved key once the person saves one after a 401 that names the environment', async () => {
    expect(await call('settings:get')).toMatchObject({ apiKeySource: 'env', envApiKey: true })

    fake.script(reply.error(401))
    const first = await turn(null, 'hi')
    expect(apiKeyOf(fake.messageRequests()[0]!)).toBe(ENV_KEY)
    expect(first.error).toMatchObject({ code: 'invalid-api-key' })
    expect(first.error?.message).toContain('ANTHROPIC_API_KEY environment variable')

    const saved = await call('settings:setApiKey', { key: SAVED_KEY })
    expect(saved).toMatchObject({ hasApiKey: true, apiKeySource: 'memory', envApiKey: true })
    expect(JSON.stringify(saved)).not.toContain(SAVED_KEY)

    fake.script(reply.text('Hello!'))
    const second = await turn(first.id, 'hi again')
    expect(second.error).toBeNull()
    expect(apiKeyOf(fake.messageRequests()[1]!)).toBe(SAVED_KEY)

    // A saved key the API refuses is named as the saved one.
    fake.script(reply.error(401))
    const third = await turn(first.id, 'and again')
    expect(apiKeyOf(fake.messageRequests()[2]!)).toBe(SAVED_KEY)
    expect(third.error?.message).toBe(
      'The Anthropic API rejected the API key saved in Settings (401). Check or replace it in Settings.',
    )

    // Removing the saved key hands the turn back to the environment's key.
    expect(await call('settings:clearApiKey')).toMatchObject({
      hasApiKey: true,
      apiKeySource: 'env',
    })
    fake.script(reply.text('Back on the environment key.'))
    expect((await turn(first.id, 'once more')).error).toBeNull()
    expect(apiKeyOf(fake.messageRequests()[3]!)).toBe(ENV_KEY)
  })
})
