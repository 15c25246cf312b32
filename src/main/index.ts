import { app, BrowserWindow, safeStorage, session, shell, type WebFrameMain } from 'electron'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { createCore, type Core } from './core'
import { forwardEvents, registerIpc } from './ipc'
import { CairnError } from './lib/errors'
import { cipherFromSafeStorage, createFileSecretStore } from './settings'

// The Electron shell: lifecycle and the one window. Everything else lives in the core.

const here = path.dirname(fileURLToPath(import.meta.url))
const devServerUrl = !app.isPackaged ? process.env['ELECTRON_RENDERER_URL'] : undefined
const pageUrl = devServerUrl ?? pathToFileURL(path.join(here, '../renderer/index.html')).href

const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  devServerUrl ? "connect-src 'self' ws:" : "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-src 'none'",
  "object-src 'none'",
].join('; ')

let mainWindow: BrowserWindow | null = null

function isTrustedFrame(frame: WebFrameMain | null): boolean {
  if (!frame || !mainWindow || mainWindow.isDestroyed()) return false
  // Only our window's top-level frame, compared by its ids rather than object identity.
  const mainFrame = mainWindow.webContents.mainFrame
  if (frame.parent !== null) return false
  if (frame.processId !== mainFrame.processId || frame.routingId !== mainFrame.routingId) {
    return false
  }
  return sameDocument(frame.url, pageUrl)
}

function sameDocument(url: string, expected: string): boolean {
  try {
    const a = new URL(url)
    const b = new URL(expected)
    return a.origin === b.origin && a.pathname === b.pathname
  } catch {
    return false
  }
}

/** Only https links leave the app, and only through the OS. */
function isHttpsLink(url: string): boolean {
  return /^https:\/\//i.test(url)
}

function openExternally(url: string): void {
  if (isHttpsLink(url)) void shell.openExternal(url)
}

function createWindow(core: Core): BrowserWindow {
  const window = new BrowserWindow({
    width: 1280,
    height: 820,
    minWidth: 880,
    minHeight: 560,
    show: false,
    title: 'Cairn',
    autoHideMenuBar: true,
    ...(process.platform === 'linux' ? { icon: path.join(here, '../../resources/icon.png') } : {}),
    webPreferences: {
      preload: path.join(here, '../preload/index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      spellcheck: true,
    },
  })
  window.once('ready-to-show', () => window.show())
  window.webContents.setWindowOpenHandler(({ url }) => {
    openExternally(url)
    return { action: 'deny' }
  })
  window.webContents.on('will-navigate', (event, url) => {
    if (!sameDocument(url, pageUrl)) {
      event.preventDefault()
      openExternally(url)
    }
  })
  window.webContents.on('will-attach-webview', (event) => event.preventDefault())
  const stopEvents = forwardEvents(core, window.webContents)
  window.on('closed', () => {
    stopEvents()
    if (mainWindow === window) mainWindow = null
  })
  void window.loadURL(pageUrl)
  return window
}

function hardenSession(): void {
  const ses = session.defaultSession
  ses.setPermissionRequestHandler((_contents, _permission, callback) => callback(false))
  ses.setPermissionCheckHandler(() => false)
  ses.webRequest.onHeadersReceived((details, callback) => {
    callback({
      responseHeaders: {
        ...details.responseHeaders,
        'Content-Security-Policy': [contentSecurityPolicy],
      },
    })
  })
}

async function main(): Promise<void> {
  // Lets tests and portable setups keep data elsewhere; the default is Electron's userData.
  const dataDirOverride = process.env['CAIRN_DATA_DIR']
  if (dataDirOverride) app.setPath('userData', path.resolve(dataDirOverride))
  if (!app.requestSingleInstanceLock()) {
    app.quit()
    return
  }
  await app.whenReady()
  hardenSession()
  const dataDir = app.getPath('userData')
  const core = await createCore({
    dataDir,
    // The API key is encrypted by the OS keychain; on Linux without one, settings warn that
    // it falls back to plain text.
    secretStore: createFileSecretStore({
      file: path.join(dataDir, 'secrets.json'),
      cipher: cipherFromSafeStorage(safeStorage),
    }),
    appVersion: app.getVersion(),
    host: {
      async openPath(folder) {
        const error = await shell.openPath(folder)
        if (error) {
          throw new CairnError('open-failed', 'The system could not open the data folder.')
        }
      },
      async openExternal(url) {
        if (!isHttpsLink(url)) {
          throw new CairnError('invalid-link', 'Only https links can be opened.')
        }
        await shell.openExternal(url)
      },
    },
  })
  registerIpc(core, isTrustedFrame)
  mainWindow = createWindow(core)

  app.on('second-instance', () => {
    if (mainWindow) {
      if (mainWindow.isMinimized()) mainWindow.restore()
      mainWindow.focus()
    }
  })
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) mainWindow = createWindow(core)
  })
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit()
  })
  let closing = false
  app.on('before-quit', (event) => {
    if (closing) return
    closing = true
    event.preventDefault()
    void core.close().finally(() => app.quit())
  })
}

void main()
