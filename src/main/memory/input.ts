/**
 * Strict validation of one tool input, exactly as Claude sent it. Pure.
 *
 * Sample input: `{"command":"insert","path":"/memories/a.md","insert_line":2,"insert_text":"x"}`
 */

import { cutWithEllipsis, escapeInvisible, loneSurrogateAt } from '../lib/text'

/** A validated command (paths are still raw: the path rules run next). */
export type MemoryCommand =
  | {
      readonly command: 'view'
      readonly path: string
      readonly view_range?: readonly [number, number]
    }
  | { readonly command: 'create'; readonly path: string; readonly file_text: string }
  | {
      readonly command: 'str_replace'
      readonly path: string
      readonly old_str: string
      readonly new_str: string
    }
  | {
      readonly command: 'insert'
      readonly path: string
      readonly insert_line: number
      readonly insert_text: string
    }
  | { readonly command: 'delete'; readonly path: string }
  | { readonly command: 'rename'; readonly old_path: string; readonly new_path: string }

// Most characters of an unknown command or parameter name echoed in an error.
const MAX_NAME_CHARS = 40

type FieldType = 'string' | 'integer' | 'view_range'

interface Field {
  readonly type: FieldType
  readonly required: boolean
}

const FIELDS: Readonly<Record<MemoryCommand['command'], Readonly<Record<string, Field>>>> = {
  view: { path: req('string'), view_range: opt('view_range') },
  create: { path: req('string'), file_text: req('string') },
  // An omitted new_str deletes old_str.
  str_replace: { path: req('string'), old_str: req('string'), new_str: opt('string') },
  insert: { path: req('string'), insert_line: req('integer'), insert_text: req('string') },
  delete: { path: req('string') },
  rename: { old_path: req('string'), new_path: req('string') },
}

const COMMANDS = Object.keys(FIELDS).join(', ')

/** Validates an untrusted input: the command or a message for Claude (no `Error:` prefix). */
export function parseCommand(
  input: unknown,
):
  | { readonly ok: true; readonly command: MemoryCommand }
  | { readonly ok: false; readonly message: string } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return fail(`The input must be a JSON object with a "command" field (one of ${COMMANDS}).`)
  }
  const record = input as Record<string, unknown>
  const name = record.command
  if (name === undefined || name === null) {
    return fail(`Missing required parameter \`command\`. Use one of: ${COMMANDS}.`)
  }
  if (typeof name !== 'string') {
    return fail(
      `Invalid \`command\` parameter: expected a string, got ${describe(name)}. Use one of: ${COMMANDS}.`,
    )
  }
  if (!Object.hasOwn(FIELDS, name)) {
    return fail(`Unknown command \`${quoteName(name)}\`. Use one of: ${COMMANDS}.`)
  }
  const command = name as MemoryCommand['command']
  const fields = FIELDS[command]
  for (const key of Object.keys(record)) {
    if (key !== 'command' && !Object.hasOwn(fields, key)) {
      return fail(
        `Unexpected parameter \`${quoteName(key)}\` for \`${command}\`. Its parameters are: ${Object.keys(fields).join(', ')}.`,
      )
    }
  }
  const out: Record<string, unknown> = { command }
  for (const [key, field] of Object.entries(fields)) {
    const value = record[key]
    // null for an optional field is read as "not given" (models sometimes send it).
    if (value === undefined || (value === null && !field.required)) {
      if (field.required) return fail(`Missing required parameter \`${key}\` for \`${command}\`.`)
      continue
    }
    const problem = typeProblem(field.type, value) ?? textProblem(key, value)
    if (problem) return fail(`Invalid \`${key}\` parameter for \`${command}\`: ${problem}.`)
    out[key] = value
  }
  if (command === 'str_replace' && out.new_str === undefined) out.new_str = ''
  return { ok: true, command: out as MemoryCommand }
}

// The character (counted from 1, in code points, as Claude counts) at UTF-16 index `at`.
function characterNumber(value: string, at: number): string {
  return ([...value.slice(0, at)].length + 1).toLocaleString('en-US')
}

function typeProblem(type: FieldType, value: unknown): string | null {
  switch (type) {
    case 'string': {
      if (typeof value !== 'string') return `expected a string, got ${describe(value)}`
      // Half of a surrogate pair cannot be stored as UTF-8: written, it would become U+FFFD,
      // a change to what Claude sent that nobody asked for. Refused for every field alike.
      const at = loneSurrogateAt(value)
      // Counted in characters, as Claude counts them: an emoji before it is one, not two units.
      return at < 0
        ? null
        : `it contains a lone surrogate (half of a UTF-16 surrogate pair) at character ${characterNumber(value, at)}, which cannot be stored as UTF-8 text. Nothing was changed; send whole characters`
    }
    case 'integer':
      return Number.isSafeInteger(value) ? null : `expected an integer, got ${describe(value)}`
    case 'view_range':
      return Array.isArray(value) &&
        value.length === 2 &&
        value.every((n) => Number.isSafeInteger(n))
        ? null
        : 'it should be a list of two integers, like [1, 20] or [5, -1]'
  }
}

// The fields whose text is written into a file.
const WRITTEN_TEXT = new Set(['file_text', 'new_str', 'insert_text'])

// A NUL character makes a file binary to git, the history's diffs, the Memory tab and search
// (lib/text \`decodeUtf8\`): written, the memory would read as a binary file everywhere but here.
// \`old_str\` may hold one, to match a file put in the folder outside Cairn.
function textProblem(key: string, value: unknown): string | null {
  if (!WRITTEN_TEXT.has(key) || typeof value !== 'string') return null
  const at = value.indexOf('\0')
  if (at < 0) return null
  return `it contains a NUL character (U+0000) at character ${characterNumber(value, at)}, which would make the file read as binary, not text. Nothing was changed; send the text without it`
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'number')
    return Number.isFinite(value) ? String(value) : 'a non-finite number'
  // "an object", "a boolean": the article follows the word's first sound.
  return /^[aeiou]/.test(typeof value) ? `an ${typeof value}` : `a ${typeof value}`
}

// A name Claude sent, echoed back: short, never half an emoji, nothing invisible left raw.
function quoteName(name: string): string {
  return escapeInvisible(cutWithEllipsis(name, MAX_NAME_CHARS))
}

function req(type: FieldType): Field {
  return { type, required: true }
}

function opt(type: FieldType): Field {
  return { type, required: false }
}

function fail(message: string): { readonly ok: false; readonly message: string } {
  return { ok: false, message }
}
