import { describe, expect, it } from 'vitest'
import { commandLabel } from './describe'

describe('describe', () => {
  it('says what each command means in plain words', () => {
    expect(commandLabel('str_replace')).toContain('one passage replaced')
    expect(commandLabel('outside')).toContain('outside Cairn')
  })
})
