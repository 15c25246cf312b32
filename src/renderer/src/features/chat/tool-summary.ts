/**
 * What a memory command card says about its input: the path(s) it touched and a short
 * detail line. Pure, so the wording is tested without a browser.
 */

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

/** Summarizes a memory tool input for its card. */
export function summarizeTool(command: string, input: unknown): ToolSummary {
  const path = text(input, 'path') ?? ''
  switch (command) {
    case 'view': {
      const range = field(input, 'view_range')
      const detail =
        Array.isArray(range) && range.length === 2 ? `lines ${range[0]}–${range[1]}` : null
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
