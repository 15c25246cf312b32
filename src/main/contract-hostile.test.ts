/**
 * The whole request contract called the hostile way, against the real core on a temp data
 * folder: every channel with payloads of the wrong shape, and every field of every channel
 * with hostile values (paths that climb out, host paths, NUL, huge and very long strings,
 * numbers that are NaN, negative or fractional, prototype keys). Each answer must be a typed
 * refusal in plain words (a code from the `ErrorCode` union, no stack, no host path it was not
 * given, nothing that draws as nothing), and the memory, its history and the person's
 * settings and conversations must be exactly as they were.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requestChannels } from '../shared/contract'
import { isErrorCode } from '../shared/errors'
import type { ApiResult } from '../shared/types'
import { createCore, type Core } from './core'
import { createRecordingLogger } from './lib/logger'

let core: Core
let dataDir: string
const logger = createRecordingLogger()
const gitDir = () => path.join(dataDir, 'history.git')
const ZERO = '0'.repeat(40)

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'cairn-contract-hostile-'))
  core = await createCore({
    dataDir,
    appVersion: '1.0.0',
    logger,
    env: {},
    hostName: () => 'probe',
    fetch: () => Promise.reject(new Error('no network in this test')),
    anthropicMaxRetries: 0,
  })
  for (const [file, content] of [
    ['/memories/notes.md', 'hello\n'],
    ['/memories/dir/a.md', 'a\n'],
  ]) {
    const written = await core.dispatch('memory:write', { path: file, content })
    expect(written.ok).toBe(true)
  }
  // A setting the person made, to see that nothing touches it.
  const updated = await core.dispatch('settings:update', { theme: 'dark' })
  expect(updated.ok).toBe(true)
})
afterAll(async () => {
  await core.close()
  rmSync(dataDir, { recursive: true, force: true, maxRetries: 10 })
})

/**
 * What the person would lose if a refused request changed it: the memory folder, every ref
 * and commit of its history (read by the git CLI), the settings, the conversations and the
 * sync set-up. Caches a read may fill (blame, the change index) and the machine's own id are
 * left out: they are no one's data.
 */
function state(): string {
  const lines: string[] = []
  const walk = (rel: string) => {
    const full = path.join(dataDir, rel)
    if (!existsSync(full)) return
    const stat = lstatSync(full)
    if (stat.isDirectory()) {
      lines.push(`${rel}/`)
      for (const name of readdirSync(full).sort()) walk(path.join(rel, name))
    } else {
      const bytes = stat.isFile() ? readFileSync(full) : Buffer.from('not a file')
      lines.push(`${rel} ${createHash('sha1').update(bytes).digest('hex')}`)
    }
  }
  for (const part of ['memories', 'conversations', 'settings.json', 'sync/config.json']) {
    walk(part)
  }
  lines.push(
    execFileSync(
      'git',
      ['--git-dir', gitDir(), 'log', '--all', '--format=%H %P %s', '--name-status'],
      { encoding: 'utf8' },
    ),
  )
  return lines.join('\n')
}

/** A refusal as people may read it: typed, plain, short, with nothing host-side in it. */
function expectPlainRefusal(result: ApiResult<unknown>, payload: unknown, where: string): void {
  expect(result.ok, where).toBe(false)
  if (result.ok) return
  expect(Object.keys(result.error).sort(), where).toEqual(['code', 'message'])
  const { code, message } = result.error
  expect(isErrorCode(code), `${where}: code ${code}`).toBe(true)
  expect(code, where).not.toBe('internal')
  expect(typeof message, where).toBe('string')
  expect(message.length, where).toBeGreaterThan(0)
  expect(message.length, `${where}: ${message.slice(0, 120)}`).toBeLessThanOrEqual(1000)
  // No stack frame, no raw error name or errno, no source file.
  expect(message, where).not.toMatch(
    /\n\s+at |\b(?:Type|Reference|Range|Syntax)?Error:|\bE[A-Z]{3,}\b|\.[cm]?[jt]s:\d/,
  )
  // No host path the caller did not send.
  const sent = safeJson(payload)
  for (const hostPath of [dataDir, os.tmpdir(), os.homedir(), process.cwd()]) {
    if (!sent.includes(hostPath)) expect(message, where).not.toContain(hostPath)
  }
  // Nothing that draws as nothing: a NUL, a newline or a bidi override echoed back raw would
  // break or reorder the sentence on screen.
  expect(message, where).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u)
}

