/**
 * Cairn killed (SIGKILL of a child running the real core) while one reply's twenty memory
 * creates run, at several points: after the first result, a few, and about half. Wherever the
 * kill lands, after a restart memory and history agree (`git fsck --strict`, the folder is
 * HEAD's tree), every commit is one of the reply's calls in its conversation, and the next turn
 * answers each call truly: created for a call history has a commit for, an error otherwise.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import {
  invalidMessages,
  reply,
  startFakeAnthropic,
  type FakeAnthropic,
} from '../../../test/fixtures/fake-anthropic'
import { callCore, killChatChild } from '../core-test-support'
import { createCore, type Core } from '../core'
import { createRecordingLogger } from '../lib/logger'

const CALLS = 20

let dataDir: string
let fake: FakeAnthropic
/** The API after the restart: the first one may still hold the hanging answer for the turn. */
let restarted: FakeAnthropic | null = null
let core: Core | null = null

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-killed-calls-'))
  fake = await startFakeAnthropic()
})

afterEach(async () => {
  await core?.close()
  core = null
  await fake.close()
  await restarted?.close()
  restarted = null
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
})

function git(...args: string[]): string {
  return execFileSync('git', [`--git-dir=${path.join(dataDir, 'history.git')}`, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

const id = (i: number) => `toolu_k${String(i).padStart(2, '0')}`

/** Runs the child until it has told `count` results, then kills it; the conversation's id. */
async function killAfter(count: number): Promise<string> {
  return killChatChild(
    [dataDir, fake.url, 'Note everything', 'results'],
    (said) => (said.match(/^result /gm) ?? []).length >= count,
  )
}

for (const past of [1, 5, 10]) {
  it(`keeps memory, history and the conversation in agreement after a kill past ${past} of ${CALLS} calls`, async () => {
    fake.script(
      reply.toolUses(
        Array.from({ length: CALLS }, (_, i) => ({
          id: id(i),
          input: { command: 'create', path: `/memories/f${i}.md`, file_text: `note ${i}\n` },
        })),
      ),
      // The turn's next request (if the calls all ran) is never answered.
      reply.raw('', { head: false, ending: 'hang' }),
    )
    const conversationId = await killAfter(past)

    restarted = await startFakeAnthropic()
    core = await createCore({
      dataDir,
      env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: restarted.url },
      anthropicMaxRetries: 0,
      logger: createRecordingLogger(),
    })
    git('fsck', '--strict')
    // The folder is HEAD's tree, file for file.
    const inFolder = (await readdir(path.join(dataDir, 'memories'))).sort()
    const inHead = git('ls-tree', '--name-only', 'HEAD').split('\n').filter(Boolean).sort()
    expect(inFolder).toEqual(inHead)
    for (const name of inHead) {
      expect(await readFile(path.join(dataDir, 'memories', name), 'utf8')).toBe(
        git('show', `HEAD:${name}`),
      )
    }
    expect(inHead.length).toBeGreaterThanOrEqual(past)
    // Each commit naming a call is that call's create, in this conversation.
    const linked = new Map<string, string>()
    for (const line of git(
      'log',
      '--format=%H|%(trailers:key=Tool-Use-Id,valueonly,separator=)|%(trailers:key=Conversation-Id,valueonly,separator=)',
    )
      .split('\n')
      .filter(Boolean)) {
      const [oid, toolUseId, conversation] = line.split('|')
      if (!toolUseId) continue
      expect(conversation).toBe(conversationId)
      const i = Number(toolUseId.slice('toolu_k'.length))
      expect(toolUseId).toBe(id(i))
      expect(git('show', '--name-only', '--format=', oid!).trim()).toBe(`f${i}.md`)
      linked.set(toolUseId, oid!)
    }
    expect(linked.size).toBeGreaterThanOrEqual(past)

    restarted.script(reply.text('Carrying on.'))
    let failed = false
    const finished = new Promise<void>((resolve) =>
      core!.events.on((name, data) => {
        if (name !== 'agent:event') return
        const event = data as { type: string }
        if (event.type === 'error') failed = true
        if (event.type === 'turn-finished') resolve()
      }),
    )
    await callCore(core, 'chat:send', { conversationId, text: 'Go on', clientId: 'after' })
    await finished
    expect(failed).toBe(false)
    const sent = restarted.messageRequests().at(-1)!.body!.messages!
    expect(invalidMessages(sent)).toBeNull()
    // Claude hears each call's truth: created when history has its commit, an error when not.
    // (The results and "Go on" go as one user message: the tool results first.)
    const answers = (sent[2]!.content as Array<Record<string, unknown>>).filter(
      (block) => block.type === 'tool_result',
    )
    expect(answers.map((a) => a.tool_use_id)).toEqual(
      Array.from({ length: CALLS }, (_, i) => id(i)),
    )
    for (const [i, answer] of answers.entries()) {
      if (linked.has(id(i))) {
        expect(answer).toMatchObject({
          content: `File created successfully at: /memories/f${i}.md`,
        })
        expect(answer).not.toHaveProperty('is_error')
      } else {
        expect(answer).toMatchObject({ is_error: true })
      }
    }
    const stored = await callCore(core, 'conversations:get', { id: conversationId })
    expect(stored.toolCommits).toEqual(Object.fromEntries(linked))
    // A child's start (tsx compiling the core) is slow on a loaded machine: a wide guard.
  }, 120_000)
}
