let counter = 0

/**
 * A fresh id for a request whose answer arrives as an event (a chat message and its
 * `turn-started`): unique in this window, so the event can be matched to the request.
 */
export function newClientId(): string {
  counter += 1
  const random =
    typeof crypto !== 'undefined' && typeof crypto.randomUUID === 'function'
      ? crypto.randomUUID()
      : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`
  return `r${counter}-${random}`
}
