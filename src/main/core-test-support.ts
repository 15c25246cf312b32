import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, onTestFinished } from 'vitest'
import { startFakeAnthropic, type FakeAnthropic } from '../../test/fixtures/fake-anthropic'
import type { EventMap, EventName, RequestChannel, RequestResults } from '../shared/contract'
import type { AgentEvent } from '../shared/types'
import type { AnthropicFetch, ReplyLimits } from './agent'
import { createCore, type Core } from './core'
import { createRecordingLogger, type Logger } from './lib/logger'

/**
 * Sends one request through the core's dispatcher, as the window would, and returns its value;
 * a refused request throws with its code and message, so a test fails where it happened.
 */
export async function callCore<C extends RequestChannel>(
  core: Core,
  channel: C,
  payload?: unknown,
): Promise<RequestResults[C]> {
  const result = await core.dispatch(channel, payload)
  if (!result.ok) throw new Error(`${channel} failed: ${result.error.code} ${result.error.message}`)
  return result.value as RequestResults[C]
}

/** A turn sent through `chat:send` that has finished. */
export interface FinishedTurn {
  readonly conversationId: string
  readonly turnId: string
  /** The turn's agent events, `turn-finished` last. */
  readonly events: ReadonlyArray<AgentEvent>
}

/**
 * The real core on a temp data folder, its API the scripted fake Messages API: a new folder,
 * fake and core for each test (made in `beforeEach`, closed and removed in `afterEach`).
 */
export interface CoreThroughFakeApi {
  /** This test's data folder. */
  readonly dataDir: string
  readonly fake: FakeAnthropic
  /** The core open now (a new one after `reopen`). */
  readonly core: Core
  /** Every agent event of this test, in order, across reopens. */
  readonly events: ReadonlyArray<AgentEvent>
  /** `callCore` on the core open now. */
  call<C extends RequestChannel>(channel: C, payload?: unknown): Promise<RequestResults[C]>
  /** Sends `text` through `chat:send` with a fresh client id; does not wait for the turn. */
  send(conversationId: string | null, text: string): Promise<RequestResults['chat:send']>
  /** Resolves once `check` holds, checked now and after every event of the core. */
  until(check: () => boolean): Promise<void>
  /** Resolves with the turn's events once it has finished (already or later). */
  finished(turnId: string): Promise<ReadonlyArray<AgentEvent>>
  /** Sends `text` and waits for its turn to finish. */
  turn(conversationId: string | null, text: string): Promise<FinishedTurn>
  /** The file a conversation is stored in. */
  fileOf(conversationId: string): string
  /**
   * Closes the core and opens a new one on the same folder (a restart of the app), running
   * `whileClosed` in between.
   */
  reopen(whileClosed?: () => Promise<void>): Promise<void>
}

export interface CoreThroughFakeApiOptions {
  /** The temp folder's name starts with this. */
  readonly prefix: string
  /** `ANTHROPIC_API_KEY` in the core's environment; `sk-test` when left out. */
  readonly apiKey?: string
  /** More of the core's environment (`ANTHROPIC_LOG`, say). */
  readonly env?: Readonly<Record<string, string>>
  /** Logs kept in memory (a recording logger), not written to the console. */
  readonly quiet?: boolean
  /** The core's logger (a file's, say); wins over `quiet`. */
  readonly logger?: Logger
  /** The SDK's retries of a failed request (`anthropicMaxRetries`); none when left out. */
  readonly maxRetries?: number
  /** The SDK's fetch (`CoreOptions.fetch`): to watch what the SDK does with a response. */
  readonly fetch?: AnthropicFetch
  /** How long a reply may take to start and stay silent (`CoreOptions.replyLimits`). */
  readonly replyLimits?: ReplyLimits
  /** Told every event of every core opened, after the harness has recorded it. */
  readonly onEvent?: <E extends EventName>(name: E, data: EventMap[E]) => void
}

/**
 * Registers the `beforeEach` and `afterEach` that give each test a `CoreThroughFakeApi`; call
 * it once at the top of a test file. The waits are woken by the core's events, not polled.
 */
