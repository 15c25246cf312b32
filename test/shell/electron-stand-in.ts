/**
 * A recording stand-in for the `electron` module, enough of it for the built main bundle
 * (`out/main/index.js`) to start in plain Node: it records every call the shell makes and
 * lets a test play the parts Electron would (load the page, send an IPC request from a frame,
 * navigate, ask for a permission, click a menu item, quit).
 *
 * Not a mock of Cairn: the core behind it is the real one on a real temp folder.
 */
import { EventEmitter } from 'node:events'

export interface Rect {
  x: number
  y: number
  width: number
  height: number
}

export interface StandInOptions {
  /** What `app.getPath('userData')` answers until the shell sets it. */
  readonly userData: string
  readonly isPackaged?: boolean
  /** `requestSingleInstanceLock()`'s answer (false: another instance runs). */
  readonly singleInstance?: boolean
  /** Makes `loadURL` fail, as when the page's files are missing. */
  readonly loadFails?: boolean
  /**
   * The page loads only once this settles; a window destroyed meanwhile fails its `loadURL`
   * with ERR_FAILED, as Electron's does (its 'destroyed' listener).
   */
  readonly pageLoaded?: Promise<void>
  /** The button index `dialog.showMessageBox` resolves with (and `showMessageBoxSync` returns). */
  readonly dialogResponse?: number
  /** `dialog.showMessageBox` answers only once this settles: the person has not chosen yet. */
  readonly dialogAnswered?: Promise<void>
  /** Makes `app.setPath` throw, as Electron does for a path it cannot use. */
  readonly setPathFails?: boolean
  /** What `shell.openPath` answers (Electron: an error message, or '' on success). */
  readonly openPathError?: string
  /** Work areas of the displays; the first is the primary. */
  readonly displays?: ReadonlyArray<Rect>
  /** Whether the system's theme is dark (`nativeTheme.shouldUseDarkColors`); light if not set. */
  readonly systemDark?: boolean
}

/** One thing the shell did, in order. */
export interface Call {
  readonly kind: string
  readonly args: ReadonlyArray<unknown>
}

export interface FakeFrame {
  processId: number
  routingId: number
  url: string
  parent: FakeFrame | null
}

/** What a cancellable Electron event gives its listener. */
export interface FakeEvent {
  readonly url?: string
  preventDefault(): void
  readonly defaultPrevented: boolean
}

export function fakeEvent(fields: { url?: string } = {}): FakeEvent {
  let prevented = false
  return {
    ...fields,
    preventDefault() {
      prevented = true
    },
    get defaultPrevented() {
      return prevented
    },
  }
}

type WindowOpenHandler = (details: { url: string }) => { action: string }

export interface FakeWebContents extends EventEmitter {
  readonly mainFrame: FakeFrame
  /** The page refuses its unload (its `beforeunload`), as Cairn's does over unsaved text. */
  refusesUnload: boolean
  readonly windowOpenHandler: WindowOpenHandler | null
}

export interface FakeWindow extends EventEmitter {
  readonly options: Record<string, unknown>
  readonly webContents: FakeWebContents
  readonly destroyed: boolean
  readonly shown: boolean
  readonly maximized: boolean
  /** Minimized by the person (a test sets it); `restore()` brings it back. */
  minimized: boolean
  readonly bounds: Rect
  setBounds(bounds: Rect): void
  maximize(): void
  close(): void
}

export interface ElectronStandIn {
  /** What `import … from 'electron'` gets. */
  readonly module: object
  readonly app: EventEmitter & { quit(): void }
  /** Everything the shell did, in order. */
  readonly calls: ReadonlyArray<Call>
  callsOf(kind: string): Call[]
  waitFor(kind: string): Promise<Call>
  /** Resolves with the first call of this kind, past or future, that `matches`. */
  waitUntil(kind: string, matches: (call: Call) => boolean): Promise<Call>
  readonly windows: ReadonlyArray<FakeWindow>
  /** `ipcMain.handle` registrations by channel. */
  readonly handlers: ReadonlyMap<string, (event: unknown, payload: unknown) => Promise<unknown>>
  /** `protocol.handle` registrations by scheme. */
  readonly protocolHandlers: ReadonlyMap<string, (request: Request) => Promise<Response>>
  /** The default session's permission handlers, by kind. */
  readonly sessionHandlers: Readonly<Record<string, (...args: never[]) => unknown>>
  /** A web contents as Electron would create for another window or a devtools view. */
  readonly FakeWebContents: new () => FakeWebContents
  /** Electron's `nativeTheme`: a test switches the system's theme with `switchSystemTheme`. */
  readonly nativeTheme: EventEmitter & { shouldUseDarkColors: boolean }
  /** The system's theme changes (dark or not), as Electron tells it: `updated`. */
  switchSystemTheme(dark: boolean): void
}

