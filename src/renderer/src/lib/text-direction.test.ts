import { describe, expect, it } from 'vitest'
import { directionOf } from './text-direction'

describe('directionOf', () => {
  it('reads the direction of the first letter, past digits, marks and spaces', () => {
    expect(directionOf('  1. ציטוט and more')).toBe('rtl')
    expect(directionOf('— مرحبا')).toBe('rtl')
    expect(directionOf('42 Notes, then שלום')).toBe('ltr')
    expect(directionOf('Ελληνικά')).toBe('ltr')
  })

  it('has no direction for text without a letter', () => {
    expect(directionOf('')).toBeUndefined()
    expect(directionOf('12 — 34 !?')).toBeUndefined()
  })
})
