import { createServer, type Socket } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startFakeAnthropic, type FakeAnthropic } from '../../../test/fixtures/fake-anthropic'
import { createAnthropicClient, FALLBACK_MODELS, listModels } from './client'

let fake: FakeAnthropic

beforeEach(async () => {
  fake = await startFakeAnthropic({ apiKey: 'sk-good' })
})

afterEach(async () => {
  await fake.close()
})

describe('listModels', () => {
  it('lists what the API offers the key', async () => {
    fake.setModels([{ id: 'claude-x', displayName: 'Claude X' }])
    const client = createAnthropicClient({ apiKey: 'sk-good', baseURL: fake.url, maxRetries: 0 })
    expect(await listModels(client, 'claude-x')).toEqual([
      { id: 'claude-x', displayName: 'Claude X' },
    ])
  })

  it('falls back without a key or when the call fails, keeping the current model', async () => {
    expect(await listModels(null, FALLBACK_MODELS[0]!.id)).toEqual(FALLBACK_MODELS)
    const bad = createAnthropicClient({ apiKey: 'sk-bad', baseURL: fake.url, maxRetries: 0 })
    expect(await listModels(bad, 'my-custom-model')).toEqual([
      { id: 'my-custom-model', displayName: 'my-custom-model' },
      ...FALLBACK_MODELS,
    ])
  })

  it('falls back when the API accepts the connection and never answers', async () => {
    const sockets: Socket[] = []
    const silent = createServer((socket) => void sockets.push(socket))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const { port } = silent.address() as { port: number }
    try {
      const client = createAnthropicClient({
        apiKey: 'sk-good',
        baseURL: `http://127.0.0.1:${port}`,
        maxRetries: 0,
      })
      expect(await listModels(client, FALLBACK_MODELS[0]!.id, 300)).toEqual(FALLBACK_MODELS)
      expect(sockets.length).toBeGreaterThan(0)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  })
})
