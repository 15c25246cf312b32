/**
 * The page's Content Security Policy, sent as a response header with every file the `app://`
 * handler serves (and by the e2e harness's server, so the end-to-end tests run the UI under
 * the same policy).
 *
 * No `'unsafe-inline'`: scripts and style sheets come only from the app's own files. React's
 * `style={{…}}` props are applied through the CSSOM (`element.style`), which a policy does not
 * govern, so the strict `style-src 'self'` holds for them too.
 */
export function contentSecurityPolicy(options: { readonly devServer?: boolean } = {}): string {
  const dev = options.devServer === true
  return [
    "default-src 'none'",
    // The dev server (never packaged) injects React Refresh's preamble and its CSS as inline
    // code, and talks to the page over a websocket.
    dev ? "script-src 'self' 'unsafe-inline'" : "script-src 'self'",
    dev ? "style-src 'self' 'unsafe-inline'" : "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    dev ? "connect-src 'self' ws:" : "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-src 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ')
}

/** Headers every response from the app's own scheme carries, a 404 included. */
export function appResponseHeaders(): Readonly<Record<string, string>> {
  return {
    'Content-Security-Policy': contentSecurityPolicy(),
    'X-Content-Type-Options': 'nosniff',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cache-Control': 'no-cache',
  }
}
