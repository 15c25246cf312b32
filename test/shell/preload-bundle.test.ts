/**
 * The built preload (`out/preload/index.cjs`) run as Electron's sandbox runs it: a script whose
 * `require` knows only `electron`, here a recording stand-in for contextBridge and ipcRenderer.
 */
import { readFile } from 'node:fs/promises'
import vm from 'node:vm'
import { beforeAll, describe, expect, it } from 'vitest'
import { eventChannel, requestChannels } from '../../src/shared/channels'
import { builtFile } from './built'

type Listener = (event: unknown, message: unknown) => void

function loadPreload(code: string) {
  const required: string[] = []
  const exposed = new Map<string, unknown>()
  const invoked: Array<[string, unknown]> = []
  const listeners = new Map<string, Listener[]>()
  const electron = {
    contextBridge: {
      exposeInMainWorld: (key: string, value: unknown) => exposed.set(key, value),
    },
    ipcRenderer: {
      invoke: async (channel: string, payload: unknown) => {
        invoked.push([channel, payload])
        return { ok: true, value: `answer to ${channel}` }
      },
      on: (channel: string, listener: Listener) =>
        listeners.set(channel, [...(listeners.get(channel) ?? []), listener]),
      removeListener: (channel: string, listener: Listener) =>
        listeners.set(
          channel,
          (listeners.get(channel) ?? []).filter((candidate) => candidate !== listener),
        ),
    },
  }
  const sandboxRequire = (name: string) => {
    required.push(name)
    if (name === 'electron') return electron
    throw new Error(`a sandboxed preload cannot require ${name}`)
  }
  const module = { exports: {} }
  vm.runInNewContext(code, { require: sandboxRequire, module, exports: module.exports })
  const emit = (message: unknown) => {
    for (const listener of listeners.get(eventChannel) ?? []) listener({ sender: 'ipc' }, message)
  }
  return { required, exposed, invoked, listeners, emit }
}

let code = ''
beforeAll(async () => {
  const file = await builtFile('out/preload/index.cjs', ['src/preload', 'src/shared'])
  code = await readFile(file, 'utf8')
})

describe('the built preload', () => {
  it('requires nothing but electron, as the sandbox demands', () => {
    expect(loadPreload(code).required).toEqual(['electron'])
  })

  it('exposes one object, window.api, made of named functions only', () => {
    const { exposed } = loadPreload(code)
    expect([...exposed.keys()]).toEqual(['api'])
    const api = exposed.get('api') as Record<string, unknown>
    const names: string[] = []
    for (const [domain, value] of Object.entries(api)) {
      if (domain === 'on') {
        expect(typeof value).toBe('function')
        continue
      }
      // A plain object (from the preload's realm), nothing with behaviour of its own.
      expect(typeof value).toBe('object')
      expect(Object.getPrototypeOf(Object.getPrototypeOf(value))).toBeNull()
      for (const [verb, method] of Object.entries(value as Record<string, unknown>)) {
        expect(typeof method, `${domain}.${verb}`).toBe('function')
        names.push(`${domain}:${verb}`)
      }
    }
    expect(names.sort()).toEqual([...requestChannels].sort())
    expect(JSON.stringify(Object.keys(api))).not.toMatch(/ipc|invoke|send|electron|require/i)
  })

  it('sends each call on its own contract channel and hands back main’s envelope', async () => {
    const { exposed, invoked } = loadPreload(code)
    const api = exposed.get('api') as { history: { log(payload: unknown): Promise<unknown> } }
    await expect(api.history.log({ offset: 0, limit: 5 })).resolves.toEqual({
      ok: true,
      value: 'answer to history:log',
    })
    expect(invoked).toEqual([['history:log', { offset: 0, limit: 5 }]])
  })

  it('delivers only the named event, only its data, and stops when unsubscribed', () => {
    const { exposed, emit, listeners } = loadPreload(code)
    const api = exposed.get('api') as {
      on(event: string, listener: (...args: unknown[]) => void): () => void
    }
    const received: unknown[][] = []
    const stop = api.on('app:command', (...args) => received.push(args))
    expect([...listeners.keys()]).toEqual([eventChannel])
    emit({ name: 'app:command', data: { command: 'new-chat' } })
    emit({ name: 'history:commit', data: { oid: 'x' } })
    expect(received).toEqual([[{ command: 'new-chat' }]])
    stop()
    emit({ name: 'app:command', data: { command: 'show-memory' } })
    expect(received).toHaveLength(1)
    expect(listeners.get(eventChannel)).toEqual([])
  })
})
