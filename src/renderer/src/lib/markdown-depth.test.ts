import { describe, expect, it } from 'vitest'
import {
  emphasisLevels,
  inlineLevels,
  markdownDepth,
  MAX_EMPHASIS_LEVELS,
  MAX_LINK_LEVELS,
  MAX_MARKDOWN_DEPTH,
  MAX_STRIKE_LEVELS,
  STREAMING_SHARE,
  unformattable,
} from './markdown-depth'

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

describe('emphasisLevels', () => {
  it('counts each run of * or _ once for every level it can open, per paragraph', () => {
    expect(emphasisLevels('plain')).toBe(0)
    expect(emphasisLevels('**bold** and _it_')).toBe(4)
    expect(emphasisLevels('***both*** and ____')).toBe(6)
    expect(emphasisLevels('a rule:\n\n' + '_'.repeat(40))).toBe(20)
    expect(emphasisLevels('*a*\n*b*\n\n*c*')).toBe(4)
    expect(emphasisLevels('*a*\n  \n*c*')).toBe(2)
  })

  it('finds the nested emphasis that froze the window for seconds, not long prose', () => {
    const nested = `${'*_'.repeat(5000)}x${'_*'.repeat(5000)}`
    expect(emphasisLevels(nested)).toBeGreaterThan(MAX_EMPHASIS_LEVELS)
    const prose = Array.from({ length: 2000 }, (_, i) => `Note ${i}: the **key** point.`).join(
      '\n\n',
    )
    expect(emphasisLevels(prose)).toBeLessThanOrEqual(MAX_EMPHASIS_LEVELS)
  })

  it('finds thousands of levels nested by two long runs of * (15 s to parse, then a stack overflow)', () => {
    // Two runs only, yet 5,000 nested <strong>: counted as two, it was parsed (15 s), overflowed
    // the stack rendering, and was parsed again before the plain text showed.
    const nested = `${'**'.repeat(5000)}bold${'**'.repeat(5000)}`
    expect(emphasisLevels(nested)).toBe(10000)
    expect(emphasisLevels(`${'*'.repeat(2001)}x`)).toBe(1001)
    expect(emphasisLevels(`${'*'.repeat(2000)}x`)).toBe(MAX_EMPHASIS_LEVELS)
  })
})

describe('inlineLevels', () => {
  it('counts strikethrough runs and open brackets per paragraph', () => {
    expect(inlineLevels('~~gone~~ and ~one~')).toEqual({ emphasis: 0, strike: 4, links: 0 })
    // Three or more tildes are a fence, not strikethrough.
    expect(inlineLevels('~~~\ncode\n~~~').strike).toBe(0)
    expect(inlineLevels('[a](u) [b][c] ![d](e)').links).toBe(1)
    expect(inlineLevels('[[a]] [b').links).toBe(2)
    expect(inlineLevels('\\[ not a link \\[').links).toBe(0)
    expect(inlineLevels('[a\n\n[b').links).toBe(1)
    expect(inlineLevels('~a~\n\n~b~').strike).toBe(2)
  })

  it('counts a bracket after an even run of backslashes: in \\\\[ the backslash escapes itself', () => {
    expect(inlineLevels('\\\\[a').links).toBe(1)
    expect(inlineLevels('\\\\\\[a \\\\\\]').links).toBe(0)
    expect(inlineLevels('[[a\\\\] [b').links).toBe(2)
    // 5,000 of them took 11 s to parse and were formatted all the same.
    expect(inlineLevels('\\\\['.repeat(5000)).links).toBe(5000)
    expect(unformattable(`${'\\\\['.repeat(5000)}x`)).toBe('marks')
  })
})

describe('inlineLevels of lists and headings', () => {
  it('counts each list item and heading as its own paragraph, as the parser does', () => {
    const log = Array.from({ length: 2000 }, (_, i) => `- **${i}** ~~was~~ [seen](u)`).join('\n')
    expect(inlineLevels(log)).toEqual({ emphasis: 2, strike: 2, links: 1 })
    const numbered = Array.from({ length: 600 }, () => '1. **a** b').join('\n')
    expect(inlineLevels(numbered).emphasis).toBe(2)
    expect(inlineLevels('# *a* [b\n*c* [d').links).toBe(1)
    expect(inlineLevels('# *a* [b\n*c* [d').emphasis).toBe(2)
  })

  it('counts lines that go on a paragraph with it, however they look', () => {
    // "2." cannot interrupt a paragraph, a marker without text neither, and four columns in
    // the line is the paragraph's own.
    expect(inlineLevels('text\n2. *a*\n2. *b*').emphasis).toBe(4)
    expect(inlineLevels('text *a*\n-\n*b*').emphasis).toBe(4)
    expect(inlineLevels('text *a*\n    - *b*').emphasis).toBe(4)
    expect(inlineLevels('> *a*\n> - *b*').emphasis).toBe(4)
  })
})

describe('unformattable', () => {
  it('formats ordinary markdown: links, images, strikethrough, tables, code', () => {
    const ordinary = [
      '# Notes',
      'See [the docs](https://example.com) and ![a chart](chart.png), ~~old~~ **new**.',
      '| a | b |\n|---|---|\n| `x` | <y> |',
      '```ts\nconst a = [[1], [2]]\n```',
    ].join('\n\n')
    expect(unformattable(ordinary)).toBeNull()
    expect(unformattable(ordinary, true)).toBeNull()
    // Thousands of links in one paragraph nest nothing.
    expect(unformattable('[a](u) '.repeat(3000))).toBeNull()
  })

  it('refuses images nested 3,000 deep and 5,000 open brackets (76 s and 11 s to parse)', () => {
    expect(unformattable(`${'!['.repeat(3000)}x${'](u)'.repeat(3000)}`)).toBe('marks')
    expect(unformattable('['.repeat(5000))).toBe('marks')
    expect(unformattable(`${'['.repeat(MAX_LINK_LEVELS)}x`)).toBeNull()
    expect(unformattable(`${'['.repeat(MAX_LINK_LEVELS + 1)}x`)).toBe('marks')
  })

  it('refuses strikethrough nested 1,000 deep (2.9 s to parse; 3,000 overflowed the stack)', () => {
    expect(unformattable(`${'~~a '.repeat(1000)}x${' a~~'.repeat(1000)}`)).toBe('marks')
    expect(unformattable(`${'~a '.repeat(3000)}x${' a~'.repeat(3000)}`)).toBe('marks')
    expect(unformattable('~~a '.repeat(MAX_STRIKE_LEVELS))).toBeNull()
    expect(unformattable('~~a '.repeat(MAX_STRIKE_LEVELS + 1))).toBe('marks')
  })

  it('while streaming, waits with text that would cost more than a sixteenth of the limit a delta', () => {
    const some = `${'*_'.repeat(MAX_EMPHASIS_LEVELS / STREAMING_SHARE / 2 + 1)}x`
    expect(unformattable(some)).toBeNull()
    expect(unformattable(some, true)).toBe('streaming')
    const links = `${'['.repeat(MAX_LINK_LEVELS / STREAMING_SHARE + 1)}x`
    expect(unformattable(links, true)).toBe('streaming')
    expect(unformattable(`${'*_'.repeat(600)}x`, true)).toBe('marks')
  })
})
