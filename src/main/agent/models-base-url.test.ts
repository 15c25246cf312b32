/**
 * The Settings screen's model list (`settings:models`) and `ANTHROPIC_BASE_URL`: an address the
 * chat refuses by name is refused by the list in the same words, before any request, instead
 * of a quiet fallback list. Through the real composition root, the real SDK and the fake
 * Messages API on loopback.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startFakeAnthropic, type FakeAnthropic } from '../../../test/fixtures/fake-anthropic'
import { createCore, type Core } from '../core'
import { baseUrlProblem } from './client'

let dataDir: string
let fake: FakeAnthropic
let core: Core | null = null

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-models-url-'))
  fake = await startFakeAnthropic({ apiKey: 'sk-test' })
})

afterEach(async () => {
  await core?.close()
  core = null
  await fake.close()
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
})

async function modelsWith(env: Record<string, string>) {
  await core?.close()
  core = await createCore({ dataDir, env, anthropicMaxRetries: 0 })
  return core.dispatch('settings:models', undefined)
}

describe('the model list and ANTHROPIC_BASE_URL', () => {
  it('refuses an address the chat refuses, in the chat’s words, sending nothing', async () => {
    const { host } = new URL(fake.url)
    for (const baseURL of [
      // The SDK adds `/v1/models` after these as text: into the query or the fragment.
      `${fake.url}/?key=1`,
      `${fake.url}/api#v`,
      `${fake.url}/?`,
      `http://u:secret@${host}`,
      'localhost:8080',
      '/home/someone/api',
    ]) {
      const result = await modelsWith({ ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: baseURL })
      expect(result, baseURL).toEqual({
        ok: false,
        error: { code: 'invalid-base-url', message: baseUrlProblem(baseURL) },
      })
      // The value is never quoted back (a host path, a password), nor a stack.
      const shown = JSON.stringify(result)
      for (const part of [baseURL, host, 'secret', '/home/someone', ' at ']) {
        expect(shown, `${baseURL}: ${part}`).not.toContain(part)
      }
    }
    expect(fake.requests).toEqual([])
  })

  it('still lists the API’s models through a good address', async () => {
    fake.setModels([{ id: 'claude-x', displayName: 'Claude X' }])
    const result = await modelsWith({ ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: fake.url })
    expect(result.ok).toBe(true)
    const listed = result.ok ? (result.value as ReadonlyArray<{ id: string }>) : []
    expect(listed.map((m) => m.id)).toContain('claude-x')
  })

  it('gives the fallback list without a key, as a chat says "no key" first', async () => {
    const result = await modelsWith({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/?key=1' })
    expect(result.ok).toBe(true)
    expect(fake.requests).toEqual([])
  })
})
