import { describe, expect, it } from 'vitest'
import { requestSchemas } from '../../../../shared/contract'
import { MAX_API_KEY_CHARS, MAX_INSTRUCTIONS_CHARS } from '../../../../shared/types'
import { apiKeyProblem, instructionsCount, instructionsProblem } from './limits'

// Review hunt10-app D7: past the limits Settings showed "Invalid request for settings:update:
// customInstructions: Too big: expected string to have <=20000 characters".
describe('settings limits in words', () => {
  it('counts custom instructions against their limit and refuses past it', () => {
    expect(instructionsCount('x'.repeat(1234))).toBe('1,234 of 20,000 characters')
    expect(instructionsProblem('x'.repeat(MAX_INSTRUCTIONS_CHARS))).toBeNull()
    expect(instructionsProblem('x'.repeat(MAX_INSTRUCTIONS_CHARS + 1))).toBe(
      'Custom instructions can be at most 20,000 characters, and these have 20,001. Shorten them, or keep the long text in a memory file Claude can read.',
    )
  })

  it('says a pasted text too long for a key is not a key', () => {
    expect(apiKeyProblem(`sk-ant-${'a'.repeat(100)}`)).toBeNull()
    expect(apiKeyProblem('a'.repeat(MAX_API_KEY_CHARS + 1))).toMatch(
      /^This is not an API key: Anthropic keys are about 100 characters long, and this text has 501\./,
    )
  })

  it('uses the limits the channels enforce, so the two cannot drift apart', () => {
    const update = requestSchemas['settings:update']
    const at = 'x'.repeat(MAX_INSTRUCTIONS_CHARS)
    expect(update.safeParse({ customInstructions: at }).success).toBe(true)
    expect(update.safeParse({ customInstructions: `${at}x` }).success).toBe(false)
    const key = requestSchemas['settings:setApiKey']
    expect(key.safeParse({ key: 'k'.repeat(MAX_API_KEY_CHARS) }).success).toBe(true)
    expect(key.safeParse({ key: 'k'.repeat(MAX_API_KEY_CHARS + 1) }).success).toBe(false)
  })
})
