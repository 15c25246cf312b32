/**
 * The built main bundle (`out/main/index.js`, what Electron runs) started in Node with a
 * recording stand-in for the `electron` module, over the real core on a real temp folder.
 * `npm test` builds before the unit tests; run `npm run build` first when running this alone.
 */
import { execFileSync } from 'node:child_process'
import { Console } from 'node:console'
import { randomBytes } from 'node:crypto'
import { createWriteStream, existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { eventChannel, requestChannels } from '../../src/shared/channels'
import { acquireInstanceLock, LOCK_FILE } from '../../src/main/lib/instance-lock'
import { openVersionedMemory } from '../../src/main/history'
import type { OpeningUpdate } from '../../src/shared/types'
import { contentSecurityPolicy } from '../../src/main/shell'
import { builtFile, root } from './built'
import {
  createElectronStandIn,
  fakeEvent,
  type ElectronStandIn,
  type FakeFrame,
  type StandInOptions,
} from './electron-stand-in'

const bundle = path.join(root, 'out/main/index.js')
const rendererDir = path.join(root, 'out/renderer')

const current = vi.hoisted(() => ({ standIn: null as { module: object } | null }))
// Vitest builds a mocked module once per file: each export forwards to the stand-in of the
// start that is running, so every fresh load of the bundle talks to its own.
vi.mock('electron', async () => (await import('./electron-stand-in')).forwardingElectron(current))

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
  current.standIn = null
  vi.restoreAllMocks()
})

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-shell-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true, maxRetries: 10 }))
  return dir
}

/** Starts the built bundle against a fresh stand-in, with `env` set while it loads. */
async function start(
  options: StandInOptions,
  env: Record<string, string | undefined> = {},
): Promise<ElectronStandIn> {
  await builtFile('out/main/index.js', ['src/main', 'src/shared'])
  const standIn = createElectronStandIn(options)
  current.standIn = standIn
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]))
  const apply = (values: Record<string, string | undefined>) => {
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }
  }
  apply(env)
  cleanups.push(async () => apply(saved))
  vi.resetModules()
  await import(/* @vite-ignore */ pathToFileURL(bundle).href)
  return standIn
}

/** The name of an event the shell sent to a page (`webContents.send` on the event channel). */
function eventName(call: { readonly args: ReadonlyArray<unknown> }): string | undefined {
  return call.args[0] === eventChannel
    ? (call.args[1] as { name?: string } | undefined)?.name
    : undefined
}

/** Resolves once the shell told its window the memory is open. */
function ready(standIn: ElectronStandIn) {
  return standIn.waitUntil('webContents.send', (call) => eventName(call) === 'app:ready')
}

/** Starts normally and waits for the window's page to load and the core to be open. */
async function startApp(options: Partial<StandInOptions> = {}) {
  const userData = await tempDir()
  const standIn = await start({ userData, ...options }, { CAIRN_DATA_DIR: undefined })
  cleanups.push(() => quit(standIn))
  await standIn.waitFor('window.loaded')
  await ready(standIn)
  const window = standIn.windows[0]!
  return { standIn, userData, window }
}

/** Quits the way Electron would and waits until the shell has let it happen. */
async function quit(standIn: ElectronStandIn): Promise<void> {
  if (standIn.callsOf('app.quit').length > 0 || standIn.callsOf('app.exit').length > 0) return
  standIn.app.quit()
  await standIn.waitFor('app.quit')
}

function invoke(
  standIn: ElectronStandIn,
  channel: string,
  frame: FakeFrame | null,
  payload?: unknown,
) {
  const handler = standIn.handlers.get(channel)
  if (!handler) throw new Error(`no handler for ${channel}`)
  return handler({ senderFrame: frame }, payload) as Promise<{
    ok: boolean
    [key: string]: unknown
  }>
}

function serve(standIn: ElectronStandIn, url: string, init?: RequestInit) {
  const handler = standIn.protocolHandlers.get('app')
  if (!handler) throw new Error('no app:// handler')
  return handler(new Request(url, init))
}