export function coreThroughFakeApi(options: CoreThroughFakeApiOptions): CoreThroughFakeApi {
  let dataDir = ''
  let fake: FakeAnthropic | null = null
  let core: Core | null = null
  let events: AgentEvent[] = []
  let clientIds = 0
  const waiters = new Set<() => void>()

  const open = async (): Promise<Core> => {
    const opened = await createCore({
      dataDir,
      env: {
        ...options.env,
        ANTHROPIC_API_KEY: options.apiKey ?? 'sk-test',
        ANTHROPIC_BASE_URL: fake!.url,
      },
      anthropicMaxRetries: options.maxRetries ?? 0,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.replyLimits ? { replyLimits: options.replyLimits } : {}),
      ...(options.logger
        ? { logger: options.logger }
        : options.quiet
          ? { logger: createRecordingLogger() }
          : {}),
    })
    opened.events.on((name, data) => {
      if (name === 'agent:event') events.push(data as AgentEvent)
      options.onEvent?.(name, data)
      for (const wake of [...waiters]) wake()
    })
    return opened
  }

  const until = (check: () => boolean): Promise<void> => {
    if (check()) return Promise.resolve()
    return new Promise((resolve) => {
      const wake = () => {
        if (!check()) return
        waiters.delete(wake)
        resolve()
      }
      waiters.add(wake)
    })
  }

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), options.prefix))
    fake = await startFakeAnthropic()
    events = []
    waiters.clear()
    core = await open()
  })

  afterEach(async () => {
    await core?.close()
    await fake?.close()
    core = null
    fake = null
    await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
  })

  const harness: CoreThroughFakeApi = {
    get dataDir() {
      return dataDir
    },
    get fake() {
      return fake!
    },
    get core() {
      return core!
    },
    get events() {
      return events
    },
    call: (channel, payload) => callCore(core!, channel, payload),
    send: (conversationId, text) =>
      harness.call('chat:send', { conversationId, text, clientId: `c-${++clientIds}` }),
    until,
    async finished(turnId) {
      const mine = (e: AgentEvent) => e.turnId === turnId
      await until(() => events.some((e) => mine(e) && e.type === 'turn-finished'))
      return events.filter(mine)
    },
    async turn(conversationId, text) {
      const { conversationId: id, turnId } = await harness.send(conversationId, text)
      return { conversationId: id, turnId, events: await harness.finished(turnId) }
    },
    fileOf: (conversationId) => path.join(dataDir, 'conversations', `${conversationId}.json`),
    async reopen(whileClosed) {
      await core!.close()
      await whileClosed?.()
      core = await open()
    },
  }
  return harness
}

/** The chat child: the real core in a process of its own (test/fixtures/chat-child.ts). */
const CHAT_CHILD = path.resolve('test/fixtures/chat-child.ts')

/**
 * Runs the chat child with `args` (data folder, API address, the text it sends, its mode) until
 * `until` holds (a promise settled, or a test of all it has printed), then kills it (SIGKILL);
 * returns the id of the conversation it says it sent in. Fails if the child ends before.
 */
export async function killChatChild(
  args: ReadonlyArray<string>,
  until: Promise<unknown> | ((said: string) => boolean),
): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHAT_CHILD, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let said = ''
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('close', (_code, signal) => resolve(signal)),
  )
  const reached =
    typeof until === 'function'
      ? new Promise<void>((resolve) =>
          child.stdout.on('data', (chunk: Buffer) => {
            said += chunk.toString()
            if (until(said)) resolve()
          }),
        )
      : (child.stdout.on('data', (chunk: Buffer) => (said += chunk.toString())), until)
  // Killed however the wait ends: a rejected `until` kills it here, one that never settles
  // when the test ends (its timeout), so the child never outlives the test.
  onTestFinished(() => void child.kill('SIGKILL'))
  try {
    await Promise.race([
      reached,
      exited.then(() => {
        throw new Error(`the child ended early: ${stderr}`)
      }),
    ])
  } finally {
    child.kill('SIGKILL')
  }
  expect(await exited).toBe('SIGKILL')
  const conversationId = /^sent (\S+)$/m.exec(said)?.[1]
  expect(conversationId).toMatch(/^c_/)
  return conversationId!
}
