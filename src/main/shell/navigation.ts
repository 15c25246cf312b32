/** Only https links leave the app, and only through the operating system's browser. */
export function isHttpsLink(url: string): boolean {
  try {
    const parsed = new URL(url)
    return parsed.protocol === 'https:' && parsed.hostname !== '' && parsed.username === ''
  } catch {
    return false
  }
}

/**
 * Whether `url` is the app's own page (`expected`), compared by scheme, host, port and path.
 * Not by `origin`: every `app://` or other non-web URL has the origin "null", so two such
 * URLs would look alike.
 */
export function isAppPage(url: string, expected: string): boolean {
  try {
    const a = new URL(url)
    const b = new URL(expected)
    return (
      a.protocol === b.protocol &&
      a.host.toLowerCase() === b.host.toLowerCase() &&
      a.pathname === b.pathname
    )
  } catch {
    return false
  }
}
