import {
  app,
  BrowserWindow,
  dialog,
  Menu,
  nativeTheme,
  protocol,
  safeStorage,
  screen,
  session,
  shell,
  type Session,
  type WebContents,
  type WebFrameMain,
} from 'electron'
import { stat } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createCore, createLogSecrets, prepareDataDir, type Core } from './core'
import { forwardEvents, registerIpc, sendEvent } from './ipc'
import { CairnError } from './lib/errors'
import { createHidingLogger } from './lib/hiding-logger'
import { consoleLogger } from './lib/logger'
import { cipherFromSafeStorage, createFileSecretStore, readPinnedTheme } from './settings'
import type { OpeningProgress, OpeningUpdate } from '../shared/types'
import {
  APP_PAGE_URL,
  APP_SCHEME,
  buildApplicationMenu,
  buildContextMenu,
  contentSecurityPolicy,
  debuggingRefusal,
  debuggingSwitches,
  createAppProtocolHandler,
  describeStartupFailure,
  isAppPage,
  isHttpsLink,
  placeWindow,
  readWindowState,
  saveWindowStateSync,
  StartupError,
  startupFailureDialog,
  DISCARD_RESPONSE,
  unsavedChangesDialog,
  type MenuCommand,
} from './shell'

// The Electron shell: lifecycle, the window, the menu and the app:// scheme. Everything the
// app does lives in the core; the helpers in ./shell are plain functions tested in Node.

const here = path.dirname(fileURLToPath(import.meta.url))
const rendererDir = path.join(here, '../renderer')
const preloadFile = path.join(here, '../preload/index.cjs')
// Packaged, resources/ sits unpacked beside app.asar: the window icon is read by native code.
const iconFile = path
  .join(here, '../../resources/icon.png')
  .replace(`app.asar${path.sep}`, `app.asar.unpacked${path.sep}`)
const isMac = process.platform === 'darwin'
const devServerUrl = app.isPackaged ? undefined : process.env['ELECTRON_RENDERER_URL']
const pageUrl = devServerUrl ?? APP_PAGE_URL
const defaultSize = { width: 1280, height: 820 }
/** The least size of the app's window, where the display has room for it. */
const leastSize = { width: 880, height: 560 }
/** The small window a quit shows while it waits for the memory to open (centred). */
const closingSize = { width: 520, height: 360 }
/** The page's background (`--bg` in styles.css) in each pinned theme: the window's, before it paints. */
const THEME_BACKGROUNDS = { light: '#ffffff', dark: '#1e1e1c' } as const
// The shell's own log lines hide the secrets the core learns (the API key, the sync token),
// as the core's do: a failed start's error may carry either.
const logSecrets = createLogSecrets()
const log = createHidingLogger(consoleLogger, logSecrets.hide)
/** A hung close must not make Cairn impossible to quit; a commit takes far less. */
const quitDeadlineMs = 60_000

// An installed Cairn never starts with a debugger's door open (the DevTools protocol would
// reach everything the window can): it says why and exits before anything opens.
const debugging = app.isPackaged ? debuggingSwitches(process.argv.slice(1)) : []
if (debugging.length > 0) {
  const { title, content } = debuggingRefusal(debugging)
  dialog.showErrorBox(title, content)
  app.exit(1)
}

// Before `ready`: the UI's scheme is a secure, standard origin, and every renderer is sandboxed.
protocol.registerSchemesAsPrivileged([
  {
    scheme: APP_SCHEME,
    privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true },
  },
])
app.enableSandbox()
if (process.platform === 'win32') app.setAppUserModelId('app.cairn.desktop')

// Tests and development may keep data elsewhere; an installed Cairn always uses userData, so
// a variable in the environment cannot point it at another folder.
const dataDirOverride = app.isPackaged ? undefined : process.env['CAIRN_DATA_DIR']
let dataDir = dataDirOverride ? path.resolve(dataDirOverride) : ''
// Even this can fail (a path Electron refuses); main() then reports it like any failed start.
let earlyFailure: unknown = null
try {
  if (dataDirOverride) app.setPath('userData', dataDir)
  dataDir = app.getPath('userData')
} catch (error) {
  earlyFailure = error
}

