import { Console } from 'node:console'
import { createWriteStream } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { APIError } from '@anthropic-ai/sdk'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { hideKeys } from '../agent/turn-errors'
import { createHidingLogger } from './hiding-logger'
import { createConsoleLogger, createRecordingLogger } from './logger'

const KEY = 'sk-ant-api03-' + 'Zq7'.repeat(31) + 'AA'
const hide = (text: string) => hideKeys(text, KEY)

let dir = ''
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-hiding-logger-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true, maxRetries: 10 })
})

/** Writes through a hiding logger over a console on a real file, and reads the file back. */
async function logged(write: (logger: ReturnType<typeof createHidingLogger>) => void) {
  const file = path.join(dir, 'cairn.log')
  const stream = createWriteStream(file)
  const logger = createHidingLogger(
    createConsoleLogger(new Console({ stdout: stream, stderr: stream })),
    hide,
  )
  write(logger)
  await new Promise<void>((resolve) => stream.end(resolve))
  return readFile(file, 'utf8')
}

const hex = Buffer.from(KEY).toString('hex')
const base64 = Buffer.from(`user:${KEY}`).toString('base64')

describe('createHidingLogger', () => {
  it('hides the key in the message, the error, its headers, its body and its causes', async () => {
    const headers = new Headers({ 'x-echoed-key': KEY, 'x-echoed-basic': `Basic ${base64}` })
    const body = { error: { type: 'invalid_request_error', message: `bad key ${hex}` } }
    const root = new Error(`proxy said: ${hex.toUpperCase()}`)
    const error = new APIError(400, body, `400 ${KEY}`, headers)
    Object.assign(error, { cause: new TypeError('wrapped', { cause: root }) })
    const log = await logged((logger) => {
      logger.error(`A call with ${KEY} failed`, error)
      logger.warn('Raw', [`data: ${base64}`, { deep: { deeper: { deepest: { key: KEY } } } }])
      logger.warn('A string', `key=${encodeURIComponent(KEY)}`)
    })
    expect(log).toContain('A call with your API key failed')
    expect(log).toContain('x-echoed-key')
    expect(log).toContain('wrapped')
    expect(log).toContain('proxy said: your API key')
    for (const form of [KEY.slice(13), hex, hex.toUpperCase(), base64.slice(12)]) {
      for (let i = 0; i + 8 <= form.length; i += 8) expect(log).not.toContain(form.slice(i, i + 8))
    }
  })

  it('passes an error that holds no key on as it is', () => {
    const inner = createRecordingLogger()
    const error = new Error('disk full')
    createHidingLogger(inner, hide).error('Could not save', error)
    createHidingLogger(inner, hide).warn('Nothing along')
    expect(inner.entries[0]?.error).toBe(error)
    expect(inner.entries[1]).toEqual({ level: 'warn', message: 'Nothing along', error: undefined })
  })

  it('writes nothing of an error that cannot be printed', () => {
    const inner = createRecordingLogger()
    const hostile = {
      [Symbol.for('nodejs.util.inspect.custom')]: () => {
        throw new Error(KEY)
      },
    }
    createHidingLogger(inner, hide).error('Odd', hostile)
    expect(inner.entries[0]?.error).toBe('(an error that could not be shown)')
  })
})
