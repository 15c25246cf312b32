/**
 * An independent acceptance check of the agent loop (issue #5), the hostile way, for what the
 * other acceptance files leave open: tool calls whose input is not an object (the API refuses
 * any later request that resends one). Through the real core: the real SDK against the fake Messages API, the real versioned
 * memory, `git` as the second opinion.
 */
import { execFileSync } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { invalidMessages, reply, sse } from '../../../test/fixtures/fake-anthropic'
import type { AgentEvent, Conversation } from '../../shared/types'
import { coreThroughFakeApi } from '../core-test-support'

const KEY = 'sk-ant-api03-probe34d' + 'Z'.repeat(40) + 'AA'
const cairn = coreThroughFakeApi({ prefix: 'probe34d-loop-hostile-', quiet: true, apiKey: KEY })

function git(...args: string[]): string {
  return execFileSync('git', [`--git-dir=${path.join(cairn.dataDir, 'history.git')}`, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

function commitCount(): number {
  try {
    return Number(git('rev-list', '--count', 'HEAD').trim())
  } catch {
    return 0
  }
}

const errorOf = (events: ReadonlyArray<AgentEvent>) => events.find((e) => e.type === 'error')

/** No stack, no host path, no key in what the window is told. */
function expectPlain(events: ReadonlyArray<AgentEvent>): void {
  const shown = JSON.stringify(events)
  expect(shown).not.toMatch(/\bat \S+ \(|node_modules|\.mjs|\.ts:\d/)
  expect(shown).not.toContain(cairn.dataDir)
  expect(shown).not.toContain(KEY)
}

/**
 * The stored conversation reads back the same after a restart, and its next turn goes out as a
 * request the API takes (the fake refuses what the API refuses) and is answered.
 */
async function expectSendable(conversationId: string): Promise<Conversation> {
  const stored = await cairn.call('conversations:get', { id: conversationId })
  await cairn.reopen()
  const reread = await cairn.call('conversations:get', { id: conversationId })
  expect(reread.messages).toEqual(stored.messages)
  cairn.fake.script(reply.text('Carrying on.'))
  const next = await cairn.turn(conversationId, 'Go on')
  expect(errorOf(next.events)).toBeUndefined()
  expect(invalidMessages(cairn.fake.messageRequests().at(-1)!.body!.messages)).toBeNull()
  return reread
}

describe('a tool call whose input is not an object', () => {
  // The API sends a tool call's input as an object; a reply that breaks that rule (a proxy, a
  // model fault) must not leave the conversation resending it: the API refuses every request
  // holding one ("tool_use.input: Input should be a valid dictionary").
  it('is answered with an error, commits nothing, and leaves the conversation sendable', async () => {
    // (A bare number the SDK cannot read at all: the reply arrives damaged, stored without it.)
    const inputs = ['[1, 2]', '"create"', 'null', 'true']
    cairn.fake.script(
      reply.raw(
        sse.messageStart() +
          inputs
            .map((json, i) => sse.toolUse(i, { id: `toolu_odd${i}`, name: 'memory' }, json))
            .join('') +
          sse.end('tool_use'),
      ),
      reply.text('I will try again later.'),
    )
    const turn = await cairn.turn(null, 'Remember something')
    expectPlain(turn.events)
    const results = turn.events.flatMap((e) => (e.type === 'tool-result' ? [e] : []))
    expect(results).toHaveLength(inputs.length)
    for (const result of results) {
      expect(result).toMatchObject({
        isError: true,
        commitOid: null,
        content:
          'Error: Missing required parameter `command`. Use one of: view, create, str_replace, insert, delete, rename.',
      })
    }
    expect(commitCount()).toBe(0)
    // The turn's own second request already resent the calls: the API must take it.
    expect(cairn.fake.messageRequests()).toHaveLength(2)
    expect(errorOf(turn.events)).toBeUndefined()
    const stored = await expectSendable(turn.conversationId)
    for (const block of stored.messages.flatMap((m) => m.content)) {
      if (block.type === 'tool_use') expect(block.input).toEqual({})
    }
  })

  it('already stored in a conversation file is sent as an object, so the chat goes on', async () => {
    cairn.fake.script(reply.text('Hello'))
    const first = await cairn.turn(null, 'hi')
    const file = cairn.fileOf(first.conversationId)
    await cairn.reopen(async () => {
      const stored = JSON.parse(await readFile(file, 'utf8')) as Conversation
      const messages = [
        ...stored.messages,
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_old', name: 'memory', input: ['view'] }],
          stopReason: 'tool_use',
          usage: null,
          createdAt: Date.now(),
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_old',
              content: 'Error: invalid input',
              is_error: true,
            },
          ],
          createdAt: Date.now(),
        },
      ]
      await writeFile(file, JSON.stringify({ ...stored, messages }))
    })
    cairn.fake.script(reply.text('Carrying on.'))
    const next = await cairn.turn(first.conversationId, 'Go on')
    expect(errorOf(next.events)).toBeUndefined()
    const sent = cairn.fake.messageRequests().at(-1)!.body!.messages!
    expect(invalidMessages(sent)).toBeNull()
  })
})
