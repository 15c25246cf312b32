/** Only `https:` links leave the app; anything else is shown as plain text. */
export function isOpenableUrl(href: string | undefined): href is string {
  if (!href) return false
  try {
    return new URL(href).protocol === 'https:'
  } catch {
    return false
  }
}
