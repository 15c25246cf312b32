/**
 * The words Claude receives when the person declines a change, shared so the chat can tell a
 * declined command from a failed one by its stored tool_result alone. Pure, no imports.
 *
 *   Error: The person declined the change to /memories/notes.md. Their reason: "too personal". Nothing was changed.
 */

const PREFIX = 'Error: The person declined the change to '
const REASON = '. Their reason: '
const END = '. Nothing was changed.'

/** The reason Stop gives for every change still waiting. */
export const STOPPED_REASON = 'stopped'

/** The reason given for each change still waiting when Cairn closes. */
export const CLOSED_REASON = 'Cairn was closed before the person decided'

/** The tool_result text of a declined change to `path`, with the person's reason if any. */
export function declinedText(path: string, reason: string | null): string {
  const said = reason?.trim()
  return said ? `${PREFIX}${path}${REASON}${JSON.stringify(said)}${END}` : `${PREFIX}${path}${END}`
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
