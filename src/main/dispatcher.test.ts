import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createCore, type Core } from './core'
import { createDispatcher, type Handlers } from './dispatcher'
import { CairnError } from './lib/errors'
import { createRecordingLogger } from './lib/logger'

let core: Core | undefined
let dir: string | undefined
afterEach(async () => {
  await core?.close()
  if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 10 })
  core = undefined
  dir = undefined
})

async function openCore(): Promise<Core> {
  dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-dispatch-'))
  core = await createCore({ dataDir: dir, appVersion: '1.2.3' })
  return core
}

describe('the core', () => {
  it('names this machine in a commit made as soon as it has started', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-dispatch-'))
    core = await createCore({ dataDir: dir, appVersion: '1.2.3', hostName: () => 'desktop' })
    const written = await core.dispatch('memory:write', { path: '/memories/a.md', content: 'a\n' })
    expect(written.ok).toBe(true)
    const message = execFileSync(
      'git',
      ['--git-dir', path.join(dir, 'history.git'), 'log', '-1', '--format=%B'],
      { encoding: 'utf8' },
    )
    expect(message).toContain('Machine: desktop')
  })
})

describe('dispatcher', () => {
  it('routes a valid request to its handler and wraps the result', async () => {
    const { dispatch, dataDir } = await openCore()
    const result = await dispatch('app:info', undefined)
    expect(result).toEqual({
      ok: true,
      value: { name: 'Cairn', version: '1.2.3', dataDir, recovery: null },
    })
  })

  it('rejects a payload that fails validation without reaching the handler', async () => {
    const calls: unknown[] = []
    const handlers = new Proxy({} as Handlers, {
      get: () => (payload: unknown) => {
        calls.push(payload)
        return null
      },
    })
    const dispatch = createDispatcher(handlers)
    const result = await dispatch('history:show', { oid: '../../etc/passwd' })
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.error.code).toBe('invalid-payload')
    expect(result.error.message).toContain('history:show')
    expect(result.error.message).toContain('oid')
    expect(Object.keys(result.error).sort()).toEqual(['code', 'message'])
    expect(calls).toEqual([])
  })

  it('rejects unknown fields and unknown channels', async () => {
    const { dispatch } = await openCore()
    const extra = await dispatch('conversations:get', { id: 'a', evil: true })
    expect(extra).toMatchObject({ ok: false, error: { code: 'invalid-payload' } })
    const unknown = await dispatch('fs:readFile', { path: '/etc/passwd' })
    expect(unknown).toMatchObject({ ok: false, error: { code: 'unknown-channel' } })
    const notString = await dispatch(42, undefined)
    expect(notString).toMatchObject({ ok: false, error: { code: 'unknown-channel' } })
  })

  it('answers a payload that cannot be read (a getter or a proxy that throws) without throwing', async () => {
    // IPC's structured clone never carries these; an in-process caller can, and the
    // dispatcher promises an answer for anything, with no stack and no host path in it.
    const { dispatch } = await openCore()
    const throwing = {
      get path() {
        throw new Error(`boom at ${os.tmpdir()}/x`)
      },
    }
    const trapped = new Proxy(
      { path: '/memories/a.md' },
      {
        getPrototypeOf() {
          throw new Error(`trap at ${os.tmpdir()}/y`)
        },
      },
    )
    for (const payload of [throwing, trapped]) {
      const result = await dispatch('memory:read', payload)
      expect(result).toMatchObject({ ok: false, error: { code: 'invalid-payload' } })
      if (result.ok) continue
      expect(result.error.message).toContain('memory:read')
      expect(result.error.message).not.toContain(os.tmpdir())
      expect(result.error.message).not.toMatch(/boom|trap|\bat /)
    }
    // A payload with a null prototype (plain data) is still read.
    const plain = Object.assign(Object.create(null) as object, { path: '/memories/none.md' })
    const read = await dispatch('memory:read', plain)
    expect(read).toMatchObject({ ok: false, error: { code: 'not-found' } })
  })

  it('rejects a chat message with no visible text, storing no conversation', async () => {
    const { dispatch } = await openCore()
    const blank = await dispatch('chat:send', {
      conversationId: null,
      clientId: 'client-1',
      text: ' \n\t ',
    })
    expect(blank).toMatchObject({ ok: false, error: { code: 'invalid-payload' } })
    if (!blank.ok) expect(blank.error.message).toMatch(/text/)
    expect(await dispatch('conversations:list', {})).toEqual({ ok: true, value: [] })
  })

  it('passes a CairnError through and hides anything else', async () => {
    const logger = createRecordingLogger()
    const handlers = {
      'app:openDataFolder': () => {
        throw new CairnError('unsupported', 'Clear message')
      },
      'app:info': () => {
        throw new Error('ENOENT: /home/secret/path')
      },
    } as unknown as Handlers
    const dispatch = createDispatcher(handlers, { logger })
    expect(await dispatch('app:openDataFolder', undefined)).toEqual({
      ok: false,
      error: { code: 'unsupported', message: 'Clear message' },
    })
    const hidden = await dispatch('app:info', undefined)
    expect(hidden).toEqual({
      ok: false,
      error: { code: 'internal', message: expect.stringMatching(/^Something went wrong/) },
    })
    expect(JSON.stringify(hidden)).not.toContain('/home/secret')
    // The cause, host path and all, goes to the log only: people never see it.
    expect(logger.entries).toEqual([
      { level: 'error', message: 'app:info failed', error: new Error('ENOENT: /home/secret/path') },
    ])
  })

  it('refuses a chat message too long to send, before anything is stored', async () => {
    const { dispatch } = await openCore()
    const result = await dispatch('chat:send', {
      conversationId: null,
      clientId: 'client-1',
      text: 'x'.repeat(200_001),
    })
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid-payload' } })
    if (!result.ok) expect(result.error.message).toContain('too long')
    const list = await dispatch('conversations:list', {})
    expect(list).toEqual({ ok: true, value: [] })
  })
})
