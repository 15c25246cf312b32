/**
 * The words Claude receives when the person declines a change, shared so the chat can tell a
 * declined command from a failed one by its stored tool_result alone. Pure, no imports.
 *
 *   Error: The person declined the change to /memories/notes.md. Their reason: "too personal". Nothing was changed.
 */

const PREFIX = 'Error: The person declined the change to '
const REASON = '. Their reason: '
const END = '. Nothing was changed.'

/**
 * Most characters of a file's text before or after that a pending change carries itself; a
 * longer text is fetched on demand (`review:text`). Every character of a file's UTF-8 text
 * takes at least one byte, so a file of at most this many bytes always fits.
 */
export const PREVIEW_CHARS = 1_000_000

/**
 * Most characters of text (before and after, all changes together) one list of pending
 * changes carries (`review:pending`, `review:list`): two whole previews. Changes beyond it
 * come with their sizes only (`omitted`), their text on demand, as a long change's.
 */
export const LIST_TEXT_CHARS = 2 * PREVIEW_CHARS

/** The reason Stop gives for every change still waiting. */
export const STOPPED_REASON = 'stopped'

/** The reason given for each change still waiting when Cairn closes. */
export const CLOSED_REASON = 'Cairn was closed before the person decided'

/** The tool_result text of a declined change to `path`, with the person's reason if any. */
export function declinedText(path: string, reason: string | null): string {
  const said = reason?.trim()
  return said ? `${PREFIX}${path}${REASON}${JSON.stringify(said)}${END}` : `${PREFIX}${path}${END}`
}

/**
 * The tool_result text of Claude's `command` of `path` that the person edited before approving
 * it: the file holds their version, not what Claude sent. Said when the change lands, and again
 * from its commit (`Edited-by: You`) when a kill kept that answer from being saved.
 */
export function editedText(command: string, path: string): string {
  return `The person approved your ${command} of ${path} after editing it: the file now holds their version, which differs from what you sent. View the file before relying on its content.`
}

/** The path and reason of a declined change's tool_result, or null for any other text. */
export function parseDeclined(
  content: string,
): { readonly path: string; readonly reason: string | null } | null {
  if (!content.startsWith(PREFIX) || !content.endsWith(END)) return null
  const body = content.slice(PREFIX.length, -END.length)
  const at = body.indexOf(REASON)
  if (at < 0) return { path: body, reason: null }
  try {
    const reason: unknown = JSON.parse(body.slice(at + REASON.length))
    return { path: body.slice(0, at), reason: typeof reason === 'string' ? reason : null }
  } catch {
    return { path: body.slice(0, at), reason: null }
  }
}
