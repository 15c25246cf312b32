/**
 * The reading of conflict blocks through its marker index is the plain walk it replaced
 * (review hunt11 D11: the walk from each start marker to the end of the text made a text of
 * start markers alone quadratic; its timing is in bench-free figures in the report, not here).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { conflictBlocks, type ConflictBlock } from './conflict-markers'

// The walk as it was: from each start marker, line by line to the end.
function walked(text: string, wanted?: number): ConflictBlock[] {
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? []
  const strip = (line: string) => line.replace(/\n$/, '').replace(/\r$/, '')
  const marker = (line: string | undefined, char: '<' | '>') => {
    if (line === undefined) return null
    const match = (char === '<' ? /^(<{7,})(?: (.*))?$/ : /^(>{7,})(?: (.*))?$/).exec(strip(line))
    return match ? { size: match[1]!.length, label: match[2] ?? '' } : null
  }
  const blocks: ConflictBlock[] = []
  let i = 0
  outer: while (i < lines.length) {
    const opening = marker(lines[i], '<')
    if (!opening || (wanted !== undefined && opening.size !== wanted)) {
      i++
      continue
    }
    let middle = -1
    for (let j = i + 1; j < lines.length; j++) {
      const line = lines[j]!
      if (marker(line, '<')?.size === opening.size) break
      if (middle < 0 && strip(line) === '='.repeat(opening.size)) {
        middle = j
        continue
      }
      const closing = marker(line, '>')
      if (closing?.size === opening.size) {
        if (middle < 0) break
        blocks.push({
          ours: lines.slice(i + 1, middle).join(''),
          theirs: lines.slice(middle + 1, j).join(''),
          oursLabel: opening.label,
          theirsLabel: closing.label,
        })
        i = j + 1
        continue outer
      }
    }
    i++
  }
  return blocks
}

const line = fc.oneof(
  fc.constantFrom('a', 'b', '', '=======', '========', '<<<<<<< x', '>>>>>>> y'),
  fc.constantFrom('<<<<<<<< x', '>>>>>>>> y', '<<<<<<<', '>>>>>>>', '<<<<<<<x', '=======\r'),
)

describe('conflict blocks read through the marker index', () => {
  it('are the blocks the plain walk finds, at any size or one size', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 40 }), fc.boolean(), (lines, ended) => {
        const text = lines.join('\n') + (ended ? '\n' : '')
        expect(conflictBlocks(text)).toEqual(walked(text))
        expect(conflictBlocks(text, 8)).toEqual(walked(text, 8))
      }),
      { numRuns: 2_000 },
    )
  })
})
