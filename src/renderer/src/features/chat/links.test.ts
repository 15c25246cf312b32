import { describe, expect, it } from 'vitest'
import { isOpenableUrl } from './links'

describe('isOpenableUrl', () => {
  it('accepts https links', () => {
    expect(isOpenableUrl('https://docs.python.org/3/')).toBe(true)
  })

  it('refuses every other scheme, relative links and garbage', () => {
    for (const href of [
      'http://example.com',
      'javascript:alert(1)',
      'file:///etc/passwd',
      'data:text/html,hi',
      'mailto:a@b.c',
      '/relative',
      'not a url',
      '',
      undefined,
    ]) {
      expect(isOpenableUrl(href)).toBe(false)
    }
  })
})
