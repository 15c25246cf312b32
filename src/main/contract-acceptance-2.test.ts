/**
 * Issue 2's typed contract, checked the unkind way through the one dispatcher, with a handler
 * per channel that records being reached: a valid payload reaches its handler as sent; the
 * same payload with one field too many, with a required field missing, or with a list or a
 * text far past its bounds is refused as `invalid-payload` in a short sentence, and its
 * handler is never reached; a channel name that is not the contract's (an Object.prototype
 * key, a near miss) is `unknown-channel`.
 */
import { describe, expect, it } from 'vitest'
import { requestChannels, type RequestChannel } from '../shared/contract'
import type { ApiResult } from '../shared/types'
import { createDispatcher, type Handlers } from './dispatcher'

const ZERO = '0'.repeat(40)

/** A valid payload for every channel (undefined: the channel takes none). */
const valid: { readonly [C in RequestChannel]: unknown } = {
  'app:info': undefined,
  'app:recoveries': undefined,
  'app:dismissRecovery': { id: 'recovery-1' },
  'app:openDataFolder': undefined,
  'app:openExternal': { url: 'https://example.com/' },
  'app:unsaved': { path: null },
  'app:opening': undefined,
  'memory:tree': { at: ZERO },
  'memory:read': { path: '/memories/a.md' },
  'memory:write': { path: '/memories/a.md', content: 'a' },
  'memory:rename': { from: '/memories/a.md', to: '/memories/b.md' },
  'memory:delete': { path: '/memories/a.md' },
  'memory:search': { query: 'a' },
  'memory:notices': undefined,
  'memory:dismissNotice': { id: 'notice-1' },
  'memory:removeSecrets': { path: '/memories/a.md' },
  'history:log': { offset: 0, limit: 50 },
  'history:show': { oid: ZERO },
  'history:fileHistory': { path: '/memories/a.md' },
  'history:readAt': { path: '/memories/a.md', oid: ZERO },
  'history:diff': { path: '/memories/a.md', from: ZERO, to: ZERO },
  'history:restoreFile': { path: '/memories/a.md', oid: ZERO },
  'history:restoreDeleted': { path: '/memories/a.md' },
  'history:revert': { oid: ZERO },
  'history:restoreAll': { oid: ZERO },
  'history:blame': { path: '/memories/a.md' },
  'history:search': { text: 'a' },
  'history:compare': { from: ZERO },
  'history:summaries': { oids: [ZERO] },
  'review:list': undefined,
  'review:decide': { id: 'c1', decision: 'approve' },
  'review:text': { id: 'c1' },
  'hygiene:stats': undefined,
  'hygiene:expire': { path: '/memories/a.md' },
  'chat:send': { conversationId: null, clientId: 'c1', text: 'hi' },
  'chat:stop': { conversationId: 'c1' },
  'chat:running': undefined,
  'chat:dismiss': { conversationId: 'c1', turnId: 't1' },
  'conversations:list': {},
  'conversations:get': { id: 'c1' },
  'conversations:rename': { id: 'c1', title: 'A title' },
  'conversations:delete': { id: 'c1' },
  'settings:get': undefined,
  'settings:update': { theme: 'dark' },
  'settings:setApiKey': { key: 'sk-ant-test' },
  'settings:clearApiKey': undefined,
  'settings:models': undefined,
  'sync:status': undefined,
  'sync:now': undefined,
  'sync:stop': undefined,
  'sync:configure': { url: '' },
  'sync:test': { url: 'https://example.com/memory.git' },
  'sync:resolve': { path: '/memories/a.md', choice: 'ours' },
  'sync:join': { choice: 'merge' },
  'sync:restoreBackup': { name: 'backup-1' },
  'sync:export': { kind: 'zip' },
  'sync:import': { kind: 'folder' },
}

/** The channels whose every field is optional: `{}` is a request they take. */
const allOptional: ReadonlySet<string> = new Set([
  'memory:tree',
  'conversations:list',
  'settings:update',
])

function recordingDispatcher() {
  const reached: Array<{ channel: string; payload: unknown }> = []
  const handlers = Object.fromEntries(
    requestChannels.map((channel) => [
      channel,
      (payload: unknown) => {
        reached.push({ channel, payload })
        return 'handled'
      },
    ]),
  ) as unknown as Handlers
  return { dispatch: createDispatcher(handlers), reached }
}

/** A refusal of the given code, in one short line with nothing host-side or code-like in it. */
function expectRefused(result: ApiResult<unknown>, code: string, where: string): string {
  expect(result, where).toMatchObject({ ok: false, error: { code } })
  if (result.ok) return ''
  expect(Object.keys(result.error).sort(), where).toEqual(['code', 'message'])
  const { message } = result.error
  expect(message.length, where).toBeLessThanOrEqual(1000)
  expect(message, where).not.toMatch(/\n|\bat .+:\d+|node_modules|\/tmp\/|\/home\/|\.ts:\d/)
  return message
}

