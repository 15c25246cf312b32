/**
 * What a windowed list draws: the rows in view plus a margin (`start..end`, both inclusive,
 * -1 when nothing is in view), and the rows that must stay in the DOM wherever they are
 * (the focused row, so scrolling never drops the keyboard focus; a row a keyboard move is
 * about to focus). Sorted, each index once, only indexes that exist.
 */
export function rowsToDraw(
  range: { readonly start: number; readonly end: number },
  count: number,
  pinned: ReadonlyArray<number>,
): ReadonlyArray<number> {
  const drawn: number[] = []
  const last = Math.min(range.end, count - 1)
  const kept = [...new Set(pinned)].filter((i) => Number.isInteger(i) && i >= 0 && i < count)
  kept.sort((a, b) => a - b)
  let k = 0
  for (let i = Math.max(0, range.start); i <= last; i++) {
    while (k < kept.length && kept[k]! < i) drawn.push(kept[k++]!)
    if (kept[k] === i) k++
    drawn.push(i)
  }
  while (k < kept.length) drawn.push(kept[k++]!)
  return drawn
}