let core: Core | null = null
// While the core opens: how far it is (the window's opening screen), and the open itself (a
// quit meanwhile waits for it, then closes what it opened). Null before and after.
let opening: OpeningUpdate | null = null
let coreOpening: Promise<Core> | null = null
let mainWindow: BrowserWindow | null = null
// The memory file whose editor holds unsaved text, as the page last said (null: none).
let unsavedPath: string | null = null
// A quit asked about that text and the person chose Discard.
let unsavedDiscarded = false
// A start that failed is telling the person why; it exits by itself (failStartup).
let failing = false
// The theme Settings pin now (null: the system's): read from the file when the app window is
// made, then followed as Settings change it (see followTheme).
let pinnedTheme: Awaited<ReturnType<typeof readPinnedTheme>> = null
// main() is starting: a quit now waits until the start can stop cleanly (before the window is
// made, or once the open it began is done), see before-quit.
let starting = false

/** The window's own colour before its page paints: the pinned theme's, else the system's. */
function windowBackground(): string {
  return THEME_BACKGROUNDS[pinnedTheme ?? (nativeTheme.shouldUseDarkColors ? 'dark' : 'light')]
}

/** Every window's background follows the theme: a reload then starts in it, not the old one. */
function paintBackgrounds(): void {
  const colour = windowBackground()
  for (const window of BrowserWindow.getAllWindows()) window.setBackgroundColor(colour)
}

// Every web contents, present or future, gets the same locks.
app.on('web-contents-created', (_event, contents) => hardenContents(contents))

function openExternally(url: string): void {
  if (isHttpsLink(url)) void shell.openExternal(url)
}

function hardenContents(contents: WebContents): void {
  contents.setWindowOpenHandler(({ url }) => {
    openExternally(url)
    return { action: 'deny' }
  })
  contents.on('will-navigate', (details) => {
    if (isAppPage(details.url, pageUrl)) return
    details.preventDefault()
    openExternally(details.url)
  })
  contents.on('will-redirect', (details) => {
    if (!isAppPage(details.url, pageUrl)) details.preventDefault()
  })
  contents.on('will-attach-webview', (event) => event.preventDefault())
  contents.on('context-menu', (_event, params) => {
    const template = buildContextMenu(params, {
      replaceMisspelling: (word) => contents.replaceMisspelling(word),
    })
    if (template.length > 0) Menu.buildFromTemplate(template).popup()
  })
}

function hardenSession(ses: Session): void {
  ses.setPermissionRequestHandler((_contents, _permission, callback) => callback(false))
  ses.setPermissionCheckHandler(() => false)
  ses.setDevicePermissionHandler(() => false)
  ses.setDisplayMediaRequestHandler((_request, callback) => callback(null))
  ses.setSpellCheckerEnabled(isMac)
  // The dev server's pages get the (looser) development policy; app:// sends its own.
  if (devServerUrl) {
    const policy = contentSecurityPolicy({ devServer: true })
    ses.webRequest.onHeadersReceived(
      { urls: [`${new URL(devServerUrl).origin}/*`] },
      (details, callback) =>
        callback({
          responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [policy] },
        }),
    )
  }
}

/** Requests count only from our window's top-level frame showing our page. */
function isTrustedFrame(frame: WebFrameMain | null): boolean {
  const window = mainWindow
  if (!frame || !window || window.isDestroyed()) return false
  const mainFrame = window.webContents.mainFrame
  if (frame.parent !== null) return false
  if (frame.processId !== mainFrame.processId || frame.routingId !== mainFrame.routingId) {
    return false
  }
  return isAppPage(frame.url, pageUrl)
}

