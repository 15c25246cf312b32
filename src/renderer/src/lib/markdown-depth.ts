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
 * The most emphasis delimiter runs (`*` or `_`, each maximal run counted once) in any one
 * paragraph of `text`. The parser pairs them at a cost that grows with their square: 5,000
 * nested `*_` pairs took 6 s, 1,000 took 0.15 s; and a streaming reply is formatted again at
 * every delta. Prose stays far below the limit.
 */
export function emphasisRuns(text: string): number {
  let most = 0
  let runs = 0
  let previous = ''
  let lineHasText = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string
    if (char === '\n') {
      // A blank line ends the paragraph.
      if (!lineHasText) runs = 0
      lineHasText = false
    } else if (char !== ' ' && char !== '\t' && char !== '\r') {
      lineHasText = true
      if ((char === '*' || char === '_') && char !== previous) {
        runs++
        if (runs > most) most = runs
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
