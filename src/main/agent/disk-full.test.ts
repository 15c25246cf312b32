/**
 * A full disk while chatting: sending, renaming and settings say the disk is full (the
 * `disk-full` code, plain words, no host path), and a reply that cannot be saved is reported as
 * such and logged, not as a problem "talking to Claude". The whole core on a real small tmpfs
 * (needs root with mount allowed: mountSmallDisk throws otherwise, never skips).
 */
import { afterEach, beforeEach, expect, it } from 'vitest'
import {
  reply,
  startFakeAnthropic,
  type FakeAnthropic,
} from '../../../test/fixtures/fake-anthropic'
import type { RequestChannel, RequestResults } from '../../shared/contract'
import type { AgentEvent, ApiErrorData } from '../../shared/types'
import { createCore, type Core } from '../core'
import { mountSmallDisk, type SmallDisk } from '../history/test-helpers'
import { createRecordingLogger, type RecordingLogger } from '../lib/logger'

let disk: SmallDisk
let fake: FakeAnthropic
let core: Core
let logger: RecordingLogger
let events: AgentEvent[]

beforeEach(async () => {
  disk = await mountSmallDisk('4m')
  fake = await startFakeAnthropic()
  logger = createRecordingLogger()
  events = []
  core = await createCore({
    dataDir: disk.dir,
    env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: fake.url },
    anthropicMaxRetries: 0,
    logger,
  })
  core.events.on((name, data) => {
    if (name === 'agent:event') events.push(data as AgentEvent)
  })
})

afterEach(async () => {
  await core.close()
  await fake.close()
  await disk.unmount()
})

async function refusal(channel: RequestChannel, payload: unknown): Promise<ApiErrorData> {
  const result = await core.dispatch(channel, payload)
  if (result.ok) throw new Error(`${channel} succeeded on a full disk`)
  return result.error
}

async function turn(conversationId: string | null, text: string, clientId: string) {
  const result = await core.dispatch('chat:send', { conversationId, text, clientId })
  if (!result.ok) throw new Error(`chat:send failed: ${result.error.message}`)
  const started = result.value as RequestResults['chat:send']
  const { turnId } = started
  await new Promise<void>((resolve) => {
    const check = () =>
      events.some((e) => e.turnId === turnId && e.type === 'turn-finished')
        ? resolve()
        : setTimeout(check, 5)
    check()
  })
  return {
    conversationId: started.conversationId,
    mine: events.filter((e) => e.turnId === turnId),
  }
}

const plain = (error: { message: string }) => {
  expect(error.message).not.toContain(disk.dir)
  expect(error.message).not.toMatch(/ENOSPC|\bat \w+ \(/)
}

it('says the disk is full when sending, renaming or changing settings', async () => {
  fake.script(reply.text('First answer.'))
  const { conversationId } = await turn(null, 'hello', 'c1')
  await disk.fill()

  for (const [channel, payload] of [
    ['chat:send', { conversationId, text: 'more', clientId: 'c2' }],
    ['chat:send', { conversationId: null, text: 'a new chat', clientId: 'c3' }],
    ['conversations:rename', { id: conversationId, title: 'x'.repeat(150) }],
    ['settings:update', { customInstructions: 'y'.repeat(5000) }],
  ] as const) {
    const error = await refusal(channel, payload)
    expect(error, channel).toMatchObject({ code: 'disk-full' })
    expect(error.message).toMatch(/disk is full/)
    plain(error)
  }
})

it('reports a reply that could not be saved as not saved, and logs it', async () => {
  fake.script(reply.text('First answer.'))
  const { conversationId } = await turn(null, 'hello', 'c1')
  // Room for the prompt, not for a long reply (the conversation file is written whole).
  await disk.fill(16)
  fake.script(reply.text('z'.repeat(300_000)))
  const { mine } = await turn(conversationId, 'again', 'c2')

  // The person saw the reply stream in; it is said plainly that it was not saved.
  const streamed = mine.flatMap((e) => (e.type === 'text-delta' ? [e.text] : [])).join('')
  expect(streamed).toHaveLength(300_000)
  const error = mine.find((e) => e.type === 'error')
  expect(error).toMatchObject({ code: 'disk-full' })
  const message = error && 'message' in error ? error.message : ''
  expect(message).toMatch(/reply could not be saved because the disk is full/)
  expect(message).not.toMatch(/talking to Claude/)
  plain({ message })
  expect(logger.entries).toContainEqual(
    expect.objectContaining({
      level: 'error',
      message: "Claude's reply could not be saved",
      error: expect.objectContaining({ code: 'ENOSPC' }),
    }),
  )
})