/**
 * Opens the window. It need not wait for the core: before the memory is open its page shows
 * the opening (what is being done and how far), and the app once `app:ready` comes.
 * `closing`: the small window of a quit that waits for the open (see `window-all-closed`), its
 * page the same opening screen, saying Cairn closes once the memory is open; its place is not
 * remembered.
 */
async function createWindow(
  closing = false,
  made: () => void = () => undefined,
): Promise<BrowserWindow | null> {
  const stateFile = path.join(dataDir, 'window-state.json')
  const placement = closing
    ? { bounds: closingSize, maximized: false, least: closingSize }
    : placeWindow(
        await readWindowState(stateFile),
        screen.getAllDisplays().map((display) => display.workArea),
        screen.getPrimaryDisplay().workArea,
        defaultSize,
        leastSize,
      )
  // A theme pinned in Settings holds from the first frame: the opening screen comes before the
  // core (and so the settings) is open. The page reads it from its address (`?theme=`).
  // The small closing window takes the one read for the app window (it comes only while the
  // memory opens, before Settings can change it), so it is made at once, with nothing to wait
  // for: a quit whose open ends meanwhile would go on without it, and it would come after.
  if (!closing) pinnedTheme = await readPinnedTheme(dataDir).catch(() => null)
  const theme = pinnedTheme
  // A quit while the start read these (no window yet, nothing opening): no window comes.
  if (!closing && starting && quitting !== 'no') return null
  const window = new BrowserWindow({
    ...placement.bounds,
    backgroundColor: windowBackground(),
    // Never more than the display's work area: Electron grows a window to its least size, and
    // one larger than a small screen would hang off it, its foot out of reach.
    ...(closing
      ? { resizable: false }
      : { minWidth: placement.least.width, minHeight: placement.least.height }),
    show: false,
    title: 'Cairn',
    autoHideMenuBar: true,
    ...(process.platform === 'linux' ? { icon: iconFile } : {}),
    // Spelled out here, not built elsewhere, so a reader and the static scan see them all.
    webPreferences: {
      preload: preloadFile,
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
      safeDialogs: true,
      // A middle click would otherwise ask for a new window (refused anyway, see below).
      disableBlinkFeatures: 'Auxclick',
      // Windows and Linux spellcheck with Hunspell dictionaries downloaded from Google's
      // servers; macOS uses the system's own spellchecker and downloads nothing.
      spellcheck: isMac,
    },
  })
  window.once('ready-to-show', () => {
    if (placement.maximized) window.maximize()
    window.show()
  })
  window.on('close', () => {
    if (closing) return
    try {
      saveWindowStateSync(stateFile, {
        bounds: window.getNormalBounds(),
        maximized: window.isMaximized(),
      })
    } catch (error) {
      log.warn('could not remember the window position', error)
    }
  })
  // The page refuses its unload while the editor holds unsaved text (its `beforeunload`):
  // Electron then cancels the close or reload silently, so the person is asked here. Only a
  // Discard lets it go on (`preventDefault` ignores the page's refusal).
  // A quit already asked and was told Discard: its closing of the window does not ask again.
  window.webContents.on('will-prevent-unload', (event) => {
    if (!unsavedDiscarded) {
      const choice = dialog.showMessageBoxSync(window, unsavedChangesDialog(unsavedPath))
      if (choice !== DISCARD_RESPONSE) return
    }
    unsavedPath = null
    event.preventDefault()
  })
  window.webContents.on('render-process-gone', (_event, details) => {
    if (details.reason === 'clean-exit' || window.isDestroyed()) return
    void recoverWindow(window, details.reason)
  })
  if (core) followCore(window, core)
  window.on('closed', () => {
    unsavedPath = null
    if (mainWindow === window) mainWindow = null
  })
  mainWindow = window
  made()
  try {
    await window.loadURL(theme ? `${pageUrl}?theme=${theme}` : pageUrl)
  } catch {
    // Closed by the person before its page loaded (Electron fails the load then): that is a
    // close, not a damaged install. A quit follows, or on macOS Cairn keeps running.
    if (window.isDestroyed()) return window
    throw new StartupError(
      devServerUrl
        ? 'The window could not load its page from the development server. Is `npm run dev` still running?'
        : 'The window could not load Cairn’s own files, so the installation may be damaged. Installing Cairn again repairs it.',
    )
  }
  return window
}