function safeJson(value: unknown): string {
  try {
    return (
      JSON.stringify(value, (_key, v: unknown) =>
        typeof v === 'bigint' ? String(v) : typeof v === 'string' ? v.slice(0, 10_000) : v,
      ) ?? ''
    )
  } catch {
    return ''
  }
}

const nested = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth))
const deepObject = (depth: number): unknown =>
  JSON.parse('{"a":'.repeat(depth) + '1' + '}'.repeat(depth))

/** An object of a class, as a caller in the main process (the e2e harness) could pass. */
class Payload {
  readonly kind = 'made by a class'
}

/**
 * What IPC's structured clone keeps as it is (a Date, a Map, a Set, bytes) or a class's object:
 * zod took each as an object with no fields, so a channel whose fields are all optional ran
 * with `{}` in its place.
 */
const notPlain: ReadonlyArray<readonly [string, unknown]> = [
  ['a date', new Date(0)],
  ['a map', new Map([['path', '/memories/notes.md']])],
  ['a set', new Set(['/memories/notes.md'])],
  ['empty bytes', new Uint8Array(0)],
  ['an array buffer', new ArrayBuffer(4)],
  ['a regular expression', /notes/],
  ['an error', new Error('not a payload')],
  ['an object of a class', new Payload()],
]

/** Payloads of the wrong shape for every channel (IPC's structured clone carries all of them). */
const wrongShapes: ReadonlyArray<readonly [string, unknown]> = [
  ['null', null],
  ['a number', 42],
  ['NaN', NaN],
  ['-Infinity', -Infinity],
  ['a string', '/memories/notes.md'],
  ['a huge string', 'x'.repeat(2_000_000)],
  ['true', true],
  ['a bigint', 1n],
  ['an array', [{ path: '/memories/notes.md' }]],
  ['an own __proto__ key', JSON.parse('{"__proto__":{"polluted":true},"path":"/memories/x.md"}')],
  ['a constructor key', { constructor: { prototype: { polluted: true } } }],
  ['arrays nested 10,000 deep', nested(10_000)],
  ['objects nested 2,000 deep', deepObject(2_000)],
  ['bytes', new Uint8Array([1, 2, 3])],
  ['a key 100,000 characters long', { ['k'.repeat(100_000)]: 1 }],
  ['a key with a bidi override and a newline', { '\u202Eevil\nkey': 1, path: '/memories/x.md' }],
  [
    '10,000 unknown keys',
    Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i])),
  ],
  ...notPlain,
]

/**
 * A payload for every channel that takes an object, shaped right but naming nothing that
 * exists (or only reading): each field is swapped for hostile values in turn.
 */
const samples: Readonly<Record<string, Record<string, unknown>>> = {
  'app:dismissRecovery': { id: 'recovery-1' },
  'app:openExternal': { url: 'https://example.com/' },
  'memory:tree': { at: ZERO },
  'memory:read': { path: '/memories/notes.md', at: ZERO },
  'memory:write': { path: '/memories/notes.md', content: 'x', mustNotExist: true },
  'memory:rename': { from: '/memories/missing.md', to: '/memories/other.md' },
  'memory:delete': { path: '/memories/missing.md' },
  'memory:search': { query: 'hello' },
  'memory:dismissNotice': { id: 'notice-1' },
  'memory:removeSecrets': { path: '/memories/missing.md' },
  'history:log': { offset: 0, limit: 10, path: '/memories/notes.md', conversationId: 'c' },
  'history:show': { oid: ZERO },
  'history:fileHistory': { path: '/memories/notes.md' },
  'history:readAt': { path: '/memories/notes.md', oid: ZERO },
  'history:diff': { path: '/memories/notes.md', from: ZERO, to: ZERO },
  'history:restoreFile': { path: '/memories/notes.md', oid: ZERO },
  'history:restoreDeleted': { path: '/memories/missing.md', oid: ZERO },
  'history:revert': { oid: ZERO },
  'history:restoreAll': { oid: ZERO },
  'history:blame': { path: '/memories/notes.md', oid: ZERO },
  'history:search': { text: 'hello', before: ZERO },
  'history:compare': { from: ZERO, to: ZERO },
  'history:summaries': { oids: [ZERO] },
  'review:decide': { id: 'missing', decision: 'decline', reason: 'no', revision: 0 },
  'review:text': { id: 'missing' },
  'hygiene:expire': { path: '/memories/missing.md' },
  'chat:send': { conversationId: 'missing', clientId: 'c1', text: 'hi' },
  'chat:stop': { conversationId: 'missing' },
  'chat:dismiss': { conversationId: 'missing', turnId: 't_missing' },
  'conversations:list': { query: 'x' },
  'conversations:get': { id: 'missing' },
  'conversations:rename': { id: 'missing', title: 't' },
  'conversations:delete': { id: 'missing' },
  'settings:update': { theme: 'bogus' },
  'sync:configure': { url: 'file:///etc/passwd', intervalMinutes: 5 },
  'sync:test': { url: 'file:///etc/passwd' },
  'sync:resolve': { path: '/memories/notes.md', choice: 'ours' },
  'sync:join': { choice: 'merge' },
  'sync:restoreBackup': { name: 'missing' },
  'sync:export': { kind: 'zip', at: ZERO },
  'sync:import': { kind: 'folder' },
}

