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

/** The most levels one paragraph opens of each inline construct the parser pairs. */
export interface InlineLevels {
  /** Emphasis: a run of one or two `*` or `_` opens one level, a longer run one per two marks. */
  readonly emphasis: number
  /** Strikethrough: each run of one or two `~` (three or more is a code fence, not a level). */
  readonly strike: number
  /** Links and images: the most `[` (or `![`) open at once, each `]` closing one. */
  readonly links: number
}

// A line that always starts a block of its own, even right after a paragraph's line: a bullet
// item, an item numbered 1 (only these interrupt a paragraph), or a heading, each with text and
// indented at most three columns (deeper, it may continue the paragraph). Anything else may go on
// the paragraph before, so it is counted with it: the guard may overcount, never undercount.
const BLOCK_START = /[ ]{0,3}([-*+]|1[.)]|#{1,6})[ \t]+[^ \t\r\n]/y

/**
 * The most levels the inline marks of any one paragraph of `text` can open, by kind. The parser
 * pairs openers with closers by walking back over every opener still open, so its work grows
 * with the square of the levels (faster still for nested images), never with plain length:
 *
 * - emphasis: 5,000 nested `*_` pairs took 6 s, 1,000 took 0.15 s; a run of 10,000 `*` around
 *   one word took 15 s, then overflowed the stack rendering 5,000 nested `<strong>`;
 * - strikethrough costs about 18 times emphasis a run: `~~a ` nested 1,000 deep took 2.9 s,
 *   3,000 deep 30 s and then overflowed the stack;
 * - links and images: `![` nested 3,000 deep took 76 s, 5,000 unclosed `[` 11 s.
 *
 * Backticks, `<` and table pipes grow with the text, not faster (measured at 1,000 each), and
 * block nesting is `markdownDepth`'s. A blank line ends a paragraph; one scan, no allocation.
 */
export function inlineLevels(text: string): InlineLevels {
  let emphasis = 0
  let strike = 0
  let links = 0
  let emphasisHere = 0
  let strikeHere = 0
  let linksHere = 0
  let previous = ''
  let runLength = 0
  let lineHasText = false
  let headingLine = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string
    if (i === 0 || previous === '\n') {
      BLOCK_START.lastIndex = i
      const block = BLOCK_START.exec(text)
      if (block) {
        emphasisHere = 0
        strikeHere = 0
        linksHere = 0
        headingLine = block[1]?.startsWith('#') === true
      }
    }
    if (char === '\n') {
      // A blank line ends the paragraph, and so does the end of a heading.
      if (!lineHasText || headingLine) {
        emphasisHere = 0
        strikeHere = 0
        linksHere = 0
      }
      lineHasText = false
      headingLine = false
    } else if (char !== ' ' && char !== '\t' && char !== '\r') {
      lineHasText = true
      // Only an odd run of backslashes escapes: in `\\[` the backslash escapes itself.
      const escaped = previous === '\\' && runLength % 2 === 1
      runLength = char === previous ? runLength + 1 : 1
      if (char === '*' || char === '_') {
        // The first mark of a run opens a level, and every second one after it another.
        if (runLength % 2 === 1 && ++emphasisHere > emphasis) emphasis = emphasisHere
      } else if (char === '~') {
        // Counted where the run ends: one or two marks open a level.
        if (runLength <= 2 && text[i + 1] !== '~' && ++strikeHere > strike) strike = strikeHere
      } else if (char === '[') {
        if (!escaped && ++linksHere > links) links = linksHere
      } else if (char === ']') {
        if (!escaped && linksHere > 0) linksHere--
      }
    }
    previous = char
  }
  return { emphasis, strike, links }
}

/** The most emphasis levels any one paragraph of `text` opens (see `inlineLevels`). */
export function emphasisLevels(text: string): number {
  return inlineLevels(text).emphasis
}

/**
 * The most levels of each kind one paragraph may open and still be formatted, each parsed in
 * about 10 ms on a quiet machine.
 */
export const MAX_EMPHASIS_LEVELS = 1000
export const MAX_STRIKE_LEVELS = 250
export const MAX_LINK_LEVELS = 64

/**
 * A reply still streaming is formatted again at every delta: until it ends, only a quarter of
 * each limit (a sixteenth of the parser's work) is formatted as it comes; past that it shows
 * plain until the reply is complete, then is formatted once.
 */
export const STREAMING_SHARE = 4

/** Why `text` is not formatted (`'depth'`, `'marks'`, or `'streaming'` while it streams), or null. */
export function unformattable(
  text: string,
  streaming = false,
): 'depth' | 'marks' | 'streaming' | null {
  if (markdownDepth(text) > MAX_MARKDOWN_DEPTH) return 'depth'
  const levels = inlineLevels(text)
  const over = (share: number) =>
    levels.emphasis > MAX_EMPHASIS_LEVELS / share ||
    levels.strike > MAX_STRIKE_LEVELS / share ||
    levels.links > MAX_LINK_LEVELS / share
  if (over(1)) return 'marks'
  if (streaming && over(STREAMING_SHARE)) return 'streaming'
  return null
}
