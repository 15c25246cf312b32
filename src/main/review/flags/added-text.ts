/**
 * The text a change adds: the rules look only at what is new, so a file that already held a
 * flagged line is not flagged again by every later edit. Pure.
 */

/** A run of consecutive new lines of the changed file. */
export interface AddedBlock {
  /** 1-based line of the file where the block starts. */
  readonly line: number
  /** The block's lines joined by `\n`. */
  readonly text: string
}

/**
 * The lines of `after` that `before` did not hold, as blocks of consecutive lines. A line
 * counts as kept when `before` had it anywhere (so moving lines around adds nothing), as many
 * times as `before` had it.
 */
export function addedBlocks(before: string | null, after: string): ReadonlyArray<AddedBlock> {
  const remaining = new Map<string, number>()
  for (const line of linesOf(before ?? '')) remaining.set(line, (remaining.get(line) ?? 0) + 1)
  const blocks: AddedBlock[] = []
  let current: { line: number; lines: string[] } | null = null
  linesOf(after).forEach((line, index) => {
    const left = remaining.get(line) ?? 0
    if (left > 0) {
      remaining.set(line, left - 1)
      if (current) blocks.push({ line: current.line, text: current.lines.join('\n') })
      current = null
      return
    }
    current ??= { line: index + 1, lines: [] }
    current.lines.push(line)
  })
  const last = current as { line: number; lines: string[] } | null
  if (last) blocks.push({ line: last.line, text: last.lines.join('\n') })
  return blocks
}

/**
 * A short quote for a flag's message: at most `max` characters, on one line, with anything
 * invisible or a control character shown as `U+XXXX` (never pasted raw into a message).
 */
export function quote(text: string, max = 80): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  let out = ''
  for (const char of flat) {
    const code = char.codePointAt(0)!
    const shown = isInvisible(code)
      ? `[U+${code.toString(16).toUpperCase().padStart(4, '0')}]`
      : char
    if (out.length + shown.length > max) return `“${out}…”`
    out += shown
  }
  return `“${out}”`
}

function isInvisible(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0xad ||
    code === 0x34f ||
    code === 0x61c ||
    code === 0x180e ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2060 && code <= 0x2069) ||
    code === 0xfeff ||
    (code >= 0xe0000 && code <= 0xe007f) ||
    (code >= 0xfe00 && code <= 0xfe0f) ||
    (code >= 0xe0100 && code <= 0xe01ef)
  )
}

function linesOf(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines
}
