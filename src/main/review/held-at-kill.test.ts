/**
 * A call of Claude's waiting for review when Cairn is killed did not run, and Claude is told so
 * after the restart. A child process runs the real core against the fake Messages API with
 * every change held for review; Claude's create waits; the child is killed (SIGKILL). A new
 * core on the same folder lists nothing for review (the turn that asked is gone), answers the
 * call "not run" in the Memory tool's words, and forgets it once that answer is saved.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  invalidMessages,
  reply,
  startFakeAnthropic,
  type FakeAnthropic,
} from '../../../test/fixtures/fake-anthropic'
import { callCore, killChatChild } from '../core-test-support'
import { createCore, type Core } from '../core'
import { createRecordingLogger } from '../lib/logger'
import { heldCallsFile, readHeldCalls } from './held-calls'

const NOT_RUN =
  'This command was not run: Cairn closed while it waited for the user to review it. Nothing was changed.'

let dataDir: string
let fake: FakeAnthropic
let core: Core | null = null

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-held-kill-'))
  fake = await startFakeAnthropic()
})

afterEach(async () => {
  await core?.close()
  core = null
  await fake.close()
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
})

const open = () =>
  createCore({
    dataDir,
    env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: fake.url },
    anthropicMaxRetries: 0,
    logger: createRecordingLogger(),
  })

/** Runs the child until Claude's create waits for review, then kills it. */
async function killWhileHeld(): Promise<string> {
  fake.script(
    reply.toolUse({
      id: 'toolu_held',
      input: { command: 'create', path: '/memories/plan.md', file_text: 'step 1\n' },
    }),
  )
  return killChatChild([dataDir, fake.url, 'Plan it', 'review'], (said) => /^held$/m.test(said))
}

async function sendAndFinish(conversationId: string, text: string): Promise<void> {
  const finished = new Promise<void>((resolve) =>
    core!.events.on((name, data) => {
      if (name === 'agent:event' && (data as { type: string }).type === 'turn-finished') resolve()
    }),
  )
  await callCore(core!, 'chat:send', { conversationId, text, clientId: `c-${text}` })
  await finished
}

describe('a call held for review at a kill', () => {
  it('is answered "not run" after the restart, and nothing of it ran', async () => {
    const conversationId = await killWhileHeld()
    const logger = createRecordingLogger()
    expect(await readHeldCalls(heldCallsFile(dataDir), logger)).toEqual([
      { conversationId, toolUseId: 'toolu_held' },
    ])

    core = await open()
    // The turn that asked is gone: nothing comes back for review.
    expect(await callCore(core, 'review:list', undefined)).toEqual([])
    expect(existsSync(path.join(dataDir, 'memories', 'plan.md'))).toBe(false)
    expect(() =>
      execFileSync('git', [`--git-dir=${path.join(dataDir, 'history.git')}`, 'rev-parse', 'HEAD'], {
        stdio: 'pipe',
      }),
    ).toThrow()

    fake.script(reply.text('Understood.'))
    await sendAndFinish(conversationId, 'Go on')
    const sent = fake.messageRequests().at(-1)!.body!.messages!
    expect(invalidMessages(sent)).toBeNull()
    expect((sent[2]!.content as Array<Record<string, unknown>>)[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_held',
      content: NOT_RUN,
      is_error: true,
    })
    // Once Claude's answer is saved, the file forgets the call.
    await core.close()
    core = null
    expect(await readHeldCalls(heldCallsFile(dataDir), logger)).toEqual([])
    expect(logger.entries).toEqual([])
  })

  it('reads a held file it does not know as holding nothing, and opens all the same', async () => {
    const conversationId = await killWhileHeld()
    await writeFile(
      heldCallsFile(dataDir),
      JSON.stringify({ version: 2, calls: [{ conversationId, toolUseId: 'toolu_held' }] }),
    )
    const logger = createRecordingLogger()
    expect(await readHeldCalls(heldCallsFile(dataDir), logger)).toEqual([])
    expect(logger.entries).toEqual([
      expect.objectContaining({ level: 'warn', message: expect.stringContaining('not one') }),
    ])
    core = await open()
    fake.script(reply.text('Understood.'))
    await sendAndFinish(conversationId, 'Go on')
    const sent = fake.messageRequests().at(-1)!.body!.messages!
    // Without the file's word, as before: whether it ran is not known here.
    expect((sent[2]!.content as Array<Record<string, unknown>>)[0]).toMatchObject({
      tool_use_id: 'toolu_held',
      content: expect.stringContaining('may or may not have run'),
    })
    expect(await readFile(heldCallsFile(dataDir), 'utf8')).toContain('"version":2')
  })
})
