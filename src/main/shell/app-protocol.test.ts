/**
 * The `app://` handler on a renderer folder made for each test, with a secret file beside it
 * that no answer may ever carry: every spelling of a way out is a 404 with the CSP header, and
 * each kind of file the renderer holds goes out with its own type.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createAppProtocolHandler, resolveAppFile } from './app-protocol'
import { contentSecurityPolicy } from './content-security'

const SECRET = 'the secret beside the renderer folder'
let base: string
let rendererDir: string
let serve: (url: string, init?: RequestInit) => Promise<Response>

beforeEach(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'cairn-app-protocol-'))
  rendererDir = path.join(base, 'renderer')
  mkdirSync(path.join(rendererDir, 'assets'), { recursive: true })
  writeFileSync(path.join(base, 'secret.txt'), SECRET)
  writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html><div id="root"></div>')
  const handler = createAppProtocolHandler({ rendererDir })
  serve = (url, init) => handler(new Request(url, init))
})
afterEach(() => rmSync(base, { recursive: true, force: true, maxRetries: 10 }))

async function expectNotFound(url: string): Promise<void> {
  const response = await serve(url)
  expect(response.status, url).toBe(404)
  expect(response.headers.get('content-security-policy'), url).toBe(contentSecurityPolicy())
  expect(response.headers.get('x-content-type-options'), url).toBe('nosniff')
  const body = await response.text()
  expect(body, url).toBe('Not found')
}

describe('the app:// handler', () => {
  it('serves no file a symbolic link inside the renderer folder points out to', async () => {
    symlinkSync(path.join(base, 'secret.txt'), path.join(rendererDir, 'assets', 'secret.js'))
    symlinkSync(base, path.join(rendererDir, 'up'))
    symlinkSync('/etc/hostname', path.join(rendererDir, 'hostname.txt'))
    symlinkSync('index.html', path.join(rendererDir, 'alias.html'))
    await expectNotFound('app://cairn/assets/secret.js')
    await expectNotFound('app://cairn/up/secret.txt')
    await expectNotFound('app://cairn/hostname.txt')
    // A link that stays inside the folder leads to one of its files: served as that file.
    const inside = await serve('app://cairn/alias.html')
    expect(inside.status).toBe(200)
    expect(await inside.text()).toContain('<div id="root">')
  })

  it.each([
    // Overlong UTF-8 for "." and "/", and a lone continuation byte: not UTF-8 at all.
    'app://cairn/%c0%ae%c0%ae/secret.txt',
    'app://cairn/%c0%ae%c0%ae%c0%afsecret.txt',
    'app://cairn/%e0%80%ae%e0%80%ae/secret.txt',
    'app://cairn/%80',
    // Backslashes, raw and encoded, and a doubly encoded climb.
    'app://cairn/..\\secret.txt',
    'app://cairn/assets\\..\\..\\secret.txt',
    'app://cairn/%5c..%5csecret.txt',
    'app://cairn/%25%32%65%25%32%65/secret.txt',
    // An absolute path smuggled in a segment, and the root of the file system.
    'app://cairn/%2fetc%2fhostname',
    'app://cairn//etc/hostname',
    'app:///etc/hostname',
    'app://cairn/..%00/secret.txt',
    // A path far longer than any file system takes.
    `app://cairn/${'a'.repeat(70_000)}.js`,
    `app://cairn/${'a/'.repeat(5_000)}index.html`,
    // Another host, a user name, another scheme that reached the handler.
    'app://CAIRN.evil/index.html',
    'file:///etc/hostname',
    'https://cairn/index.html',
  ])('answers %s with 404 and the CSP, serving nothing from outside', async (url) => {
    await expectNotFound(url)
  })

  it('names no file for a URL with a user name (which no Request may carry)', () => {
    expect(resolveAppFile(rendererDir, 'app://cairn/index.html')).toBe(
      path.join(rendererDir, 'index.html'),
    )
    expect(resolveAppFile(rendererDir, 'app://user@cairn/index.html')).toBeNull()
    expect(resolveAppFile(rendererDir, 'app://user:pass@cairn/index.html')).toBeNull()
  })

  it('ignores a query and a fragment: they name no other file', async () => {
    for (const url of [
      'app://cairn/index.html?file=../secret.txt',
      'app://cairn/index.html?../../secret.txt#../secret.txt',
      'app://cairn/index.html#/../../secret.txt',
    ]) {
      const response = await serve(url)
      expect(response.status, url).toBe(200)
      expect(await response.text(), url).toContain('<div id="root">')
    }
    await expectNotFound('app://cairn/secret.txt?x=1')
  })

  it('sends the CSP with every refusal: a wrong method, a folder, a special file', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
      const response = await serve('app://cairn/index.html', {
        method,
        body: method === 'POST' || method === 'PUT' ? 'x' : undefined,
      })
      expect(response.status, method).toBe(405)
      expect(response.headers.get('content-security-policy'), method).toBe(contentSecurityPolicy())
    }
    mkdirSync(path.join(rendererDir, 'folder.js'))
    await expectNotFound('app://cairn/folder.js')
    execFileSync('mkfifo', [path.join(rendererDir, 'assets', 'pipe.js')])
    await expectNotFound('app://cairn/assets/pipe.js')
  })

  it('serves each kind of file with its own type, and an unknown kind as bytes not to sniff', async () => {
    const kinds: Array<[string, string]> = [
      ['index.html', 'text/html; charset=utf-8'],
      ['assets/app.js', 'text/javascript; charset=utf-8'],
      ['assets/worker.mjs', 'text/javascript; charset=utf-8'],
      ['assets/app.CSS', 'text/css; charset=utf-8'],
      ['assets/data.json', 'application/json'],
      ['assets/icon.svg', 'image/svg+xml'],
      ['assets/icon.png', 'image/png'],
      ['favicon.ico', 'image/x-icon'],
      ['assets/font.woff', 'font/woff'],
      ['assets/font.woff2', 'font/woff2'],
      ['assets/notes.txt.exe', 'application/octet-stream'],
      ['assets/no-extension', 'application/octet-stream'],
    ]
    for (const [file, type] of kinds) {
      const bytes = Buffer.from(`bytes of ${file}`)
      writeFileSync(path.join(rendererDir, file), bytes)
      const response = await serve(`app://cairn/${file}`)
      expect(response.status, file).toBe(200)
      expect(response.headers.get('content-type'), file).toBe(type)
      expect(response.headers.get('content-length'), file).toBe(String(bytes.length))
      expect(response.headers.get('content-security-policy'), file).toBe(contentSecurityPolicy())
      expect(response.headers.get('x-content-type-options'), file).toBe('nosniff')
      expect(Buffer.from(await response.arrayBuffer()).equals(bytes), file).toBe(true)
    }
    // The host is matched without regard to case, as URLs do.
    expect((await serve('app://CAIRN/index.html')).status).toBe(200)
  })
})