describe('the built main bundle in Node, with a recording stand-in for electron', () => {
  it('registers app:// as a privileged scheme before ready and sandboxes every renderer', async () => {
    const { standIn } = await startApp()
    const kinds = standIn.calls.map((call) => call.kind)
    expect(kinds.indexOf('protocol.registerSchemesAsPrivileged')).toBeLessThan(
      kinds.indexOf('app.ready'),
    )
    expect(kinds.indexOf('app.enableSandbox')).toBeLessThan(kinds.indexOf('app.ready'))
    const [schemes] = standIn.callsOf('protocol.registerSchemesAsPrivileged')[0]!.args
    expect(schemes).toEqual([
      {
        scheme: 'app',
        privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true },
      },
    ])
    expect(standIn.callsOf('protocol.handle').map((call) => call.args[0])).toEqual(['app'])
  })

  it('opens one window with secure web preferences on app://, not file://', async () => {
    const { standIn, window } = await startApp()
    expect(standIn.callsOf('new BrowserWindow')).toHaveLength(1)
    const webPreferences = window.options['webPreferences'] as Record<string, unknown>
    expect(webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      disableBlinkFeatures: 'Auxclick',
      preload: path.join(root, 'out/preload/index.cjs'),
    })
    expect(webPreferences).not.toHaveProperty('enableBlinkFeatures')
    expect(standIn.callsOf('window.loadURL').map((call) => call.args[0])).toEqual([
      'app://cairn/index.html',
    ])
    expect(window.shown).toBe(true)
  })

  it.each(['dark', 'light'] as const)(
    'loads the page in the theme Settings pins (%s), from its first frame',
    async (theme) => {
      const userData = await tempDir()
      await writeFile(path.join(userData, 'settings.json'), JSON.stringify({ theme }))
      const { standIn, window } = await startApp({ userData })
      expect(standIn.callsOf('window.loadURL').map((call) => call.args[0])).toEqual([
        `app://cairn/index.html?theme=${theme}`,
      ])
      expect(window.options['backgroundColor']).toBe(theme === 'dark' ? '#1e1e1c' : '#ffffff')
    },
  )

  it.each([true, false])(
    'leaves the theme to the system when Settings pins none, or cannot be read (system dark: %s)',
    async (systemDark) => {
      const userData = await tempDir()
      await writeFile(path.join(userData, 'settings.json'), '{"theme": "purple", "model": ')
      const { standIn, window } = await startApp({ userData, systemDark })
      expect(standIn.callsOf('window.loadURL').map((call) => call.args[0])).toEqual([
        'app://cairn/index.html',
      ])
      // The window's own colour, before the page paints, is the system's theme's too.
      expect(window.options['backgroundColor']).toBe(systemDark ? '#1e1e1c' : '#ffffff')
    },
  )

  it('keeps the window’s background in the theme Settings switch to, so a reload starts in it', async () => {
    const userData = await tempDir()
    await writeFile(path.join(userData, 'settings.json'), JSON.stringify({ theme: 'dark' }))
    const { standIn, window } = await startApp({ userData, systemDark: true })
    expect(window.options['backgroundColor']).toBe('#1e1e1c')
    const frame = window.webContents.mainFrame
    const backgrounds = () =>
      standIn.callsOf('window.setBackgroundColor').map((call) => call.args[1])

    expect(await invoke(standIn, 'settings:update', frame, { theme: 'light' })).toMatchObject({
      ok: true,
    })
    expect(backgrounds()).toEqual(['#ffffff'])
    // Back to the system's, which is dark; a change of the system's theme then is followed.
    await invoke(standIn, 'settings:update', frame, { theme: 'system' })
    expect(backgrounds()).toEqual(['#ffffff', '#1e1e1c'])
    standIn.switchSystemTheme(false)
    expect(backgrounds()).toEqual(['#ffffff', '#1e1e1c', '#ffffff'])
    // Pinned, the system's theme no longer counts; a change of another setting changes nothing.
    await invoke(standIn, 'settings:update', frame, { theme: 'dark' })
    standIn.switchSystemTheme(true)
    standIn.switchSystemTheme(false)
    await invoke(standIn, 'settings:update', frame, { maxTokens: 2048 })
    expect(backgrounds()).toEqual(['#ffffff', '#1e1e1c', '#ffffff', '#1e1e1c'])
    expect(
      standIn.callsOf('window.setBackgroundColor').every((call) => call.args[0] === window),
    ).toBe(true)
  })

  it('keeps spellcheck off where it would download dictionaries (Linux, Windows)', async () => {
    const { standIn, window } = await startApp()
    const webPreferences = window.options['webPreferences'] as Record<string, unknown>
    const downloads = process.platform !== 'darwin'
    expect(webPreferences['spellcheck']).toBe(!downloads)
    expect(standIn.callsOf('session.setSpellCheckerEnabled').map((call) => call.args[0])).toEqual([
      !downloads,
    ])
  })

  it('serves the renderer folder over app:// with the CSP as a response header', async () => {
    const { standIn } = await startApp()
    const page = await serve(standIn, 'app://cairn/index.html')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const policy = page.headers.get('content-security-policy')
    expect(policy).toBe(contentSecurityPolicy())
    expect(policy).toContain("script-src 'self'")
    expect(policy).toContain("style-src 'self'")
    expect(policy).not.toContain('unsafe-inline')
    expect(policy).not.toContain('unsafe-eval')
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await page.text()).toBe(await readFile(path.join(rendererDir, 'index.html'), 'utf8'))

    const [script] = (await readdir(path.join(rendererDir, 'assets'))).filter((name) =>
      name.endsWith('.js'),
    )
    const asset = await serve(standIn, `app://cairn/assets/${script}`)
    expect(asset.status).toBe(200)
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(asset.headers.get('content-security-policy')).toBe(contentSecurityPolicy())
    const served = Buffer.from(await asset.arrayBuffer())
    expect(served.equals(await readFile(path.join(rendererDir, 'assets', script!)))).toBe(true)
    const root = await serve(standIn, 'app://cairn/')
    expect(root.status).toBe(200)
    expect(await root.text()).toContain('<div id="root">')
  })

  it.each([
    'app://cairn/../package.json',
    'app://cairn/../../package.json',
    'app://cairn/%2e%2e/%2e%2e/package.json',
    'app://cairn/..%2f..%2fpackage.json',
    'app://cairn/assets/..%2f..%2f..%2fpackage.json',
    'app://cairn/..%5c..%5cpackage.json',
    'app://cairn/%2e%2e%2f%2e%2e%2fpackage.json',
    'app://cairn/%252e%252e/package.json',
    'app://cairn/index.html%00.png',
    'app://cairn/C:%5cWindows%5cwin.ini',
    'app://cairn/assets',
    'app://cairn/missing.js',
    'app://cairn/.vite/manifest.json',
    'app://other-host/index.html',
    'app://cairn:8080/index.html',
  ])('answers %s with 404 (and still the CSP header)', async (url) => {
    const { standIn } = await startApp()
    const response = await serve(standIn, url)
    expect(response.status).toBe(404)
    expect(response.headers.get('content-security-policy')).toBe(contentSecurityPolicy())
    expect(await response.text()).toBe('Not found')
  })

  it('answers only GET and HEAD', async () => {
    const { standIn } = await startApp()
    expect(
      (await serve(standIn, 'app://cairn/index.html', { method: 'POST', body: 'x' })).status,
    ).toBe(405)
    const head = await serve(standIn, 'app://cairn/index.html', { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
  })

  it('refuses navigation away from the page and opens only https links, outside', async () => {
    const { standIn, window } = await startApp()
    const contents = window.webContents
    const navigate = (url: string) => {
      const event = fakeEvent({ url })
      contents.emit('will-navigate', event)
      return event.defaultPrevented
    }
    expect(navigate('app://cairn/index.html')).toBe(false)
    expect(navigate('https://example.com/docs')).toBe(true)
    expect(navigate('file:///etc/passwd')).toBe(true)
    expect(navigate('http://example.com/')).toBe(true)
    expect(navigate('app://cairn/other.html')).toBe(true)
    expect(navigate('evil://cairn/index.html')).toBe(true)
    const redirect = fakeEvent({ url: 'https://example.com/' })
    contents.emit('will-redirect', redirect)
    expect(redirect.defaultPrevented).toBe(true)
    expect(standIn.callsOf('shell.openExternal').map((call) => call.args[0])).toEqual([
      'https://example.com/docs',
    ])
  })

  it('denies every new window, opening https links in the browser instead', async () => {
    const { standIn, window } = await startApp()
    const open = window.webContents.windowOpenHandler!
    expect(open({ url: 'https://example.com/a' })).toEqual({ action: 'deny' })
    expect(open({ url: 'javascript:alert(1)' })).toEqual({ action: 'deny' })
    expect(open({ url: 'file:///etc/passwd' })).toEqual({ action: 'deny' })
    expect(open({ url: 'https://user@example.com/' })).toEqual({ action: 'deny' })
    expect(standIn.callsOf('shell.openExternal').map((call) => call.args[0])).toEqual([
      'https://example.com/a',
    ])
  })

  it('refuses to attach a webview', async () => {
    const { window } = await startApp()
    const event = fakeEvent()
    window.webContents.emit('will-attach-webview', event, {}, { src: 'https://example.com' })
    expect(event.defaultPrevented).toBe(true)
  })

  it('puts the same locks on every other web contents that appears', async () => {
    const { standIn } = await startApp()
    const other = new standIn.FakeWebContents()
    standIn.app.emit('web-contents-created', fakeEvent(), other)
    expect(other.windowOpenHandler?.({ url: 'https://example.com' })).toEqual({ action: 'deny' })
    const navigation = fakeEvent({ url: 'https://example.com' })
    other.emit('will-navigate', navigation)
    expect(navigation.defaultPrevented).toBe(true)
    const webview = fakeEvent()
    other.emit('will-attach-webview', webview, {}, {})
    expect(webview.defaultPrevented).toBe(true)
  })

  it('denies every permission request and check', async () => {
    const { standIn, window } = await startApp()
    const handlers = standIn.sessionHandlers as Record<string, (...args: unknown[]) => unknown>
    for (const permission of [
      'media',
      'geolocation',
      'notifications',
      'clipboard-read',
      'openExternal',
    ]) {
      const answers: boolean[] = []
      handlers['permissionRequest']!(window.webContents, permission, (granted: boolean) =>
        answers.push(granted),
      )
      expect(answers).toEqual([false])
      expect(handlers['permissionCheck']!(window.webContents, permission, 'app://cairn', {})).toBe(
        false,
      )
    }
    expect(handlers['devicePermission']!({ deviceType: 'usb' })).toBe(false)
    const streams: unknown[] = []
    handlers['displayMedia']!({}, (answer: unknown) => streams.push(answer))
    expect(streams).toEqual([null])
    // The dev server's header hook is for development only.
    expect(standIn.callsOf('session.onHeadersReceived')).toHaveLength(0)
  })

  it('registers a handler for every request channel of the contract, and nothing else', async () => {
    const { standIn } = await startApp()
    expect([...standIn.handlers.keys()].sort()).toEqual([...requestChannels].sort())
  })

  it('answers requests from its own page and refuses any other frame', async () => {
    const { standIn, userData, window } = await startApp()
    const own = window.webContents.mainFrame
    const info = await invoke(standIn, 'app:info', own)
    expect(info).toMatchObject({ ok: true, value: { name: 'Cairn', dataDir: userData } })

    const forbidden = { ok: false, error: { code: 'forbidden', message: 'Request refused.' } }
    const foreign: Array<FakeFrame | null> = [
      null,
      { ...own, routingId: 999, parent: own }, // an iframe inside the page
      { ...own, processId: 99 }, // another renderer process
      { ...own, url: 'https://example.com/index.html' }, // our frame, navigated elsewhere
      { ...own, url: 'file:///index.html' },
      { ...own, url: 'evil://cairn/index.html' },
    ]
    for (const frame of foreign) {
      expect(await invoke(standIn, 'app:info', frame)).toEqual(forbidden)
      expect(
        await invoke(standIn, 'memory:write', frame, { path: '/memories/x.md', content: 'x' }),
      ).toEqual(forbidden)
    }
    expect(existsSync(path.join(userData, 'memories', 'x.md'))).toBe(false)
  })

  it('refuses every request channel from a foreign frame, whatever the payload, and changes nothing', async () => {
    const { standIn, userData, window } = await startApp()
    const own = window.webContents.mainFrame
    const forbidden = { ok: false, error: { code: 'forbidden', message: 'Request refused.' } }
    const frames: FakeFrame[] = [
      { ...own, routingId: 999, parent: own },
      { ...own, processId: 99 },
      { ...own, url: 'app://other-host/index.html' },
      { ...own, url: 'app://cairn/other.html' },
      { ...own, url: 'data:text/html,<p>x</p>' },
      { ...own, url: 'javascript:alert(1)' },
    ]
    const payloads: unknown[] = [
      undefined,
      { path: '/memories/x.md', content: 'x' },
      JSON.parse('{"__proto__": {"polluted": true}, "id": "x"}'),
      { id: 'x'.repeat(1_000_000), extra: 1 },
      42,
    ]
    // Listed once the start's own background writes are done (the git index written in slices
    // under its lock and note, the object store's spare files): those are not the requests'.
    const before = await settledListing(userData)
    for (const channel of requestChannels) {
      for (const frame of frames) {
        for (const payload of payloads) {
          expect(await invoke(standIn, channel, frame, payload), `${channel} ${frame.url}`).toEqual(
            forbidden,
          )
        }
      }
    }
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
    expect((await readdir(userData, { recursive: true })).sort()).toEqual(before)
  })

  it('forwards core events to the window on the one event channel', async () => {
    const { standIn, window } = await startApp()
    const written = await invoke(standIn, 'memory:write', window.webContents.mainFrame, {
      path: '/memories/notes.md',
      content: 'hello\n',
    })
    expect(written.ok).toBe(true)
    const commit = standIn
      .callsOf('webContents.send')
      .find((call) => (call.args[1] as { name: string }).name === 'history:commit')
    expect(commit?.args[0]).toBe(eventChannel)
  })

  it('installs an application menu with the standard roles and Cairn’s commands with their keys', async () => {
    const { standIn, userData } = await startApp()
    type Item = {
      id?: string
      role?: string
      accelerator?: string
      label?: string
      click?: () => void
      submenu?: Item[]
    }
    const [template] = standIn.callsOf('Menu.setApplicationMenu').at(-1)!.args as [Item[]]
    const all: Item[] = []
    const walk = (items: Item[]) => {
      for (const item of items) {
        all.push(item)
        if (item.submenu) walk(item.submenu)
      }
    }
    walk(template)
    const roles = new Set(all.map((item) => item.role).filter(Boolean))
    for (const role of [
      'undo',
      'redo',
      'cut',
      'copy',
      'paste',
      'selectAll',
      'quit',
      'about',
      'windowMenu',
      'togglefullscreen',
      'zoomIn',
      'zoomOut',
      'resetZoom',
    ]) {
      expect(roles, role).toContain(role)
    }
    // Developer tools only in an unpackaged build (this one is).
    expect(roles).toContain('toggleDevTools')
    const byId = (id: string) => all.find((item) => item.id === id)!
    expect(byId('new-chat')).toMatchObject({ label: 'New chat', accelerator: 'CmdOrCtrl+N' })
    expect(byId('open-settings')).toMatchObject({ label: 'Settings…', accelerator: 'CmdOrCtrl+,' })
    expect(byId('show-memory')).toMatchObject({ label: 'Show memory', accelerator: 'CmdOrCtrl+1' })
    expect(byId('show-history')).toMatchObject({
      label: 'Show history',
      accelerator: 'CmdOrCtrl+2',
    })
    expect(byId('show-full-history')).toMatchObject({
      label: 'Full history',
      accelerator: 'CmdOrCtrl+Shift+H',
    })
    expect(byId('open-data-folder')).toMatchObject({
      label: 'Open data folder',
      accelerator: 'CmdOrCtrl+Shift+O',
    })

    const commandsSent = () =>
      standIn
        .callsOf('webContents.send')
        .map((call) => call.args[1] as { name: string; data: { command: string } })
        .filter((message) => message.name === 'app:command')
        .map((message) => message.data.command)
    const commands = [
      'new-chat',
      'open-settings',
      'show-memory',
      'show-history',
      'show-full-history',
    ]
    for (const id of commands) byId(id).click!()
    await vi.waitFor(() => expect(commandsSent()).toEqual(commands))
    byId('open-data-folder').click!()
    await standIn.waitFor('shell.openPath')
    expect(standIn.callsOf('shell.openPath').map((call) => call.args[0])).toEqual([userData])
    expect(standIn.callsOf('dialog.showMessageBox')).toHaveLength(0)
  })

  it('says so when the system cannot open the data folder from the menu', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const { standIn, userData } = await startApp({ openPathError: 'No application is registered' })
    const [template] = standIn.callsOf('Menu.setApplicationMenu').at(-1)!.args as [
      Array<{ submenu?: Array<{ id?: string; click?: () => void }> }>,
    ]
    const item = template
      .flatMap((menu) => menu.submenu ?? [])
      .find((entry) => entry.id === 'open-data-folder')
    item!.click!()
    const dialog = await standIn.waitFor('dialog.showMessageBox')
    expect(dialog.args[0]).toMatchObject({
      type: 'warning',
      message: 'The data folder could not be opened',
      detail: `The system could not show this folder: ${userData}`,
    })
  })

  it('quit waits for a memory commit that is running, and a second quit waits too', async () => {
    const { standIn, userData, window } = await startApp()
    const writing = invoke(standIn, 'memory:write', window.webContents.mainFrame, {
      path: '/memories/last-words.md',
      content: 'written while quitting\n',
    })
    standIn.app.quit()
    standIn.app.quit()
    expect(standIn.callsOf('app.quit-held')).toHaveLength(2)
    expect(standIn.callsOf('app.quit')).toHaveLength(0)
    await standIn.waitFor('app.quit')
    expect((await writing).ok).toBe(true)
    const kinds = standIn.calls.map((call) =>
      call.kind === 'webContents.send'
        ? `event:${(call.args[1] as { name: string }).name}`
        : call.kind,
    )
    expect(kinds.indexOf('event:history:commit')).toBeGreaterThan(-1)
    expect(kinds.indexOf('event:history:commit')).toBeLessThan(kinds.indexOf('app.quit'))
    const log = execFileSync(
      'git',
      ['--git-dir', path.join(userData, 'history.git'), 'log', '--format=%s'],
      {
        encoding: 'utf8',
      },
    )
    expect(log).toContain('last-words.md')
  })

  it('closing the last window quits after the core has closed (Linux, Windows)', async () => {
    if (process.platform === 'darwin') return
    const { standIn, window } = await startApp()
    window.close()
    await standIn.waitFor('app.quit')
    expect(standIn.callsOf('app.quit-held')).toHaveLength(1)
  })

  it('remembers the window’s bounds and brings them back inside a display that is still there', async () => {
    const displays = [
      { x: 0, y: 0, width: 1920, height: 1040 },
      { x: 1920, y: 0, width: 2560, height: 1400 },
    ]
    const userData = await tempDir()
    const first = await start({ userData, displays }, { CAIRN_DATA_DIR: undefined })
    await first.waitFor('window.loaded')
    const window = first.windows[0]!
    // The default size, centred on the primary display.
    expect(window.bounds).toEqual({ x: 320, y: 110, width: 1280, height: 820 })
    window.setBounds({ x: 2400, y: 300, width: 1500, height: 900 })
    window.maximize()
    window.close()
    await first.waitFor('app.quit')
    expect(JSON.parse(await readFile(path.join(userData, 'window-state.json'), 'utf8'))).toEqual({
      bounds: { x: 2400, y: 300, width: 1500, height: 900 },
      maximized: true,
    })

    // Same displays: the same place, maximized again.
    const second = await start({ userData, displays }, { CAIRN_DATA_DIR: undefined })
    await second.waitFor('window.loaded')
    expect(second.windows[0]!.bounds).toEqual({ x: 2400, y: 300, width: 1500, height: 900 })
    expect(second.windows[0]!.maximized).toBe(true)
    await quit(second)

    // The second display is gone: the saved size, fitted and centred on the primary one.
    const third = await start(
      { userData, displays: [{ x: 0, y: 0, width: 1366, height: 728 }] },
      { CAIRN_DATA_DIR: undefined },
    )
    await third.waitFor('window.loaded')
    expect(third.windows[0]!.bounds).toEqual({ x: 0, y: 0, width: 1366, height: 728 })
    expect(third.windows[0]!.maximized).toBe(true)
    await quit(third)
  })

  it('keeps the whole window on a display smaller than its least size, its least size shrunk to fit', async () => {
    // 1366×768 at 175 %: the work area in the points windows are placed in, less a taskbar.
    const small = { x: 0, y: 0, width: 780, height: 400 }
    const userData = await tempDir()
    await writeFile(
      path.join(userData, 'window-state.json'),
      JSON.stringify({ bounds: { x: 0, y: 0, width: 1280, height: 820 }, maximized: false }),
    )
    for (const saved of [true, false]) {
      if (!saved) await rm(path.join(userData, 'window-state.json'))
      const standIn = await start({ userData, displays: [small] }, { CAIRN_DATA_DIR: undefined })
      await standIn.waitFor('window.loaded')
      const [made] = standIn.callsOf('new BrowserWindow')
      const options = made!.args[0] as Record<string, number>
      expect(options, `saved: ${saved}`).toMatchObject({ x: 0, y: 0, width: 780, height: 400 })
      // Electron grows a window to its least size: the window would hang below the screen, the
      // message box at its foot out of reach.
      expect(options['minWidth']).toBeLessThanOrEqual(small.width)
      expect(options['minHeight']).toBeLessThanOrEqual(small.height)
      await quit(standIn)
    }
  })

  it('grows a window last closed on a smaller screen back to its least size on a larger one', async () => {
    // Closed at 780×400 on a 1366×768 screen at 175 %; the next start has a 1920×1040 one.
    const userData = await tempDir()
    await writeFile(
      path.join(userData, 'window-state.json'),
      JSON.stringify({ bounds: { x: 0, y: 0, width: 780, height: 400 }, maximized: false }),
    )
    const standIn = await start({ userData }, { CAIRN_DATA_DIR: undefined })
    await standIn.waitFor('window.loaded')
    const [made] = standIn.callsOf('new BrowserWindow')
    // The least size holds again where there is room for it (it had followed the saved size
    // down, so the window could be made ever smaller and stay so).
    expect(made!.args[0]).toMatchObject({
      x: 0,
      y: 0,
      width: 880,
      height: 560,
      minWidth: 880,
      minHeight: 560,
    })
    await quit(standIn)
  })

  it('honours CAIRN_DATA_DIR only outside a packaged build', async () => {
    const userData = await tempDir()
    const elsewhere = await tempDir()
    const dev = await start({ userData }, { CAIRN_DATA_DIR: elsewhere })
    await dev.waitFor('window.loaded')
    await ready(dev)
    cleanups.push(() => quit(dev))
    expect(dev.callsOf('app.setPath')[0]?.args).toEqual(['userData', elsewhere])
    const devInfo = await invoke(dev, 'app:info', dev.windows[0]!.webContents.mainFrame)
    expect(devInfo).toMatchObject({ value: { dataDir: elsewhere } })
    await quit(dev)

    const packaged = await start(
      { userData, isPackaged: true },
      { CAIRN_DATA_DIR: elsewhere, ELECTRON_RENDERER_URL: 'http://localhost:5173' },
    )
    await packaged.waitFor('window.loaded')
    await ready(packaged)
    cleanups.push(() => quit(packaged))
    expect(packaged.callsOf('app.setPath')).toHaveLength(0)
    const info = await invoke(packaged, 'app:info', packaged.windows[0]!.webContents.mainFrame)
    expect(info).toMatchObject({ value: { dataDir: userData } })
    // Nor does a packaged build load a dev server's page.
    expect(packaged.callsOf('window.loadURL').map((call) => call.args[0])).toEqual([
      'app://cairn/index.html',
    ])
  })

  it('refuses to start packaged with a debugging switch, and says why; development keeps them', async () => {
    const savedArgv = process.argv
    cleanups.push(async () => {
      process.argv = savedArgv
    })
    for (const switchGiven of [
      '--remote-debugging-port=9222',
      '--remote-debugging-pipe',
      '--inspect',
      '--inspect-brk=9229',
    ]) {
      const userData = await tempDir()
      process.argv = [savedArgv[0]!, '/opt/Cairn/resources/app.asar', switchGiven]
      const packaged = await start({ userData, isPackaged: true }, { CAIRN_DATA_DIR: undefined })
      expect(packaged.callsOf('app.exit').map((call) => call.args)).toEqual([[1]])
      const [box] = packaged.callsOf('dialog.showErrorBox')
      expect(box?.args[0]).toBe('Cairn will not start with a debugger attached')
      expect(box?.args[1]).toContain(switchGiven.split('=')[0])
      // Nothing opened (main() asks for the instance lock first thing, as the import runs): no
      // lock, no channel, no window, the data folder untouched.
      expect(packaged.callsOf('app.requestSingleInstanceLock')).toHaveLength(0)
      expect(packaged.handlers.size).toBe(0)
      expect(packaged.callsOf('new BrowserWindow')).toHaveLength(0)
      expect(await readdir(userData)).toEqual([])
    }
    // `npm run dev` is never packaged: the switch is the developer's, and Cairn starts.
    process.argv = [savedArgv[0]!, '.', '--remote-debugging-port=9222']
    const dev = await start({ userData: await tempDir() }, { CAIRN_DATA_DIR: undefined })
    cleanups.push(() => quit(dev))
    await dev.waitFor('window.loaded')
    await ready(dev)
    expect(dev.callsOf('dialog.showErrorBox')).toHaveLength(0)
    expect(dev.callsOf('app.exit')).toHaveLength(0)
  })

  it('hides the API key in the shell’s own log lines, read back from the log file', async () => {
    const key = `sk-ant-api03-${randomBytes(70).toString('base64url').slice(0, 93)}AA`
    const logDir = await tempDir()
    const logFile = path.join(logDir, 'cairn.log')
    const stream = createWriteStream(logFile, { flags: 'a' })
    const file = new Console({ stdout: stream, stderr: stream })
    // What the app writes to its stderr, here into a file.
    vi.spyOn(console, 'error').mockImplementation((...args) => file.error(...args))
    vi.spyOn(console, 'warn').mockImplementation((...args) => file.warn(...args))
    const userData = await tempDir()
    const standIn = await start(
      { userData, dialogResponse: 0 },
      {
        CAIRN_DATA_DIR: undefined,
        ANTHROPIC_API_KEY: key,
      },
    )
    cleanups.push(() => quit(standIn))
    await standIn.waitFor('window.loaded')
    await ready(standIn)
    // A reason that carries the key as it is and in base64 (Electron's words are its own).
    standIn.windows[0]!.webContents.emit('render-process-gone', fakeEvent(), {
      reason: `crashed ${key} ${Buffer.from(key).toString('base64')}`,
      exitCode: 139,
    })
    await standIn.waitFor('window.reload')
    await new Promise<void>((resolve) => stream.end(resolve))
    const log = await readFile(logFile, 'utf8')
    expect(log).toContain("[cairn] the window's page stopped: crashed your API key")
    for (const form of [key, Buffer.from(key).toString('base64')]) {
      for (let i = form === key ? 13 : 0; i + 8 <= form.length; i++) {
        expect(log).not.toContain(form.slice(i, i + 8))
      }
    }
  })

  it('offers to reload a window whose page crashed, and reloads it', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const { standIn, window } = await startApp({ dialogResponse: 0 })
    window.webContents.emit('render-process-gone', fakeEvent(), {
      reason: 'crashed',
      exitCode: 139,
    })
    const dialog = await standIn.waitFor('dialog.showMessageBox')
    expect(dialog.args[0]).toMatchObject({
      type: 'error',
      message: 'Cairn’s window stopped unexpectedly',
      buttons: ['Reload', 'Quit'],
    })
    await standIn.waitFor('window.reload')
    expect(standIn.callsOf('app.exit')).toHaveLength(0)
    // A page that closed normally is no crash.
    window.webContents.emit('render-process-gone', fakeEvent(), {
      reason: 'clean-exit',
      exitCode: 0,
    })
    expect(standIn.callsOf('dialog.showMessageBox')).toHaveLength(1)
  })

  // Closing or reloading the window while the editor held unsaved text lost it without a word:
  // the page refuses its unload, and Electron only says so (`will-prevent-unload`).
  for (const [response, goes] of [
    [0, false],
    [1, true],
  ] as const) {
    it(`asks before a close loses unsaved editor text, and ${goes ? 'lets it go on Discard' : 'keeps editing by default'}`, async () => {
      const { standIn, window } = await startApp({ dialogResponse: response })
      const frame = window.webContents.mainFrame
      expect(await invoke(standIn, 'app:unsaved', frame, { path: '/memories/x.md' })).toEqual({
        ok: true,
        value: null,
      })
      const unload = fakeEvent()
      window.webContents.emit('will-prevent-unload', unload)
      const [asked] = standIn.callsOf('dialog.showMessageBoxSync')
      expect(asked!.args[0]).toMatchObject({
        message: 'Discard unsaved changes to /memories/x.md?',
        buttons: ['Keep editing', 'Discard'],
        defaultId: 0,
        cancelId: 0,
      })
      // Electron goes on with the close only when the refusal is overridden.
      expect(unload.defaultPrevented).toBe(goes)
      // Kept, the text is saved before the test's quit (which would ask again).
      if (!goes) await invoke(standIn, 'app:unsaved', frame, { path: null })
    })
  }

  // Electron emits before-quit before it closes the windows: a quit (Ctrl/Cmd+Q) that closed the
  // core first and only then met the editor's refusal left "Keep editing" without a core.
  it('asks before a quit loses unsaved editor text; Keep editing cancels it with the core still open', async () => {
    const { standIn, userData, window } = await startApp({ dialogResponse: 0 })
    const frame = window.webContents.mainFrame
    await invoke(standIn, 'app:unsaved', frame, { path: '/memories/x.md' })
    window.webContents.refusesUnload = true
    standIn.app.quit()
    // Asked at once, before anything closed.
    const asked = standIn.callsOf('dialog.showMessageBoxSync')
    expect(asked).toHaveLength(1)
    expect(asked[0]!.args[0]).toMatchObject({
      message: 'Discard unsaved changes to /memories/x.md?',
      defaultId: 0,
      cancelId: 0,
    })
    expect(standIn.callsOf('app.quit-held')).toHaveLength(1)
    // The person keeps editing and saves: the memory and its history are still there.
    const saved = await invoke(standIn, 'memory:write', frame, {
      path: '/memories/x.md',
      content: 'kept after a cancelled quit\n',
    })
    expect(saved.ok).toBe(true)
    const log = execFileSync(
      'git',
      ['--git-dir', path.join(userData, 'history.git'), 'log', '--format=%s'],
      { encoding: 'utf8' },
    )
    expect(log).toContain('x.md')
    expect(standIn.callsOf('app.quit')).toHaveLength(0)
    expect(standIn.callsOf('app.quit-cancelled')).toHaveLength(0)
    expect(window.destroyed).toBe(false)
    // Saved, the page lets go and the next quit asks nothing.
    await invoke(standIn, 'app:unsaved', frame, { path: null })
    window.webContents.refusesUnload = false
    standIn.app.quit()
    await standIn.waitFor('app.quit')
    expect(standIn.callsOf('dialog.showMessageBoxSync')).toHaveLength(1)
  })

  it('a quit told Discard closes the window without asking a second time', async () => {
    const { standIn, window } = await startApp({ dialogResponse: 1 })
    await invoke(standIn, 'app:unsaved', window.webContents.mainFrame, { path: '/memories/x.md' })
    window.webContents.refusesUnload = true
    standIn.app.quit()
    await standIn.waitFor('app.quit')
    expect(window.destroyed).toBe(true)
    expect(standIn.callsOf('dialog.showMessageBoxSync')).toHaveLength(1)
    expect(standIn.callsOf('app.quit-cancelled')).toHaveLength(0)
  })

  it('leaves the start to the instance already running', async () => {
    const userData = await tempDir()
    const standIn = await start({ userData, singleInstance: false }, { CAIRN_DATA_DIR: undefined })
    await standIn.waitFor('app.quit')
    expect(standIn.callsOf('new BrowserWindow')).toHaveLength(0)
    expect(standIn.handlers.size).toBe(0)
    expect(existsSync(path.join(userData, 'history.git'))).toBe(false)
  })
})