/** Values each field is swapped for. */
const hostileValues: ReadonlyArray<readonly [string, unknown]> = [
  ['..', '..'],
  ['../../etc/passwd', '../../etc/passwd'],
  ['a climb out of /memories', '/memories/../../settings.json'],
  ['an encoded climb', '/memories/..%2f..%2fsettings.json'],
  ['backslashes', '/memories/..\\..\\settings.json'],
  ['the data folder’s own file', '<data>/settings.json'],
  ['a host file', '/etc/passwd'],
  ['a Windows path', 'C:\\Windows\\win.ini'],
  ['a NUL inside', '/memories/a\0b.md'],
  ['a NUL alone', '\0'],
  ['a bidi override', '/memories/\u202Egnp.md'],
  ['a newline', '/memories/a\nb.md'],
  ['the history folder', '/memories/../history.git/HEAD'],
  ['a hidden git folder', '/memories/.git/config'],
  ['a very long name', `/memories/${'a'.repeat(300)}.md`],
  ['a 4,096-character path', `/memories/${'b/'.repeat(2043)}`],
  ['a huge string', 'x'.repeat(40_000_000)],
  ['__proto__', '__proto__'],
  ['a number', 42],
  ['NaN', NaN],
  ['a negative number', -1],
  ['a fraction', 1.5],
  ['Infinity', Infinity],
  ['true', true],
  ['an array', ['/memories/notes.md']],
  ['an object', { path: '/memories/notes.md' }],
  ['a bigint', 1n],
  ...notPlain,
]

/** Swaps that are a request the person may make, answered as such (not refusals). */
const legitimate: ReadonlySet<string> = new Set([
  // Reads: anything may be looked for (an unknown path or conversation has no history).
  'memory:search query',
  'history:log offset',
  'history:log limit',
  'history:log path',
  'history:log conversationId',
  'history:fileHistory path',
  'conversations:list query',
  'history:search text',
  // Stopping a turn that is not running is no error.
  'chat:stop conversationId',
  // The test asks for a report on an address; a bad one is an answer, not a refusal.
  'sync:test url',
])