/** The core's events reach this window's page, until it closes. */
function followCore(window: BrowserWindow, appCore: Core): void {
  const stopEvents = forwardEvents(appCore, window.webContents)
  window.once('closed', stopEvents)
}

/** The windows' background follows the theme Settings switch to (once the core is open). */
function followTheme(appCore: Core): void {
  appCore.events.on((name, data) => {
    if (name !== 'settings:changed') return
    const { theme } = data as { readonly theme: 'system' | 'light' | 'dark' }
    const pinned = theme === 'system' ? null : theme
    if (pinned === pinnedTheme) return
    pinnedTheme = pinned
    paintBackgrounds()
  })
}

/** How far the opening is reaches the window (and a window opened later asks for it). */
function tellOpening(update: OpeningUpdate): void {
  opening = update
  if (mainWindow && !mainWindow.isDestroyed()) {
    sendEvent(mainWindow.webContents, 'app:opening', update)
  }
}

/**
 * The page's process died (a crash, the system reclaiming memory). Before the window was
 * ever shown that is a failed start; afterwards the person is told and can reload, since
 * everything lives in main and nothing was lost with the page.
 */
async function recoverWindow(window: BrowserWindow, reason: string): Promise<void> {
  log.error(`the window's page stopped: ${reason}`)
  if (!window.isVisible()) {
    await failStartup(new StartupError('The window stopped while it was opening.'))
    return
  }
  const { response } = await dialog.showMessageBox(window, {
    type: 'error',
    message: 'Cairn’s window stopped unexpectedly',
    detail:
      'Your chats and memory are kept by Cairn itself, not by the window, so nothing was lost. Reload the window to go on.',
    buttons: ['Reload', 'Quit'],
    defaultId: 0,
    cancelId: 1,
    noLink: true,
  })
  if (window.isDestroyed()) return
  if (response === 0) window.reload()
  else app.quit()
}

/** Brings the window back (creating it on macOS, where closing it keeps Cairn running). */
async function revealWindow(): Promise<BrowserWindow | null> {
  // A failed start closed its window and is saying why: a new one would wait for ever.
  if (failing) return null
  // The quit went on: Cairn is ending, and a window now would be left behind.
  if (quitting === 'done') return null
  if (mainWindow && !mainWindow.isDestroyed()) {
    if (mainWindow.isMinimized()) mainWindow.restore()
    mainWindow.show()
    mainWindow.focus()
    return mainWindow
  }
  // A quit that waits for the open: what comes up is the small window saying Cairn closes
  // (the one being made), never the app half-way through the quit, to be closed under the
  // person's hands. One the person closed is not brought back, as after a close.
  if (quitting !== 'no' && !core) {
    const closing = await showClosingWindow()
    if (!closing || closing.isDestroyed()) return null
    closing.show()
    closing.focus()
    return closing
  }
  // While the core opens too: the new window shows how far the opening is.
  if (!core && !opening) return null
  try {
    return await createWindow()
  } catch (error) {
    await failStartup(error)
    return null
  }
}

async function openFolder(folder: string): Promise<void> {
  const error = await shell.openPath(folder)
  if (error) throw new CairnError('open-failed', 'The system could not open the data folder.')
}

/** The nearest folder that exists at or above `folder` (what a failed start can still show). */
async function nearestFolder(folder: string): Promise<string> {
  let current = path.resolve(folder)
  for (;;) {
    const info = await stat(current).catch(() => null)
    const parent = path.dirname(current)
    if (info?.isDirectory() || parent === current) return current
    current = parent
  }
}