/**
 * A data folder whose history has `commits` commits and no side index: the next open rebuilds
 * the index from every commit, the slow step the opening screen is for. Gives git's count.
 */
async function historyToRebuild(userData: string, commits: number): Promise<number> {
  const memory = await openVersionedMemory({ dataDir: userData, watch: false, maintenance: false })
  for (let k = 0; k < commits; k++) {
    await memory.execute(
      { command: 'create', path: `/memories/topic-${k % 9}.md`, file_text: `v${k}\n` },
      { actor: 'claude', conversationId: 'shell', toolUseId: `toolu_s${k}` },
    )
  }
  await memory.close()
  const gitdir = path.join(userData, 'history.git')
  for (const name of await readdir(gitdir)) {
    if (name.startsWith('cairn-index')) await rm(path.join(gitdir, name), { recursive: true })
  }
  return Number(
    execFileSync('git', ['--git-dir', gitdir, 'rev-list', '--count', 'main'], { encoding: 'utf8' }),
  )
}

/** What the shell told its window of the opening, in order. */
function openingUpdates(standIn: ElectronStandIn): OpeningUpdate[] {
  return standIn
    .callsOf('webContents.send')
    .filter((call) => eventName(call) === 'app:opening')
    .map((call) => (call.args[1] as { data: OpeningUpdate }).data)
}

