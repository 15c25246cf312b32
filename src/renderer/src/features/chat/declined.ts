/** What a declined change's card says, from its stored tool_result alone. Pure. */
import { CLOSED_REASON, parseDeclined, STOPPED_REASON } from '../../../../shared/review'

/** A sentence for the card of a change the person declined, or null for any other result. */
export function declinedNote(content: string): string | null {
  const declined = parseDeclined(content)
  if (!declined) return null
  if (declined.reason === STOPPED_REASON)
    return 'Declined when you stopped the turn. Nothing changed.'
  if (declined.reason === CLOSED_REASON) {
    return 'Declined when Cairn closed before you decided. Nothing changed.'
  }
  if (declined.reason) return `You declined this change: “${declined.reason}”. Nothing changed.`
  return 'You declined this change. Nothing changed.'
}