describe('the contract, called the hostile way, against the real core', () => {
  it('answers every channel’s wrong-shaped payloads with invalid-payload in plain words, changing nothing', async () => {
    const before = state()
    for (const channel of requestChannels) {
      for (const [name, payload] of wrongShapes) {
        const result = await core.dispatch(channel, payload)
        const where = `${channel} given ${name}`
        expectPlainRefusal(result, payload, where)
        if (!result.ok) expect(result.error.code, where).toBe('invalid-payload')
      }
    }
    expect(state()).toBe(before)
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
    expect(logger.entries.filter((entry) => entry.level === 'error')).toEqual([])
  })

  it.each(Object.keys(samples))(
    'refuses every hostile field of %s with a typed code in plain words, changing nothing',
    async (channel) => {
      expect(requestChannels).toContain(channel)
      const sample = samples[channel]!
      const before = state()
      const problems: string[] = []
      for (const field of Object.keys(sample)) {
        for (const [name, raw] of hostileValues) {
          const value = raw === '<data>/settings.json' ? path.join(dataDir, 'settings.json') : raw
          const payload = { ...sample, [field]: value }
          const result = await core.dispatch(channel, payload)
          if (result.ok && legitimate.has(`${channel} ${field}`)) continue
          try {
            expectPlainRefusal(result, payload, `${channel} with ${field} = ${name}`)
          } catch (error) {
            problems.push((error as Error).message.split('\n')[0]!.slice(0, 300))
          }
        }
      }
      expect(problems).toEqual([])
      expect(state()).toBe(before)
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
      expect(logger.entries.filter((entry) => entry.level === 'error')).toEqual([])
    },
  )

  it('refuses an API key holding what no key holds, naming it in words that draw', async () => {
    for (const key of [
      'sk-ant-\u202Eabc',
      'sk-ant-\u2066abc',
      'sk-ant-\0abc',
      'sk-\u2028ant',
      'sk-ant-\u200Babc',
    ]) {
      const result = await core.dispatch('settings:setApiKey', { key })
      expectPlainRefusal(result, { key }, JSON.stringify(key))
      if (!result.ok) expect(result.error.code).toBe('invalid-api-key')
    }
    expect(await core.dispatch('settings:get', undefined)).toMatchObject({
      ok: true,
      value: { hasApiKey: false },
    })
  })

  it('refuses a date, a map, a set, bytes or a class’s object where plain data is expected, not taking it as {}', async () => {
    const before = state()
    const settingsBefore = await core.dispatch('settings:get', undefined)
    for (const [name, value] of notPlain) {
      // Channels whose fields are all optional: the schema alone took each as `{}`.
      for (const [channel, payload] of [
        ['memory:tree', value],
        ['settings:update', value],
        ['conversations:list', value],
      ] as const) {
        const result = await core.dispatch(channel, payload)
        const where = `${channel} given ${name}`
        expectPlainRefusal(result, payload, where)
        if (!result.ok) expect(result.error.code, where).toBe('invalid-payload')
      }
    }
    expect(await core.dispatch('settings:get', undefined)).toEqual(settingsBefore)
    expect(state()).toBe(before)
    // The same requests as plain data are answered.
    expect((await core.dispatch('memory:tree', {})).ok).toBe(true)
    expect((await core.dispatch('settings:update', {})).ok).toBe(true)
  })

  it('refuses a model name or a sync address holding a bidi control, a direction mark or a line break', async () => {
    const before = state()
    const settingsBefore = await core.dispatch('settings:get', undefined)
    const syncBefore = await core.dispatch('sync:status', undefined)
    for (const mark of [
      '\u202A',
      '\u202B',
      '\u202C',
      '\u202D',
      '\u202E',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
      '\u200E',
      '\u200F',
      '\n',
    ]) {
      const model = `claude-${mark}tennos-4-6`
      const refused = await core.dispatch('settings:update', { model })
      expectPlainRefusal(refused, { model }, `model with ${JSON.stringify(mark)}`)
      if (!refused.ok) expect(refused.error.code).toBe('invalid-payload')

      const url = `https://example.com/you/${mark}tig.yromem`
      const configured = await core.dispatch('sync:configure', { url })
      expectPlainRefusal(configured, { url }, `sync address with ${JSON.stringify(mark)}`)
      if (!configured.ok) {
        expect(configured.error.code).toBe('sync-invalid-url')
        expect(configured.error.message).toContain('invisible character')
      }
      // Test connection answers as it does for any address it cannot use, sending nothing.
      expect(await core.dispatch('sync:test', { url })).toMatchObject({
        ok: true,
        value: { ok: false, found: 'invalid-url' },
      })
    }
    expect(await core.dispatch('settings:get', undefined)).toEqual(settingsBefore)
    expect(await core.dispatch('sync:status', undefined)).toEqual(syncBefore)
    expect(state()).toBe(before)
  })

  it('takes __proto__ and constructor as plain memory file names, polluting nothing', async () => {
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      const file = `/memories/${name}`
      const written = await core.dispatch('memory:write', { path: file, content: `${name}\n` })
      expect(written.ok, name).toBe(true)
      const read = await core.dispatch('memory:read', { path: file })
      expect(read).toMatchObject({
        ok: true,
        value: { path: file, kind: 'text', text: `${name}\n` },
      })
    }
    const tree = execFileSync(
      'git',
      ['--git-dir', gitDir(), 'ls-tree', '-r', '--name-only', 'HEAD'],
      {
        encoding: 'utf8',
      },
    )
    expect(tree.split('\n')).toEqual(
      expect.arrayContaining(['__proto__', 'constructor', 'prototype']),
    )
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
    expect(Object.getPrototypeOf({})).toBe(Object.prototype)
  })
})