export function createElectronStandIn(options: StandInOptions): ElectronStandIn {
  const calls: Call[] = []
  const waiters = new Map<
    string,
    Array<{ matches: (call: Call) => boolean; resolve: (call: Call) => void }>
  >()
  const record = (kind: string, ...args: unknown[]) => {
    const call = { kind, args }
    calls.push(call)
    const waiting = waiters.get(kind) ?? []
    const met = waiting.filter((waiter) => waiter.matches(call))
    waiters.set(
      kind,
      waiting.filter((waiter) => !met.includes(waiter)),
    )
    for (const waiter of met) waiter.resolve(call)
  }
  /** Resolves with the first call of this kind, past or future, that `matches`. */
  const waitUntil = (kind: string, matches: (call: Call) => boolean): Promise<Call> => {
    const done = calls.find((call) => call.kind === kind && matches(call))
    if (done) return Promise.resolve(done)
    return new Promise((resolve) =>
      waiters.set(kind, [...(waiters.get(kind) ?? []), { matches, resolve }]),
    )
  }
  /** Resolves with the first call of this kind, past or future. */
  const waitFor = (kind: string): Promise<Call> => waitUntil(kind, () => true)
  const callsOf = (kind: string) => calls.filter((call) => call.kind === kind)

  const paths = new Map<string, string>([['userData', options.userData]])
  const displays = options.displays ?? [{ x: 0, y: 0, width: 1920, height: 1040 }]
  let nextRoutingId = 1

  class FakeWebContents extends EventEmitter {
    readonly id = nextRoutingId
    readonly mainFrame: FakeFrame = {
      processId: 7,
      routingId: nextRoutingId++,
      url: '',
      parent: null,
    }
    windowOpenHandler: WindowOpenHandler | null = null
    destroyed = false
    refusesUnload = false
    setWindowOpenHandler(handler: WindowOpenHandler) {
      this.windowOpenHandler = handler
    }
    send(channel: string, payload: unknown) {
      record('webContents.send', channel, payload)
    }
    isDestroyed() {
      return this.destroyed
    }
    replaceMisspelling(word: string) {
      record('webContents.replaceMisspelling', word)
    }
  }

  const app = Object.assign(new EventEmitter(), {
    isPackaged: options.isPackaged ?? false,
    name: 'Cairn',
    exitCode: null as number | null,
    getPath(name: string) {
      const value = paths.get(name)
      if (value === undefined) throw new Error(`stand-in has no path ${name}`)
      return value
    },
    setPath(name: string, value: string) {
      record('app.setPath', name, value)
      if (options.setPathFails) throw new Error(`Failed to set path: ${value}`)
      paths.set(name, value)
    },
    getVersion: () => '0.1.0-shell',
    requestSingleInstanceLock() {
      record('app.requestSingleInstanceLock')
      return options.singleInstance ?? true
    },
    async whenReady() {
      if (!callsOf('app.ready').length) record('app.ready')
    },
    enableSandbox: () => record('app.enableSandbox'),
    setAppUserModelId: (id: string) => record('app.setAppUserModelId', id),
    setAboutPanelOptions: (about: unknown) => record('app.setAboutPanelOptions', about),
    /**
     * Electron's quit: before-quit (cancellable), then it closes every window (a page that
     * refuses its unload cancels the quit), then will-quit (cancellable), then quit. While it
     * closes them, window-all-closed is not emitted.
     */
    quit() {
      const beforeQuit = fakeEvent()
      app.emit('before-quit', beforeQuit)
      if (beforeQuit.defaultPrevented) {
        record('app.quit-held')
        return
      }
      closingForQuit = true
      try {
        for (const window of FakeBrowserWindow.getAllWindows()) {
          window.close()
          if (!window.destroyed) {
            record('app.quit-cancelled')
            return
          }
        }
      } finally {
        closingForQuit = false
      }
      const willQuit = fakeEvent()
      app.emit('will-quit', willQuit)
      if (willQuit.defaultPrevented) return
      record('app.quit')
    },
    exit(code = 0) {
      app.exitCode = code
      record('app.exit', code)
    },
  })

  const windows: FakeBrowserWindow[] = []
  let closingForQuit = false

  class FakeBrowserWindow extends EventEmitter {
    static getAllWindows() {
      return windows.filter((window) => !window.destroyed)
    }
    readonly webContents = new FakeWebContents()
    destroyed = false
    shown = false
    maximized = false
    minimized = false
    bounds: Rect
    constructor(readonly options: Record<string, unknown> & Partial<Rect>) {
      super()
      this.bounds = {
        x: options.x ?? 0,
        y: options.y ?? 0,
        width: options.width ?? 800,
        height: options.height ?? 600,
      }
      windows.push(this)
      record('new BrowserWindow', options)
      app.emit('web-contents-created', fakeEvent(), this.webContents)
    }
    async loadURL(url: string) {
      record('window.loadURL', url)
      if (options.loadFails) throw new Error(`ERR_FILE_NOT_FOUND (-6) loading '${url}'`)
      if (options.pageLoaded) {
        await Promise.race([
          options.pageLoaded,
          new Promise((resolve) => this.once('closed', resolve)),
        ])
        if (this.destroyed) throw new Error(`ERR_FAILED (-2) loading '${url}'`)
      }
      this.webContents.mainFrame.url = url
      this.emit('ready-to-show')
      record('window.loaded', url)
    }
    show() {
      this.shown = true
    }
    focus() {}
    maximize() {
      this.maximized = true
    }
    isMaximized() {
      return this.maximized
    }
    isMinimized() {
      return this.minimized
    }
    restore() {
      this.minimized = false
    }
    reload() {
      record('window.reload')
    }
    setBounds(bounds: Rect) {
      this.bounds = { ...bounds }
    }
    setBackgroundColor(colour: string) {
      record('window.setBackgroundColor', this, colour)
    }
    getNormalBounds() {
      return { ...this.bounds }
    }
    isDestroyed() {
      return this.destroyed
    }
    isVisible() {
      return this.shown && !this.destroyed
    }
    /**
     * What a person closing the window does: close (cancellable), then the page's unload (a
     * refusal stands unless a will-prevent-unload listener overrides it), closed, maybe quit.
     */
    close() {
      const event = fakeEvent()
      this.emit('close', event)
      if (event.defaultPrevented) return
      if (this.webContents.refusesUnload) {
        const unload = fakeEvent()
        this.webContents.emit('will-prevent-unload', unload)
        if (!unload.defaultPrevented) return
      }
      this.destroy()
    }
    destroy() {
      if (this.destroyed) return
      this.destroyed = true
      this.webContents.destroyed = true
      record('window.destroyed')
      this.emit('closed')
      if (FakeBrowserWindow.getAllWindows().length === 0 && !closingForQuit) {
        app.emit('window-all-closed')
      }
    }
  }

  const handlers = new Map<string, (event: unknown, payload: unknown) => Promise<unknown>>()
  const protocolHandlers = new Map<string, (request: Request) => Promise<Response>>()
  const sessionHandlers: Record<string, (...args: never[]) => unknown> = {}

  const session = {
    defaultSession: {
      setPermissionRequestHandler: (handler: never) =>
        (sessionHandlers['permissionRequest'] = handler),
      setPermissionCheckHandler: (handler: never) => (sessionHandlers['permissionCheck'] = handler),
      setDevicePermissionHandler: (handler: never) =>
        (sessionHandlers['devicePermission'] = handler),
      setDisplayMediaRequestHandler: (handler: never) =>
        (sessionHandlers['displayMedia'] = handler),
      setSpellCheckerEnabled: (enabled: boolean) =>
        record('session.setSpellCheckerEnabled', enabled),
      webRequest: {
        onHeadersReceived: (...args: unknown[]) => record('session.onHeadersReceived', ...args),
      },
    },
  }

  const nativeTheme = Object.assign(new EventEmitter(), {
    shouldUseDarkColors: options.systemDark ?? false,
  })

  const module = {
    app,
    nativeTheme,
    BrowserWindow: FakeBrowserWindow,
    protocol: {
      registerSchemesAsPrivileged: (schemes: unknown) =>
        record('protocol.registerSchemesAsPrivileged', schemes),
      handle(scheme: string, handler: (request: Request) => Promise<Response>) {
        record('protocol.handle', scheme)
        protocolHandlers.set(scheme, handler)
      },
    },
    session,
    ipcMain: {
      handle(channel: string, handler: (event: unknown, payload: unknown) => Promise<unknown>) {
        handlers.set(channel, handler)
      },
      removeHandler(channel: string) {
        handlers.delete(channel)
      },
    },
    dialog: {
      async showMessageBox(...args: unknown[]) {
        // (options) or (parent window, options), as Electron takes them.
        const dialogOptions = args[0] instanceof FakeBrowserWindow ? args[1] : args[0]
        if (args[0] instanceof FakeBrowserWindow) record('dialog.parent', args[0])
        record('dialog.showMessageBox', dialogOptions)
        await options.dialogAnswered
        return { response: options.dialogResponse ?? 1, checkboxChecked: false }
      },
      showErrorBox(title: string, content: string) {
        record('dialog.showErrorBox', title, content)
      },
      showMessageBoxSync(...args: unknown[]) {
        const dialogOptions = args[0] instanceof FakeBrowserWindow ? args[1] : args[0]
        if (args[0] instanceof FakeBrowserWindow) record('dialog.parent', args[0])
        record('dialog.showMessageBoxSync', dialogOptions)
        return options.dialogResponse ?? 1
      },
    },
    shell: {
      async openPath(target: string) {
        record('shell.openPath', target)
        return options.openPathError ?? ''
      },
      async openExternal(url: string) {
        record('shell.openExternal', url)
      },
    },
    screen: {
      getAllDisplays: () => displays.map((workArea) => ({ workArea, bounds: workArea })),
      getPrimaryDisplay: () => ({ workArea: displays[0], bounds: displays[0] }),
    },
    Menu: {
      buildFromTemplate: (template: unknown) => ({
        template,
        popup: () => record('menu.popup', template),
      }),
      setApplicationMenu: (menu: { template: unknown }) =>
        record('Menu.setApplicationMenu', menu.template),
    },
    safeStorage: {
      isEncryptionAvailable: () => false,
      encryptString: () => {
        throw new Error('no keychain in the stand-in')
      },
      decryptString: () => {
        throw new Error('no keychain in the stand-in')
      },
    },
  }

  return {
    module,
    app,
    calls,
    callsOf,
    waitFor,
    waitUntil,
    windows,
    handlers,
    protocolHandlers,
    sessionHandlers,
    FakeWebContents,
    nativeTheme,
    switchSystemTheme(dark: boolean) {
      nativeTheme.shouldUseDarkColors = dark
      nativeTheme.emit('updated')
    },
  }
}

/**
 * What a test file's `vi.mock('electron', …)` answers: Vitest builds a mocked module once per
 * file, so each export forwards to the stand-in of the start that is running (`current`), and
 * every fresh load of the bundle talks to its own.
 */
export function forwardingElectron(current: { readonly standIn: { module: object } | null }) {
  const live = (name: string) => {
    const target = () => {
      if (!current.standIn) throw new Error('no electron stand-in prepared for this start')
      return (current.standIn.module as Record<string, object>)[name] as Record<
        PropertyKey,
        unknown
      >
    }
    return new Proxy(function standIn() {}, {
      get(_function, key) {
        const object = target()
        const value = Reflect.get(object, key)
        return typeof value === 'function' && key !== 'prototype' ? value.bind(object) : value
      },
      construct: (_function, args) =>
        Reflect.construct(target() as unknown as new (...args: unknown[]) => object, args),
    })
  }
  const names = ['app', 'BrowserWindow', 'dialog', 'ipcMain', 'Menu', 'protocol', 'safeStorage']
  return Object.fromEntries(
    [...names, 'nativeTheme', 'screen', 'session', 'shell'].map((name) => [name, live(name)]),
  )
}
