import { describe, expect, it } from 'vitest'
import { markdownDepth, MAX_MARKDOWN_DEPTH } from './markdown-depth'

describe('markdownDepth', () => {
  it('counts quotes and list markers opened at the start of a line', () => {
    expect(markdownDepth('plain text\n\nmore')).toBe(0)
    expect(markdownDepth('> quoted\n> > twice')).toBe(2)
    expect(markdownDepth('- a\n  - b\n    1. c')).toBe(2)
    expect(markdownDepth('> - quoted item')).toBe(2)
  })

  it('does not take rules, emphasis or numbers in text for nesting', () => {
    expect(markdownDepth('-'.repeat(500))).toBe(0)
    expect(markdownDepth('*'.repeat(500))).toBe(0)
    expect(markdownDepth('2026. A year.')).toBe(1)
    expect(markdownDepth('a > b > c')).toBe(0)
  })

  it('finds the line of 4,000 ">" and the deeply indented list that hang the renderer', () => {
    expect(markdownDepth(`${'>'.repeat(4000)} x`)).toBeGreaterThan(MAX_MARKDOWN_DEPTH)
    const list = Array.from({ length: 500 }, (_, i) => `${' '.repeat(i * 2)}- a`).join('\n')
    expect(markdownDepth(list)).toBeGreaterThan(MAX_MARKDOWN_DEPTH)
    expect(markdownDepth(`intro\n\n${'> '.repeat(MAX_MARKDOWN_DEPTH)}fine`)).toBe(
      MAX_MARKDOWN_DEPTH,
    )
  })
})
