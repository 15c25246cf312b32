/**
 * How deeply a markdown text nests its blocks. The markdown parser and React both recurse once
 * per level: a line of 4,000 `>` overflows the stack (the window went blank), and a few hundred
 * nested list levels take seconds to render. Nobody writes prose that deep, so past
 * `MAX_MARKDOWN_DEPTH` the text is shown plain instead of parsed.
 */

/** The deepest nesting still formatted (renders in well under a second at this depth). */
export const MAX_MARKDOWN_DEPTH = 64

// One container opening at the start of a line: a quote, or a list item's marker
// (`- `, `* `, `+ `, `1. `, `1) `), each after any indentation.
const OPENER = /[ \t]*(?:>|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t]))/y

/** The most containers any one line of `text` opens (quotes, list items, indentation). */
export function markdownDepth(text: string): number {
  let deepest = 0
  let start = 0
  while (start <= text.length) {
    const end = text.indexOf('\n', start)
    const stop = end === -1 ? text.length : end
    let depth = 0
    let at = start
    let indent = 0
    for (;;) {
      OPENER.lastIndex = at
      const match = OPENER.exec(text)
      if (!match || OPENER.lastIndex > stop) break
      depth++
      at = OPENER.lastIndex
    }
    // Nested lists nest by indentation: two columns a level is as shallow as markdown allows.
    while (
      start + indent < stop &&
      (text[start + indent] === ' ' || text[start + indent] === '\t')
    ) {
      indent++
    }
    deepest = Math.max(deepest, depth, Math.floor(indent / 2))
    if (deepest > MAX_MARKDOWN_DEPTH) return deepest
    start = stop + 1
  }
  return deepest
}

/**
 * The most emphasis levels the delimiter runs (`*` or `_`) of any one paragraph of `text` can
 * open: a run of one or two marks opens one, a longer run one for every two of its marks (it
 * nests `<strong>` in `<strong>`). The parser pairs them at a cost that grows with their square:
 * 5,000 nested `*_` pairs took 6 s, 1,000 took 0.15 s; a run of 10,000 `*` around one word
 * took 15 s, and then overflowed the stack rendering 5,000 nested `<strong>`, so React formatted
 * it a second time before the fallback showed (30 s of a frozen window). A streaming reply is
 * formatted again at every delta. Prose stays far below the limit.
 */
export function emphasisRuns(text: string): number {
  let most = 0
  let runs = 0
  let previous = ''
  let runLength = 0
  let lineHasText = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string
    if (char === '\n') {
      // A blank line ends the paragraph.
      if (!lineHasText) runs = 0
      lineHasText = false
    } else if (char !== ' ' && char !== '\t' && char !== '\r') {
      lineHasText = true
      if (char === '*' || char === '_') {
        runLength = char === previous ? runLength + 1 : 1
        // The first mark of a run opens a level, and every second one after it another.
        if (runLength % 2 === 1) {
          runs++
          if (runs > most) most = runs
        }
      }
    }
    previous = char
  }
  return most
}

/**
 * The most delimiter runs one paragraph may hold and still be formatted: ~10 ms a parse, so
 * even a reply streamed 12 characters at a time costs well under a second in all.
 */
export const MAX_EMPHASIS_RUNS = 1000