/** The menu works from the start: while the memory opens, its app commands only show the window. */
function installMenu(): void {
  const run = (command: MenuCommand) => {
    if (command === 'open-data-folder') {
      void openFolder(dataDir).catch(async (error) => {
        log.error('could not open the data folder', error)
        await dialog.showMessageBox({
          type: 'warning',
          message: 'The data folder could not be opened',
          detail: `The system could not show this folder: ${dataDir}`,
          buttons: ['OK'],
          noLink: true,
        })
      })
      return
    }
    const hadWindow = mainWindow !== null && !mainWindow.isDestroyed()
    void revealWindow().then((window) => {
      // A window opened just now starts on a new chat; for anything else it needs the command.
      // While the memory opens there is no app yet to carry one out: showing the window is all.
      if (core && window && (hadWindow || command !== 'new-chat')) {
        core.events.emit('app:command', { command })
      }
    })
  }
  const template = buildApplicationMenu({
    platform: process.platform,
    appName: app.name,
    development: !app.isPackaged,
    run,
  })
  Menu.setApplicationMenu(Menu.buildFromTemplate(template))
}

/**
 * A start that failed says why in a native dialog, with the data folder's path and a way to
 * open it, then quits. Nothing fails silently, and the process never lingers without a window.
 */
async function failStartup(error: unknown): Promise<void> {
  log.error('Cairn could not start:', error)
  if (failing) return
  failing = true
  for (const window of BrowserWindow.getAllWindows()) window.destroy()
  mainWindow = null
  await app.whenReady()
  const reason = describeStartupFailure(error)
  const { response } = await dialog.showMessageBox(startupFailureDialog(reason, dataDir))
  if (response === 0) {
    await shell.openPath(await nearestFolder(dataDir)).catch(() => undefined)
  }
  // An open still running (the window failed first) is waited for, and what it opened closed:
  // its lock released, nothing left half done.
  const opened = core ?? (await coreOpening?.catch(() => null)) ?? null
  core = null
  opening = null
  await withinDeadline(opened?.close()).catch((closeError) => log.error('close failed', closeError))
  app.exit(1)
}

let quitting: 'no' | 'closing' | 'done' = 'no'
/** The small window of a quit waiting for the open, once asked for (at most once). */
let closingWindow: Promise<BrowserWindow | null> | null = null

/** The small window saying Cairn closes once the memory is open (made on the first call). */
function showClosingWindow(): Promise<BrowserWindow | null> {
  // Nothing opens yet (a quit during the start): the start stops before any window.
  if (quitting === 'done' || !coreOpening) return Promise.resolve(null)
  closingWindow ??= createWindow(true).catch((error: unknown) => {
    log.error('could not show that Cairn is closing', error)
    return null
  })
  return closingWindow
}

// Quitting waits until the core has closed: a memory command that is being committed right now
// finishes and lands in history first. Every quit asked for meanwhile waits too.
// Electron emits before-quit before it closes the windows, so unsaved editor text is asked about
// here, before anything closes: Keep editing cancels the quit with the core still open.
// A quit while the memory opens waits for the open (a rebuild of the index is not cut short,
// so nothing is left for the next start to recover), then closes the core: its lock is
// released. The window, if still open, says Cairn closes once the memory is open.
app.on('before-quit', (event) => {
  // A failed start ends by itself (app.exit) once what it opened is closed; a quit meanwhile
  // (the Dock, a logout) would end the process in the middle of that open, the lock held.
  if (failing) {
    event.preventDefault()
    return
  }
  if (quitting === 'done') return
  if (!core && !coreOpening) {
    // In the moments before the window is made (nothing opens yet), the start stops at its
    // next step instead (no window, no open) and quits then (stopStart); after it, nothing holds.
    if (!starting) return
    event.preventDefault()
    quitting = 'closing'
    return
  }
  event.preventDefault()
  if (quitting === 'closing') return
  if (!core && coreOpening) {
    quitting = 'closing'
    if (opening) tellOpening({ ...opening, closing: true })
    const waited = coreOpening
    void waited.then(
      (opened) => closeAndQuit(opened),
      // A failed open shows its dialog and exits by itself (failStartup).
      () => undefined,
    )
    return
  }
  if (!core) return
  if (unsavedPath !== null && !unsavedDiscarded) {
    const window = mainWindow && !mainWindow.isDestroyed() ? mainWindow : null
    const question = unsavedChangesDialog(unsavedPath)
    const choice = window
      ? dialog.showMessageBoxSync(window, question)
      : dialog.showMessageBoxSync(question)
    if (choice !== DISCARD_RESPONSE) return
    unsavedDiscarded = true
  }
  quitting = 'closing'
  void closeAndQuit(core)
})

