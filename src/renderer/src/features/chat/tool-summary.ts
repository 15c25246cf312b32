/**
 * What a memory command card says about its input: the path(s) it touched and a short
 * detail line. Pure, so the wording is tested without a browser.
 */

import { LISTING_HEADER_START } from '../../../../shared/listing'

export interface ToolSummary {
  /** `/memories/a.md`, or `/memories/a.md → /memories/b.md` for a rename. */
  readonly target: string
  /** A short description of what the command asked for, or null. */
  readonly detail: string | null
  /** Whether the command changes memory (and so may have made a commit). */
  readonly mutating: boolean
}

const mutating = new Set(['create', 'str_replace', 'insert', 'delete', 'rename'])

function field(input: unknown, name: string): unknown {
  return input && typeof input === 'object' ? (input as Record<string, unknown>)[name] : undefined
}

function text(input: unknown, name: string): string | null {
  const value = field(input, name)
  return typeof value === 'string' ? value : null
}

function lines(value: string): string {
  // A final newline ends the last line; it does not start another.
  const body = value.endsWith('\n') ? value.slice(0, -1) : value
  const count = value.length === 0 ? 0 : body.split('\n').length
  return `${count} line${count === 1 ? '' : 's'}`
}

/**
 * A `view_range` in words: `[577, -1]` (to the end) is "lines from 577 on", not "577–-1". It
 * counts entries of a folder's listing, lines of a file; which one the path was is known for sure
 * from the result (its header), and until then only for the root or a path ending in `/`.
 */
function viewRange(range: unknown, path: string, result: string | null): string | null {
  if (!Array.isArray(range) || range.length !== 2) return null
  const [start, end] = range as unknown[]
  // The model's input is stored raw and drawn again on every reopen: only whole numbers are
  // described. `String()` of an object with a `toString` key threw, and the throw blanked the
  // window each time the conversation opened (review hunt12-story D9).
  if (!Number.isInteger(start) || !Number.isInteger(end)) return null
  const folder =
    result !== null
      ? result.startsWith(LISTING_HEADER_START)
      : path === '' || path === '/memories' || path.endsWith('/')
  const unit = folder ? 'entries' : 'lines'
  if (end === -1) return `${unit} from ${String(start)} on`
  if (start === end) return `${folder ? 'entry' : 'line'} ${String(start)}`
  return `${unit} ${String(start)}–${String(end)}`
}

/**
 * Summarizes a memory tool input for its card; `result` is the command's answer once it has one
 * (it tells a folder's listing from a file's lines).
 */
export function summarizeTool(
  command: string,
  input: unknown,
  result: string | null = null,
): ToolSummary {
  const path = text(input, 'path') ?? ''
  switch (command) {
    case 'view': {
      const detail = viewRange(field(input, 'view_range'), path, result)
      return { target: path || '/memories', detail, mutating: false }
    }
    case 'create': {
      const body = text(input, 'file_text')
      return { target: path, detail: body === null ? null : lines(body), mutating: true }
    }
    case 'str_replace':
      return { target: path, detail: 'replace text', mutating: true }
    case 'insert': {
      const line = field(input, 'insert_line')
      return {
        target: path,
        detail: typeof line === 'number' ? `insert at line ${line}` : 'insert text',
        mutating: true,
      }
    }
    case 'delete':
      return { target: path, detail: null, mutating: true }
    case 'rename': {
      const from = text(input, 'old_path') ?? ''
      const to = text(input, 'new_path') ?? ''
      return { target: `${from} → ${to}`, detail: null, mutating: true }
    }
    default:
      return { target: path, detail: null, mutating: mutating.has(command) }
  }
}

/** The first lines of a tool result for the collapsed card (the rest shows on expand). */
export function previewResult(content: string, maxLines = 3): { text: string; more: boolean } {
  const all = content.split('\n')
  return { text: all.slice(0, maxLines).join('\n'), more: all.length > maxLines }
}