/** Resolves at the first report of the index's rebuild the window was told (the open runs). */
function rebuilding(standIn: ElectronStandIn) {
  return standIn.waitUntil(
    'webContents.send',
    (call) =>
      eventName(call) === 'app:opening' &&
      (call.args[1] as { data: OpeningUpdate }).data.progress.step === 'rebuilding-index',
  )
}

describe('the window comes before the memory is open', () => {
  it('shows the window at once, tells it how far a rebuild of the index is, then that the app is ready', async () => {
    const userData = await tempDir()
    const total = await historyToRebuild(userData, 60)
    const standIn = await start({ userData }, { CAIRN_DATA_DIR: undefined })
    cleanups.push(() => quit(standIn))
    await rebuilding(standIn)
    // The open is running now: the window is there and its page loaded, nothing is ready.
    const window = standIn.windows[0]!
    expect(standIn.callsOf('new BrowserWindow')).toHaveLength(1)
    expect(standIn.callsOf('window.loaded')).toHaveLength(1)
    expect(window.shown).toBe(true)
    const frame = window.webContents.mainFrame
    // The page may ask how far it is; anything else gets a clear answer, never a hang.
    expect(await invoke(standIn, 'app:opening', frame)).toEqual({
      ok: true,
      value: {
        state: 'opening',
        progress: expect.objectContaining({ step: 'rebuilding-index' }),
        closing: false,
      },
    })
    expect(await invoke(standIn, 'memory:tree', frame)).toEqual({
      ok: false,
      error: {
        code: 'starting',
        message: 'Cairn is still opening your memory. Try again once it is open.',
      },
    })
    // A foreign frame is refused as ever, open or not.
    const foreign = { ...frame, routingId: frame.routingId + 100 }
    expect(await invoke(standIn, 'app:opening', foreign)).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    })

    await ready(standIn)
    const updates = openingUpdates(standIn)
    // The open starts once the window is there: its first report reaches it too.
    expect(updates[0]?.progress).toEqual({ step: 'checking', done: 0, total: null })
    const rebuild = updates.filter((update) => update.progress.step === 'rebuilding-index')
    expect(rebuild.at(-1)).toEqual({
      progress: { step: 'rebuilding-index', done: total, total },
      closing: false,
    })
    expect(updates.at(-1)?.progress.step).toBe('starting')
    const kinds = standIn.calls.map((call) => call.kind)
    expect(kinds.indexOf('new BrowserWindow')).toBeLessThan(
      standIn.calls.findIndex((call) => eventName(call) === 'app:opening'),
    )
    // Open now: the core answers, and its events reach the window.
    expect(await invoke(standIn, 'app:opening', frame)).toEqual({
      ok: true,
      value: { state: 'ready' },
    })
    const tree = await invoke(standIn, 'memory:tree', frame)
    expect(tree.ok).toBe(true)
    expect(tree['value']).toHaveLength(9)
  })

  it('a quit while the memory opens waits for the open, then closes it: the lock is released', async () => {
    const userData = await tempDir()
    const total = await historyToRebuild(userData, 60)
    const standIn = await start({ userData }, { CAIRN_DATA_DIR: undefined })
    cleanups.push(() => quit(standIn))
    await rebuilding(standIn)
    expect(
      standIn.callsOf('webContents.send').some((call) => eventName(call) === 'app:ready'),
    ).toBe(false)
    standIn.app.quit()
    expect(standIn.callsOf('app.quit-held')).toHaveLength(1)
    // The window says Cairn closes once the memory is open.
    expect(openingUpdates(standIn).at(-1)?.closing).toBe(true)
    await standIn.waitFor('app.quit')
    // It never became ready, and it let go of the data folder: another Cairn can open it.
    expect(
      standIn.callsOf('webContents.send').some((call) => eventName(call) === 'app:ready'),
    ).toBe(false)
    expect(standIn.callsOf('app.exit')).toEqual([])
    const lock = acquireInstanceLock(userData)
    lock.release()
    // The rebuild was not cut short: the next open finds the index whole (nothing rebuilt).
    const told: OpeningUpdate['progress'][] = []
    const memory = await openVersionedMemory({
      dataDir: userData,
      watch: false,
      maintenance: false,
      onProgress: (progress) => told.push(progress),
    })
    try {
      expect((await memory.log({ offset: 0, limit: 200 })).entries).toHaveLength(total)
    } finally {
      await memory.close()
    }
    expect(told.map((progress) => progress.step)).not.toContain('rebuilding-index')
    // A second start as Cairn ends brings up no window that would be left behind.
    standIn.app.emit('second-instance')
    standIn.app.emit('activate')
    // Give a window being made the time to come (Cairn reads a file or two first): none does.
    await Promise.race([
      standIn.waitUntil('new BrowserWindow', () => standIn.windows.length > 1),
      new Promise((resolve) => setTimeout(resolve, 500)),
    ])
    expect(standIn.callsOf('new BrowserWindow')).toHaveLength(1)
  })

  it('the last window closed while the memory opens leaves a small window saying Cairn closes once it is open', async () => {
    if (process.platform === 'darwin') return
    const userData = await tempDir()
    await historyToRebuild(userData, 60)
    const standIn = await start({ userData }, { CAIRN_DATA_DIR: undefined })
    cleanups.push(() => quit(standIn))
    await rebuilding(standIn)
    const [window] = standIn.windows
    window!.setBounds({ x: 40, y: 30, width: 1100, height: 700 })
    window!.close()
    expect(standIn.callsOf('app.quit-held')).toHaveLength(1)
    // A second, small window, its page the opening screen, told that Cairn is closing.
    await standIn.waitUntil('new BrowserWindow', () => standIn.windows.length === 2)
    const small = standIn.callsOf('new BrowserWindow')[1]!
    expect(small.args[0]).toMatchObject({ width: 520, height: 360, resizable: false })
    const closing = standIn.windows[1]!
    await standIn.waitUntil('window.loaded', () => closing.webContents.mainFrame.url !== '')
    expect(closing.webContents.mainFrame.url).toBe('app://cairn/index.html')
    expect(await invoke(standIn, 'app:opening', closing.webContents.mainFrame)).toMatchObject({
      ok: true,
      value: { state: 'opening', closing: true },
    })
    expect(closing.shown).toBe(true)

    await standIn.waitFor('app.quit')
    expect(closing.destroyed).toBe(true)
    expect(standIn.windows).toHaveLength(2)
    expect(
      standIn.callsOf('webContents.send').some((call) => eventName(call) === 'app:ready'),
    ).toBe(false)
    // The lock is let go, and the place remembered is the app window's, not the small one's.
    acquireInstanceLock(userData).release()
    const state = JSON.parse(await readFile(path.join(userData, 'window-state.json'), 'utf8'))
    expect(state.bounds).toEqual({ x: 40, y: 30, width: 1100, height: 700 })
  })

  it('a second start just after the last window closed while the memory opens shows the small closing window, never a second app window', async () => {
    if (process.platform === 'darwin') return
    const userData = await tempDir()
    await historyToRebuild(userData, 60)
    const standIn = await start({ userData }, { CAIRN_DATA_DIR: undefined })
    cleanups.push(() => quit(standIn))
    await rebuilding(standIn)
    const [window] = standIn.windows
    window!.setBounds({ x: 40, y: 30, width: 1100, height: 700 })
    window!.close()
    // Cairn started again (a double click on its icon) before the small window is up.
    standIn.app.emit('second-instance')
    await standIn.waitFor('app.quit')
    // One small window saying Cairn closes: not a full window that opens the app half-way
    // through the quit, then is closed under the person's hands.
    const made = standIn.callsOf('new BrowserWindow').map((call) => call.args[0])
    expect(made).toHaveLength(2)
    expect(made[1]).toMatchObject({ width: 520, height: 360, resizable: false })
    acquireInstanceLock(userData).release()
    // The place remembered is still the app window's.
    const state = JSON.parse(await readFile(path.join(userData, 'window-state.json'), 'utf8'))
    expect(state.bounds).toEqual({ x: 40, y: 30, width: 1100, height: 700 })
  })

  it('after a quit from the menu while the memory opens, closing the window that says so brings no small window', async () => {
    if (process.platform === 'darwin') return
    const userData = await tempDir()
    await historyToRebuild(userData, 60)
    const standIn = await start({ userData }, { CAIRN_DATA_DIR: undefined })
    cleanups.push(() => quit(standIn))
    await rebuilding(standIn)
    // The menu's Quit (its role calls app.quit): the window says Cairn closes once it is open.
    standIn.app.quit()
    expect(openingUpdates(standIn).at(-1)?.closing).toBe(true)
    // The person, told, closes that window: it was the one saying so, and is not brought back.
    standIn.windows[0]!.close()
    await standIn.waitFor('app.quit')
    expect(standIn.callsOf('new BrowserWindow')).toHaveLength(1)
    expect(standIn.callsOf('app.quit-held')).toHaveLength(2)
    acquireInstanceLock(userData).release()
  })

  it('a quit before the window is made is held: no window comes, nothing opens, then Cairn quits', async () => {
    const userData = await tempDir()
    const standIn = await start({ userData }, { CAIRN_DATA_DIR: undefined })
    // At once, before the start has made its window (it reads files first).
    expect(standIn.callsOf('new BrowserWindow')).toHaveLength(0)
    standIn.app.quit()
    expect(standIn.callsOf('app.quit-held')).toHaveLength(1)
    expect(standIn.callsOf('app.quit')).toHaveLength(0)
    await standIn.waitFor('app.quit')
    // The start stopped before its window: none was made, the memory was never opened (its
    // lock is free, no history made), and nothing failed.
    expect(standIn.callsOf('new BrowserWindow')).toHaveLength(0)
    expect(standIn.callsOf('dialog.showMessageBox')).toEqual([])
    expect(standIn.callsOf('app.exit')).toEqual([])
    expect(existsSync(path.join(userData, 'history.git'))).toBe(false)
    acquireInstanceLock(userData).release()
    // A second start as Cairn ends brings up no window either.
    standIn.app.emit('second-instance')
    standIn.app.emit('activate')
    await Promise.race([
      standIn.waitFor('new BrowserWindow'),
      new Promise((resolve) => setTimeout(resolve, 300)),
    ])
    expect(standIn.callsOf('new BrowserWindow')).toHaveLength(0)
  })

  it('a window the person closes before its page loaded is a quit, not a failed start', async () => {
    const userData = await tempDir()
    vi.spyOn(console, 'error').mockImplementation(() => undefined)
    // The page never finishes loading on its own here: the person closes the window first.
    const pageLoaded = new Promise<void>(() => undefined)
    const standIn = await start({ userData, pageLoaded }, { CAIRN_DATA_DIR: undefined })
    await standIn.waitFor('window.loadURL')
    standIn.windows[0]!.close()
    await Promise.race([standIn.waitFor('app.quit'), standIn.waitFor('app.exit')])
    // Closing the last window quits on Linux and Windows; nothing says the install is damaged.
    expect(standIn.callsOf('dialog.showMessageBox')).toEqual([])
    expect(standIn.callsOf('app.exit')).toEqual([])
    const lock = acquireInstanceLock(userData)
    lock.release()
  })

  it('a second start while the memory opens brings the opening window forward', async () => {
    const userData = await tempDir()
    await historyToRebuild(userData, 60)
    const standIn = await start({ userData }, { CAIRN_DATA_DIR: undefined })
    cleanups.push(() => quit(standIn))
    await rebuilding(standIn)
    const window = standIn.windows[0]!
    window.minimized = true
    standIn.app.emit('second-instance')
    expect(window.minimized).toBe(false)
    expect(standIn.callsOf('new BrowserWindow')).toHaveLength(1)
    await ready(standIn)
  })
})