/** Waits for a close, or until the quit deadline: a hung close must not keep Cairn running. */
async function withinDeadline(closing: Promise<void> | undefined): Promise<void> {
  let deadline: NodeJS.Timeout | undefined
  const overdue = new Promise<void>((resolve) => {
    deadline = setTimeout(() => {
      log.error('closing took too long; quitting anyway')
      resolve()
    }, quitDeadlineMs)
    deadline.unref()
  })
  try {
    await Promise.race([closing, overdue])
  } finally {
    clearTimeout(deadline)
  }
}

/** Closes the core (a running commit lands first), within the deadline, then quits. */
async function closeAndQuit(closing: Core): Promise<void> {
  await withinDeadline(closing.close())
    .catch((error) => log.error('close failed', error))
    .finally(() => {
      quitting = 'done'
      core = null
      opening = null
      app.quit()
    })
}

app.on('window-all-closed', () => {
  // A failed start closes its window itself and quits after its dialog.
  if (failing) return
  // macOS keeps an app running without windows; the Dock or the menu brings one back.
  if (isMac) return
  const quitAlready = quitting !== 'no'
  app.quit()
  // Closed while the memory opens: the quit waits for the open (a rebuild of the index is not
  // cut short), which can take minutes. A small window says so meanwhile, so Cairn is never at
  // work unseen. Closed too, it is not brought back: the quit goes on as before, unseen. So is
  // a window closed after a quit (the menu's) had it say so already: the person was told.
  if (!quitAlready && quitting === 'closing' && !core && !closingWindow) void showClosingWindow()
})

/** The system's save dialog, over the window when there is one (export). */
async function chooseSavePath(options: {
  readonly title: string
  readonly defaultName: string
  readonly filters: ReadonlyArray<{
    readonly name: string
    readonly extensions: ReadonlyArray<string>
  }>
}): Promise<string | null> {
  const settings = {
    title: options.title,
    defaultPath: path.join(app.getPath('documents'), options.defaultName),
    filters: options.filters.map((f) => ({ name: f.name, extensions: [...f.extensions] })),
  }
  const result =
    mainWindow && !mainWindow.isDestroyed()
      ? await dialog.showSaveDialog(mainWindow, settings)
      : await dialog.showSaveDialog(settings)
  return result.canceled || !result.filePath ? null : result.filePath
}

/** The system's open dialog for a file or a folder (import). */
async function chooseOpenPath(options: {
  readonly title: string
  readonly kind: 'file' | 'folder'
  readonly filters?: ReadonlyArray<{
    readonly name: string
    readonly extensions: ReadonlyArray<string>
  }>
}): Promise<string | null> {
  const settings = {
    title: options.title,
    properties: [options.kind === 'folder' ? ('openDirectory' as const) : ('openFile' as const)],
    filters: options.filters?.map((f) => ({ name: f.name, extensions: [...f.extensions] })),
  }
  const result =
    mainWindow && !mainWindow.isDestroyed()
      ? await dialog.showOpenDialog(mainWindow, settings)
      : await dialog.showOpenDialog(settings)
  return result.canceled ? null : (result.filePaths[0] ?? null)
}

