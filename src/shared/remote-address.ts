/**
 * Facts about a sync address that both the settings form (while it is typed) and main (when
 * it is saved) need. Pure: a string in, a fact out; an address that does not parse has none.
 */

/** True for an `http:` address off this machine: a token sent to it travels in the clear. */
export function sendsTokenInClear(address: string): boolean {
  const url = parse(address)
  if (!url || url.protocol !== 'http:') return false
  return !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
}

/**
 * True when two addresses name the same server (scheme, host and port): a token kept for one
 * may be sent to the other. Anything that does not parse is another server.
 */
export function sameServer(a: string, b: string): boolean {
  const first = parse(a)
  const second = parse(b)
  return first !== null && second !== null && first.origin === second.origin
}

function parse(address: string): URL | null {
  try {
    return new URL(address.trim())
  } catch {
    return null
  }
}
