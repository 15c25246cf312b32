import { describe, expect, it } from 'vitest'
import {
  emphasisRuns,
  markdownDepth,
  MAX_EMPHASIS_RUNS,
  MAX_MARKDOWN_DEPTH,
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

describe('emphasisRuns', () => {
  it('counts each run of * or _ once for every level it can open, per paragraph', () => {
    expect(emphasisRuns('plain')).toBe(0)
    expect(emphasisRuns('**bold** and _it_')).toBe(4)
    expect(emphasisRuns('***both*** and ____')).toBe(6)
    expect(emphasisRuns('a rule:\n\n' + '_'.repeat(40))).toBe(20)
    expect(emphasisRuns('*a*\n*b*\n\n*c*')).toBe(4)
    expect(emphasisRuns('*a*\n  \n*c*')).toBe(2)
  })

  it('finds the nested emphasis that froze the window for seconds, not long prose', () => {
    const nested = `${'*_'.repeat(5000)}x${'_*'.repeat(5000)}`
    expect(emphasisRuns(nested)).toBeGreaterThan(MAX_EMPHASIS_RUNS)
    const prose = Array.from({ length: 2000 }, (_, i) => `Note ${i}: the **key** point.`).join(
      '\n\n',
    )
    expect(emphasisRuns(prose)).toBeLessThanOrEqual(MAX_EMPHASIS_RUNS)
  })

  it('finds thousands of levels nested by two long runs of * (15 s to parse, then a stack overflow)', () => {
    // Two runs only, yet 5,000 nested <strong>: counted as two, it was parsed (15 s), overflowed
    // the stack rendering, and was parsed again before the plain text showed.
    const nested = `${'**'.repeat(5000)}bold${'**'.repeat(5000)}`
    expect(emphasisRuns(nested)).toBe(10000)
    expect(emphasisRuns(`${'*'.repeat(2001)}x`)).toBe(1001)
    expect(emphasisRuns(`${'*'.repeat(2000)}x`)).toBe(MAX_EMPHASIS_RUNS)
  })
})