async function main(): Promise<void> {
  if (!app.requestSingleInstanceLock()) {
    // Another Cairn runs with this data folder: it brings its window forward (below).
    app.quit()
    return
  }
  starting = true
  app.on('second-instance', () => void revealWindow())
  app.on('activate', () => {
    if (BrowserWindow.getAllWindows().length === 0) void revealWindow()
  })
  await app.whenReady()
  if (earlyFailure) {
    await failStartup(earlyFailure)
    return
  }
  if (quitting !== 'no') return stopStart()
  // With the system's theme, the windows' background follows the system's switch too.
  nativeTheme.on('updated', () => {
    if (pinnedTheme === null) paintBackgrounds()
  })
  app.setAboutPanelOptions({
    applicationName: 'Cairn',
    applicationVersion: app.getVersion(),
    ...(process.platform === 'linux' ? { iconPath: iconFile } : {}),
  })
  try {
    hardenSession(session.defaultSession)
    protocol.handle(APP_SCHEME, createAppProtocolHandler({ rendererDir }))
    // Its real path: the secret stores below write there too.
    dataDir = await prepareDataDir(dataDir)
    if (quitting !== 'no') return stopStart()
    // The window comes first: opening the memory can take long (a rebuild of the index walks
    // every commit), and its page shows what is being done meanwhile instead of nothing.
    opening = { progress: { step: 'checking', done: 0, total: null }, closing: false }
    registerIpc({ core: () => core, opening: () => opening }, isTrustedFrame)
    installMenu()
    // The open starts once the window is there (its page loads meanwhile), so every report of
    // how far it is reaches the window; the window's failure (its page would not load) is a
    // failed start too.
    await createWindow(false, () => {
      coreOpening = openCore()
      coreOpening.catch(() => undefined)
      // From here a quit waits for the open, as before-quit says.
      starting = false
    })
    // No window: a quit came while it was being made (createWindow throws on a failure).
    if (!coreOpening) return stopStart()
    const opened = await coreOpening
    // A quit meanwhile closes it (before-quit waits for the open); nothing more starts. A
    // failure told meanwhile (the page's process gone) closes it too.
    if (quitting !== 'no' || failing) return
    core = opened
    opening = null
    followTheme(opened)
    if (mainWindow && !mainWindow.isDestroyed()) {
      followCore(mainWindow, opened)
      sendEvent(mainWindow.webContents, 'app:ready', { state: 'ready' })
    }
  } catch (error) {
    await failStartup(error)
  }
}

/** A quit during the start, before anything opened: the start ends here and the quit goes on. */
function stopStart(): void {
  starting = false
  opening = null
  quitting = 'done'
  app.quit()
}

/** Opens the core, telling the window how far the opening is. */
function openCore(): Promise<Core> {
  return createCore({
    dataDir,
    logSecrets,
    // The API key is encrypted by the OS keychain; on Linux without one, settings warn that
    // it falls back to plain text.
    secretStore: createFileSecretStore({
      file: path.join(dataDir, 'secrets.json'),
      cipher: cipherFromSafeStorage(safeStorage),
    }),
    // The sync remote's token is kept the same way, in its own file.
    syncTokenStore: createFileSecretStore({
      file: path.join(dataDir, 'sync-token.json'),
      cipher: cipherFromSafeStorage(safeStorage),
    }),
    appVersion: app.getVersion(),
    host: {
      openPath: openFolder,
      async openExternal(url) {
        if (!isHttpsLink(url)) {
          throw new CairnError('invalid-link', 'Only https links can be opened.')
        }
        await shell.openExternal(url)
      },
      chooseSavePath: chooseSavePath,
      chooseOpenPath: chooseOpenPath,
      noteUnsaved(path) {
        unsavedPath = path
      },
    },
    onProgress: (progress: OpeningProgress) =>
      tellOpening({ progress, closing: quitting !== 'no' }),
  })
}

if (debugging.length === 0) void main().catch((error: unknown) => failStartup(error))