describe('a start that fails', () => {
  // The shell logs the full error for developers; the person gets the dialog.
  const logged = () => vi.spyOn(console, 'error').mockImplementation(() => undefined)
  it('shows a native error dialog with the reason and the data folder, then quits', async () => {
    const parent = await tempDir()
    // A file where the data folder should be: createCore cannot make its folders.
    const userData = path.join(parent, 'Cairn')
    await writeFile(userData, 'not a folder')
    const log = logged()
    const standIn = await start({ userData }, { CAIRN_DATA_DIR: undefined })
    const exit = await standIn.waitFor('app.exit')
    expect(log).toHaveBeenCalledWith('[cairn] Cairn could not start:', expect.any(Error))
    expect(exit.args).toEqual([1])
    const [dialog] = standIn.callsOf('dialog.showMessageBox')
    expect(dialog?.args[0]).toMatchObject({
      type: 'error',
      message: 'Cairn could not start',
      buttons: ['Open data folder', 'Quit'],
      defaultId: 1,
      cancelId: 1,
    })
    const detail = (dialog!.args[0] as { detail: string }).detail
    expect(detail).toContain('Something that is not a folder stands where Cairn keeps its data')
    expect(detail).toContain(`Your data folder: ${userData}`)
    expect(detail).not.toMatch(/EEXIST|at .*\.js:\d+|Error:/)
    expect(standIn.callsOf('new BrowserWindow')).toHaveLength(0)
    // "Quit" was chosen: nothing was opened.
    expect(standIn.callsOf('shell.openPath')).toHaveLength(0)
  })

  it('a data folder another Cairn is using is refused in plain words, and left as it was', async () => {
    const userData = await tempDir()
    // Another Cairn (this live process, through the lock the core takes) holds the folder.
    const other = acquireInstanceLock(userData)
    cleanups.push(async () => other.release())
    const lockBefore = await readFile(path.join(userData, LOCK_FILE), 'utf8')
    const log = logged()
    const standIn = await start({ userData }, { CAIRN_DATA_DIR: undefined })
    const exit = await standIn.waitFor('app.exit')
    expect(exit.args).toEqual([1])
    expect(log).toHaveBeenCalledWith('[cairn] Cairn could not start:', expect.any(Error))
    const [dialog] = standIn.callsOf('dialog.showMessageBox')
    expect(dialog?.args[0]).toMatchObject({ type: 'error', message: 'Cairn could not start' })
    const detail = (dialog!.args[0] as { detail: string }).detail
    expect(detail).toContain(
      `Cairn is already open on this data folder (process ${process.pid}). Close the other Cairn window first`,
    )
    expect(detail).toContain(`Your data folder: ${userData}`)
    expect(detail).not.toMatch(/locked|at .*\.js:\d+|Error:/)
    // The window opened at once (its page shows the opening); the failure closed it first.
    expect(standIn.callsOf('new BrowserWindow')).toHaveLength(1)
    expect(standIn.windows.every((window) => window.destroyed)).toBe(true)
    const kinds = standIn.calls.map((call) => call.kind)
    expect(kinds.indexOf('window.destroyed')).toBeLessThan(kinds.indexOf('dialog.showMessageBox'))
    expect(
      standIn.callsOf('webContents.send').filter((call) => eventName(call) === 'app:ready'),
    ).toEqual([])
    // The other Cairn's lock and folder are untouched: no history was opened or made.
    expect(await readFile(path.join(userData, LOCK_FILE), 'utf8')).toBe(lockBefore)
    expect(existsSync(path.join(userData, 'history.git'))).toBe(false)
  })

  it('"Open data folder" opens the nearest folder that exists, then quits', async () => {
    const parent = await tempDir()
    const userData = path.join(parent, 'Cairn')
    await writeFile(userData, 'not a folder')
    logged()
    const standIn = await start({ userData, dialogResponse: 0 }, { CAIRN_DATA_DIR: undefined })
    await standIn.waitFor('app.exit')
    expect(standIn.callsOf('shell.openPath').map((call) => call.args[0])).toEqual([parent])
  })

  it('a data folder Electron refuses is reported the same way', async () => {
    const userData = await tempDir()
    logged()
    const standIn = await start(
      { userData, setPathFails: true },
      { CAIRN_DATA_DIR: path.join(userData, 'elsewhere') },
    )
    await standIn.waitFor('app.exit')
    const [dialog] = standIn.callsOf('dialog.showMessageBox')
    expect(dialog?.args[0]).toMatchObject({ message: 'Cairn could not start' })
    expect((dialog!.args[0] as { detail: string }).detail).toContain(
      `Your data folder: ${path.join(userData, 'elsewhere')}`,
    )
    expect(standIn.callsOf('new BrowserWindow')).toHaveLength(0)
  })

  it('a second start or the menu while the failure is being told opens no window that would wait for ever', async () => {
    const userData = await tempDir()
    const other = acquireInstanceLock(userData)
    cleanups.push(async () => other.release())
    logged()
    let answer = () => undefined as void
    const dialogAnswered = new Promise<void>((resolve) => (answer = resolve))
    const standIn = await start({ userData, dialogAnswered }, { CAIRN_DATA_DIR: undefined })
    // The failure closed the window and its dialog is up; the person has not answered yet.
    await standIn.waitFor('dialog.showMessageBox')
    expect(standIn.windows.every((window) => window.destroyed)).toBe(true)
    standIn.app.emit('second-instance')
    standIn.app.emit('activate')
    // A window would be made after the shell reads its saved place: as long as this read.
    for (let i = 0; i < 3; i++) {
      await readFile(path.join(userData, 'window-state.json')).catch(() => null)
      await new Promise((resolve) => setImmediate(resolve))
    }
    answer()
    await standIn.waitFor('app.exit')
    // No new window showed an opening that was never going to end.
    expect(standIn.callsOf('new BrowserWindow')).toHaveLength(1)
  })

  it('a quit while a failed start still waits for its open is held: the open is closed and the lock released', async () => {
    const userData = await tempDir()
    await historyToRebuild(userData, 60)
    logged()
    let answer = () => undefined as void
    const dialogAnswered = new Promise<void>((resolve) => (answer = resolve))
    // The page fails to load while the index is rebuilt: the failure waits for that open.
    const standIn = await start(
      { userData, loadFails: true, dialogAnswered },
      { CAIRN_DATA_DIR: undefined },
    )
    await standIn.waitFor('dialog.showMessageBox')
    // A quit now (the Dock, a logout) would end the process in the middle of the open.
    standIn.app.quit()
    answer()
    await standIn.waitFor('app.exit')
    expect(standIn.callsOf('app.quit')).toEqual([])
    expect(standIn.callsOf('app.quit-held')).toHaveLength(1)
    // The open was closed before the exit: another Cairn can take the folder.
    const lock = acquireInstanceLock(userData)
    lock.release()
  })

  it('a window that cannot load its page is a failed start too, not a blank window', async () => {
    const userData = await tempDir()
    logged()
    const standIn = await start({ userData, loadFails: true }, { CAIRN_DATA_DIR: undefined })
    await standIn.waitFor('app.exit')
    const detail = (standIn.callsOf('dialog.showMessageBox')[0]!.args[0] as { detail: string })
      .detail
    expect(detail).toContain('could not load Cairn’s own files')
    expect(standIn.windows.every((window) => window.destroyed)).toBe(true)
    // The dialog came before the exit, and the failure did not quit on its own meanwhile.
    const kinds = standIn.calls.map((call) => call.kind)
    expect(kinds.indexOf('dialog.showMessageBox')).toBeLessThan(kinds.indexOf('app.exit'))
    expect(kinds).not.toContain('app.quit')
  })
})

/** A folder's listing (sorted, every depth) once two taken 200 ms apart agree. */
async function settledListing(dir: string): Promise<string[]> {
  let last = (await readdir(dir, { recursive: true })).sort()
  for (let tries = 0; tries < 50; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    const now = (await readdir(dir, { recursive: true })).sort()
    if (JSON.stringify(now) === JSON.stringify(last)) return now
    last = now
  }
  throw new Error('the data folder kept changing after the start')
}
