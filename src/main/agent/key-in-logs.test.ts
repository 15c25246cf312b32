/**
 * The API key never reaches the log, whatever a failure carries: the real SDK against the fake
 * Messages API answering with the key echoed (as it is, in base64, in hex), through the real
 * core, its logger writing to a real file that is read back.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { reply } from '../../../test/fixtures/fake-anthropic'
import { logFileIn, runsIn } from '../../../test/fixtures/log-file'
import { coreThroughFakeApi } from '../core-test-support'
import type { AnthropicFetch } from './client'

/** A key shaped like Anthropic's, different each run. */
const KEY = `sk-ant-api03-${randomBytes(70).toString('base64url').slice(0, 93)}AA`
const HEX = Buffer.from(KEY).toString('hex')
const BASE64 = Buffer.from(KEY).toString('base64')

/** Every form of `key` a log could hold: as it is, base64, hex, and 8-long runs of each. */
function keyFormsIn(text: string, key: string): string[] {
  const hex = Buffer.from(key).toString('hex')
  return [key, Buffer.from(key).toString('base64'), hex, hex.toUpperCase()].flatMap((form) =>
    // 8 characters after the `sk-ant-api03-` every key starts with (its hex and base64 too).
    runsIn(text, form, form === key ? 13 : 0),
  )
}

let logDir = ''
const { logger: fileLogger, read: readLog } = logFileIn(() => logDir)

const cairn = coreThroughFakeApi({ prefix: 'cairn-key-in-logs-', apiKey: KEY, logger: fileLogger })

afterEach(async () => {
  if (logDir) await rm(logDir, { recursive: true, force: true, maxRetries: 10 })
})

/** What a proxy on the way adds: the key echoed in a response header the SDK logs at debug. */
const echoingFetch: AnthropicFetch = async (input, init) => {
  const response = await fetch(input, init)
  const headers = new Headers(response.headers)
  headers.set('x-echo', `${KEY} ${BASE64}`)
  return new Response(response.body, { status: response.status, headers })
}

const debugging = coreThroughFakeApi({
  prefix: 'cairn-key-in-debug-log-',
  apiKey: KEY,
  logger: fileLogger,
  env: { ANTHROPIC_LOG: 'debug' },
  fetch: echoingFetch,
})

describe('the API key in the log', () => {
  it('ANTHROPIC_LOG=debug writes the SDK’s requests and responses to the log, the key hidden', async () => {
    logDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-key-log-'))
    debugging.fake.script(reply.text('hello back'))
    // The key pasted into the chat: the request's body holds it, and the log shows the body.
    const { events } = await debugging.turn(null, `my cat is called Mittens; my key is ${KEY}`)
    expect(events.find((e) => e.type === 'error')).toBeUndefined()
    const log = await readLog()
    expect(log).toContain('The Anthropic SDK (debug): [log_')
    // The request as sent, body included: the conversation's words are in the log (README,
    // "Logs"), only what is secret hidden.
    expect(log).toContain('sending request')
    expect(log).toContain('my cat is called Mittens; my key is your API key')
    expect(log).toContain('x-echo')
    expect(keyFormsIn(log, KEY)).toEqual([])
    expect(log).toContain('your API key')
  })

  it('is hidden in every form when the API echoes it in a reply that cannot be read', async () => {
    logDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-key-log-'))
    // A reply whose first event is not JSON: the SDK writes the event's data and raw record to
    // its logger, and the parser's error (quoting its start: the key's base64) ends the turn as
    // an unknown failure.
    const data = `${BASE64} x-api-key: ${KEY} hex: ${HEX}`
    cairn.fake.script(reply.raw(`event: message_start\ndata: ${data}\n\n`))
    const { events } = await cairn.turn(null, 'hello')
    expect(events.find((e) => e.type === 'error')).toMatchObject({ code: 'internal' })

    const log = await readLog()
    expect(keyFormsIn(log, KEY)).toEqual([])
    // What failed was written, the SDK's own report of the unreadable event among it.
    expect(log).toContain('A chat turn failed')
    expect(log).toContain('Could not parse message into JSON')
    expect(log).toContain('your API key')
  })

  it('is hidden when it was saved in Settings, not the variable', async () => {
    logDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-key-log-'))
    const saved = `sk-ant-api03-${randomBytes(70).toString('base64url').slice(0, 93)}AA`
    await cairn.call('settings:setApiKey', { key: saved })
    const encoded = Buffer.from(saved).toString('base64')
    cairn.fake.script(reply.raw(`event: message_start\ndata: ${encoded} ${saved}\n\n`))
    const { events } = await cairn.turn(null, 'hello')
    expect(events.find((e) => e.type === 'error')).toMatchObject({ code: 'internal' })
    const log = await readLog()
    expect(keyFormsIn(log, saved)).toEqual([])
    expect(log).toContain('Could not parse message into JSON')
  })
})
