import { readFile, realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import { appResponseHeaders } from './content-security'

/** The privileged scheme the UI is served from instead of `file://`. */
export const APP_SCHEME = 'app'
export const APP_HOST = 'cairn'
/** The one page the window shows. */
export const APP_PAGE_URL = `${APP_SCHEME}://${APP_HOST}/index.html`

const contentTypes: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
}

/**
 * Maps an `app://cairn/…` URL to a file inside `rendererDir`, or null (answered with 404).
 *
 * Each path segment is decoded on its own and refused when it is `.`/`..`, hidden, or hides a
 * separator, a drive colon or a NUL after decoding (`..%2f`, `%5c`, `%00`): the URL parser
 * already resolves plain and `%2e` dot segments, this closes what it leaves encoded. The
 * result must still lie inside the folder.
 */
export function resolveAppFile(rendererDir: string, requestUrl: string): string | null {
  let url: URL
  try {
    url = new URL(requestUrl)
  } catch {
    return null
  }
  if (url.protocol !== `${APP_SCHEME}:` || url.hostname.toLowerCase() !== APP_HOST) return null
  if (url.username !== '' || url.password !== '' || url.port !== '') return null
  const segments: string[] = []
  for (const raw of url.pathname.split('/')) {
    if (raw === '') continue
    let segment: string
    try {
      segment = decodeURIComponent(raw)
    } catch {
      return null
    }
    if (segment.startsWith('.') || /[/\\:\0]/.test(segment)) return null
    segments.push(segment)
  }
  const root = path.resolve(rendererDir)
  const file = path.resolve(root, ...(segments.length > 0 ? segments : ['index.html']))
  return isInside(root, file) ? file : null
}

/** Whether `file` lies strictly inside the folder `root` (both absolute and resolved). */
function isInside(root: string, file: string): boolean {
  const relative = path.relative(root, file)
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative)
}

/**
 * The handler for `protocol.handle('app', …)`: serves the built renderer's files, each with
 * the Content Security Policy as a header; anything outside the folder (a symbolic link to
 * outside included), missing, or not a plain file is a 404, and only GET and HEAD are answered.
 */
export function createAppProtocolHandler(options: {
  readonly rendererDir: string
}): (request: Request) => Promise<Response> {
  const headers = appResponseHeaders()
  const refuse = (status: number, text: string) =>
    new Response(text, {
      status,
      headers: { ...headers, 'Content-Type': 'text/plain; charset=utf-8' },
    })
  return async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return refuse(405, 'Method not allowed')
    }
    const named = resolveAppFile(options.rendererDir, request.url)
    if (named === null) return refuse(404, 'Not found')
    let body: Buffer
    try {
      // A file is served only when its real path lies inside the folder's: a symbolic link in
      // the folder leads nowhere outside it.
      const [root, file] = await Promise.all([realpath(options.rendererDir), realpath(named)])
      if (!isInside(root, file) || !(await stat(file)).isFile()) return refuse(404, 'Not found')
      body = await readFile(file)
    } catch {
      return refuse(404, 'Not found')
    }
    const type = contentTypes[path.extname(named).toLowerCase()] ?? 'application/octet-stream'
    return new Response(request.method === 'HEAD' ? null : new Uint8Array(body), {
      status: 200,
      headers: { ...headers, 'Content-Type': type, 'Content-Length': String(body.length) },
    })
  }
}
