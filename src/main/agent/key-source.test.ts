/**
 * Which API key a turn sends when `ANTHROPIC_API_KEY` is set and a key is saved in Settings, and
 * what a 401 tells the person: through createCore + dispatch, the real SDK and the fake API.
 */
import { describe, expect, it } from 'vitest'
import { apiKeyOf, reply } from '../../../test/fixtures/fake-anthropic'
import { coreThroughFakeApi } from '../core-test-support'

const ENV_KEY = `sk-ant-api03-${'r'.repeat(93)}AA`
const SAVED_KEY = `sk-ant-api03-${'g'.repeat(93)}AA`

const cairn = coreThroughFakeApi({ prefix: 'cairn-key-source-', apiKey: ENV_KEY })
const { call } = cairn

// One turn through chat:send; resolves with its error event (null when it went well).
async function turn(conversationId: string | null, text: string) {
  const finished = await cairn.turn(conversationId, text)
  const error = finished.events.find((e) => e.type === 'error')
  return { id: finished.conversationId, error: error?.type === 'error' ? error : null }
}

describe('a key saved in Settings and ANTHROPIC_API_KEY', () => {
  it('uses the saved key once the person saves one after a 401 that names the environment', async () => {
    expect(await call('settings:get')).toMatchObject({ apiKeySource: 'env', envApiKey: true })

    cairn.fake.script(reply.error(401))
    const first = await turn(null, 'hi')
    expect(apiKeyOf(cairn.fake.messageRequests()[0]!)).toBe(ENV_KEY)
    expect(first.error).toMatchObject({ code: 'invalid-api-key' })
    expect(first.error?.message).toContain('ANTHROPIC_API_KEY environment variable')

    const saved = await call('settings:setApiKey', { key: SAVED_KEY })
    expect(saved).toMatchObject({ hasApiKey: true, apiKeySource: 'memory', envApiKey: true })
    expect(JSON.stringify(saved)).not.toContain(SAVED_KEY)

    cairn.fake.script(reply.text('Hello!'))
    const second = await turn(first.id, 'hi again')
    expect(second.error).toBeNull()
    expect(apiKeyOf(cairn.fake.messageRequests()[1]!)).toBe(SAVED_KEY)

    // A saved key the API refuses is named as the saved one.
    cairn.fake.script(reply.error(401))
    const third = await turn(first.id, 'and again')
    expect(apiKeyOf(cairn.fake.messageRequests()[2]!)).toBe(SAVED_KEY)
    expect(third.error?.message).toBe(
      'The Anthropic API rejected the API key saved in Settings (401). Check or replace it in Settings.',
    )

    // Removing the saved key hands the turn back to the environment's key.
    expect(await call('settings:clearApiKey')).toMatchObject({
      hasApiKey: true,
      apiKeySource: 'env',
    })
    cairn.fake.script(reply.text('Back on the environment key.'))
    expect((await turn(first.id, 'once more')).error).toBeNull()
    expect(apiKeyOf(cairn.fake.messageRequests()[3]!)).toBe(ENV_KEY)
  })
})
