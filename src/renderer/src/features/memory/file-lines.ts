/**
 * The pure side of a memory file's line view (`FileLines`): its lines, how wide the widest is,
 * where a word is found, and what a selection over lines not all drawn copies.
 */

/** A file's lines as the view numbers them: the end of the last line opens no line of its own. */
export function linesOf(text: string): ReadonlyArray<string> {
  const lines = text.split('\n')
  if (lines.length > 1 && lines.at(-1) === '') lines.pop()
  return lines
}

/**
 * The widest line in columns (a tab to the next multiple of 8, as `white-space: pre` draws it):
 * the view's width, which only the lines drawn could not give.
 */
export function widestLine(lines: ReadonlyArray<string>): number {
  let widest = 0
  for (const line of lines) {
    if (line.length <= widest) continue
    let columns = 0
    for (let i = 0; i < line.length; i++) {
      columns = line.charCodeAt(i) === 9 ? columns + 8 - (columns % 8) : columns + 1
    }
    widest = Math.max(widest, columns)
  }
  return widest
}

/** One place Find found the words: the line (0-based) and where in it. */
export interface LineHit {
  readonly line: number
  readonly column: number
  readonly length: number
}

/** The most places Find lists; past it the count says "+". */
export const MAX_FIND_HITS = 10_000

/** Every place `query` is found in the lines, ignoring case, in reading order. */
export function findInLines(
  lines: ReadonlyArray<string>,
  query: string,
): { readonly hits: ReadonlyArray<LineHit>; readonly more: boolean } {
  const hits: LineHit[] = []
  if (query === '') return { hits, more: false }
  const sought = query.toLowerCase()
  for (let line = 0; line < lines.length; line++) {
    const text = lines[line]!
    const lower = text.toLowerCase()
    // A letter whose lower case is longer (İ) moves every column after it: the line is marked
    // whole rather than at the wrong place.
    const exact = lower.length === text.length
    for (
      let at = lower.indexOf(sought);
      at !== -1;
      at = lower.indexOf(sought, at + sought.length)
    ) {
      if (hits.length === MAX_FIND_HITS) return { hits, more: true }
      hits.push(
        exact
          ? { line, column: at, length: query.length }
          : { line, column: 0, length: text.length },
      )
      if (!exact) break
    }
  }
  return { hits, more: false }
}

/**
 * What a selection over the line view copies, from the file's own lines: the rows between its
 * ends may not be drawn, and an invisible character drawn marked (`Revealed`, "U+200F") copies
 * as itself, not as its label. Null when the browser's own copy is right (the selection is
 * outside the lines, or within one line's number).
 */
export function selectedText(
  list: HTMLElement,
  selection: Selection,
  lines: ReadonlyArray<string>,
): string | null {
  if (selection.rangeCount === 0) return null
  const range = selection.getRangeAt(0)
  const start = rowAt(list, range.startContainer, range.startOffset, 'start')
  const end = rowAt(list, range.endContainer, range.endOffset, 'end')
  if (!start || !end) return null
  const part = (row: Row, from: 'boundary' | 'start', to: 'boundary' | 'end'): string => {
    const whole = lines[row.line] ?? ''
    const span = row.element.querySelector('.mem-code-text')
    if (!span || whole === '') return ''
    const piece = range.cloneRange()
    if (from === 'start') piece.setStart(span, 0)
    if (to === 'end') piece.setEnd(span, span.childNodes.length)
    return textIn(span, piece)
  }
  if (start.line === end.line) {
    return start.inText && end.inText ? part(start, 'boundary', 'boundary') : null
  }
  // An end on the row itself or in its number (not in its text) takes the line whole, or none.
  const first = start.inText ? part(start, 'boundary', 'end') : (lines[start.line] ?? '')
  const last = end.inText
    ? part(end, 'start', 'boundary')
    : end.whole
      ? (lines[end.line] ?? '')
      : ''
  return [first, ...lines.slice(start.line + 1, end.line), last].join('\n')
}

/**
 * The characters of a line's text (`span`) that `range` covers, each marked invisible character
 * as the characters it stands for (its `data-raw`), whole once any of its label is covered.
 */
function textIn(span: Element, range: Range): string {
  let text = ''
  const walker = span.ownerDocument.createTreeWalker(span, NodeFilter.SHOW_TEXT)
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!range.intersectsNode(node)) continue
    const data = (node as Text).data
    const from = node === range.startContainer ? range.startOffset : 0
    const to = node === range.endContainer ? range.endOffset : data.length
    if (to <= from) continue
    const raw = node.parentElement?.closest('.hidden-char')?.getAttribute('data-raw')
    text += raw ?? data.slice(from, to)
  }
  return text
}

interface Row {
  readonly element: Element
  readonly line: number
  /** The boundary is inside the line's text (not its number, not the row or list itself). */
  readonly inText: boolean
  /** The boundary is past the whole row (an end given as a place in the list). */
  readonly whole: boolean
}

function rowAt(list: HTMLElement, node: Node, offset: number, side: 'start' | 'end'): Row | null {
  if (!list.contains(node)) return null
  let element: Element | null
  let whole = false
  if (node === list) {
    const rows = list.children
    element = side === 'start' ? (rows[offset] ?? null) : (rows[offset - 1] ?? null)
    whole = true
  } else {
    element = (node instanceof Element ? node : node.parentElement)?.closest('[data-line]') ?? null
  }
  if (!element || !list.contains(element)) return null
  const span = element.querySelector('.mem-code-text')
  return {
    element,
    line: Number(element.getAttribute('data-line')),
    inText: !whole && span !== null && span.contains(node),
    whole,
  }
}