describe('the typed contract, through the one dispatcher', () => {
  it('has a valid sample for every channel, each reaching its own handler as sent', async () => {
    expect(Object.keys(valid).sort()).toEqual([...requestChannels].sort())
    const { dispatch, reached } = recordingDispatcher()
    for (const channel of requestChannels) {
      const result = await dispatch(channel, valid[channel])
      expect(result, channel).toEqual({ ok: true, value: 'handled' })
    }
    expect(reached.map((call) => call.channel)).toEqual([...requestChannels])
    expect(reached.map((call) => call.payload)).toEqual(requestChannels.map((c) => valid[c]))
  })

  it('refuses one field too many on every channel, naming it, without reaching the handler', async () => {
    const { dispatch, reached } = recordingDispatcher()
    for (const channel of requestChannels) {
      const sample = valid[channel]
      const payload = sample === undefined ? { stray: 1 } : { ...(sample as object), stray: 1 }
      const message = expectRefused(await dispatch(channel, payload), 'invalid-payload', channel)
      if (sample !== undefined) expect(message, channel).toContain('stray')
    }
    expect(reached).toEqual([])
  })

  it('refuses a missing required field on every channel that has one, naming it', async () => {
    const { dispatch, reached } = recordingDispatcher()
    for (const channel of requestChannels) {
      const sample = valid[channel]
      if (sample === undefined || allOptional.has(channel)) continue
      for (const field of Object.keys(sample as object)) {
        const { [field]: _left, ...rest } = sample as Record<string, unknown>
        const result = await dispatch(channel, rest)
        // Some fields are optional: leaving one out is a request the channel takes.
        if (result.ok) continue
        const message = expectRefused(result, 'invalid-payload', `${channel} without ${field}`)
        expect(message, `${channel} without ${field}`).toContain(field)
      }
      expectRefused(await dispatch(channel, {}), 'invalid-payload', `${channel} given {}`)
      expectRefused(
        await dispatch(channel, undefined),
        'invalid-payload',
        `${channel} given nothing`,
      )
    }
    expect(reached.every((call) => call.payload !== undefined)).toBe(true)
    for (const call of reached) {
      expect(Object.keys(call.payload as object).length, call.channel).toBeGreaterThan(0)
    }
  })

  it('takes {} on the channels whose fields are all optional, and nothing on the rest', async () => {
    const { dispatch, reached } = recordingDispatcher()
    for (const channel of requestChannels) {
      const result = await dispatch(channel, {})
      if (allOptional.has(channel)) expect(result, channel).toEqual({ ok: true, value: 'handled' })
      else expectRefused(result, 'invalid-payload', channel)
    }
    expect(reached.map((call) => call.channel)).toEqual([...allOptional])
  })

  it('refuses lists and texts far past their bounds in a short sentence', async () => {
    const { dispatch, reached } = recordingDispatcher()
    const cases: ReadonlyArray<readonly [RequestChannel, unknown]> = [
      ['history:summaries', { oids: Array.from({ length: 1_000_000 }, () => ZERO) }],
      ['memory:write', { path: '/memories/a.md', content: 'x'.repeat(50_000_000) }],
      ['memory:read', { path: `/memories/${'a'.repeat(1_000_000)}.md` }],
      ['chat:send', { conversationId: null, clientId: 'c1', text: 'x'.repeat(10_000_000) }],
      ['history:log', { offset: Number.MAX_SAFE_INTEGER + 2, limit: 50 }],
      ['history:log', { offset: 0, limit: 1e9 }],
      ['settings:update', { maxTokens: Number.MAX_VALUE }],
      ['review:decide', { id: 'c1', decision: 'approve', revision: -0.5 }],
    ]
    for (const [channel, payload] of cases) {
      expectRefused(await dispatch(channel, payload), 'invalid-payload', channel)
    }
    expect(reached).toEqual([])
  })

  it('answers unknown-channel for names that are not the contract’s, reaching no handler', async () => {
    const { dispatch, reached } = recordingDispatcher()
    const names: unknown[] = [
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
      'valueOf',
      '__defineGetter__',
      'app:info ',
      ' app:info',
      'APP:INFO',
      'app:Info',
      'app:info\0',
      'app',
      'app:',
      ':info',
      'app:info:extra',
      'cairn:event',
      '',
      'x'.repeat(100_000),
      null,
      undefined,
      42,
      ['app:info'],
      { toString: () => 'app:info' },
    ]
    for (const name of names) {
      const message = expectRefused(
        await dispatch(name, undefined),
        'unknown-channel',
        String(name).slice(0, 40),
      )
      expect(message.length).toBeLessThanOrEqual(200)
    }
    expect(reached).toEqual([])
  })
})
