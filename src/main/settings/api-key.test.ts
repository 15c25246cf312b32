import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createFileSecretStore, createMemorySecretStore } from './secret-store'
import { createSettingsService } from './settings-service'

let dataDir: string

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-api-key-'))
})

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
})

const KEY = 'sk-ant-api03-abcDEF_123-xyz'

describe('a pasted API key', () => {
  it('is saved without the spaces and invisible characters around it', async () => {
    const service = createSettingsService({ dataDir, secretStore: createMemorySecretStore() })
    for (const pasted of [
      `  ${KEY}\n`,
      `\u200b${KEY}\u200b`,
      `\ufeff${KEY}`,
      `\u00a0${KEY}\u00a0\r\n`,
      `${KEY}\u2060\t`,
    ]) {
      await service.setApiKey(pasted)
      expect((await service.credentials()).apiKey, JSON.stringify(pasted)).toBe(KEY)
    }
  })

  it('is refused with a clear reason when an invisible character sits inside it', async () => {
    const file = path.join(dataDir, 'secrets')
    const service = createSettingsService({
      dataDir,
      secretStore: createFileSecretStore({ file }),
    })
    await service.setApiKey(KEY)
    const cases: Array<[string, RegExp]> = [
      [`sk-ant-api03-abc\u200bDEF`, /invisible zero-width character/],
      [`sk-ant-api03-abc\nDEF`, /a line break/],
      [`sk-ant-api03-abc\u00a0DEF`, /a space/],
      [`sk-ant-api03-abc DEF`, /a space/],
      [`sk-ant-api03-abc\u0007DEF`, /a control character/],
      [`sk-ant-api03-abcé`, /the character “é”/],
      ['\u200b \u200b', /empty/],
    ]
    for (const [pasted, reason] of cases) {
      const refused = service.setApiKey(pasted)
      await expect(refused, JSON.stringify(pasted)).rejects.toMatchObject({
        code: 'invalid-api-key',
        message: expect.stringMatching(reason),
      })
      // Nothing changed: the key saved before still stands.
      expect((await service.credentials()).apiKey).toBe(KEY)
    }
  })
})
