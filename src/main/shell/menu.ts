import type { AppCommand } from '../../shared/types'

/** What a menu item may ask for: a command for the window, or one the shell carries out. */
export type MenuCommand = AppCommand | 'open-data-folder'

/** The standard roles Cairn's menus use (each one of Electron's `MenuItem` roles). */
export type MenuRole =
  | 'about'
  | 'services'
  | 'hide'
  | 'hideOthers'
  | 'unhide'
  | 'quit'
  | 'close'
  | 'undo'
  | 'redo'
  | 'cut'
  | 'copy'
  | 'paste'
  | 'pasteAndMatchStyle'
  | 'delete'
  | 'selectAll'
  | 'reload'
  | 'forceReload'
  | 'toggleDevTools'
  | 'resetZoom'
  | 'zoomIn'
  | 'zoomOut'
  | 'togglefullscreen'
  | 'windowMenu'
  | 'help'

/** A menu item as plain data, shaped like Electron's `MenuItemConstructorOptions`. */
export interface MenuItemSpec {
  readonly id?: string
  readonly label?: string
  readonly role?: MenuRole
  readonly type?: 'normal' | 'separator' | 'submenu'
  readonly accelerator?: string
  readonly enabled?: boolean
  readonly submenu?: MenuItemSpec[]
  readonly click?: () => void
}

export interface MenuOptions {
  readonly platform: NodeJS.Platform
  readonly appName: string
  /** Adds reload and the developer tools (an unpackaged build). */
  readonly development: boolean
  readonly run: (command: MenuCommand) => void
}

const separator: MenuItemSpec = { type: 'separator' }

/**
 * The application menu: the platform's standard roles (edit, zoom, window, quit…) and
 * Cairn's own commands with their keys. On macOS it follows the platform's layout: the app
 * menu holds About, Settings (⌘,), Services, Hide and Quit, and labels are in Title Case.
 */
export function buildApplicationMenu(options: MenuOptions): MenuItemSpec[] {
  const mac = options.platform === 'darwin'
  // macOS menus use Title Case; Windows and Linux desktops use sentence case.
  const label = (macLabel: string, otherLabel: string) => (mac ? macLabel : otherLabel)
  const item = (id: MenuCommand, text: string, accelerator: string | undefined): MenuItemSpec => ({
    id,
    label: text,
    ...(accelerator ? { accelerator } : {}),
    click: () => options.run(id),
  })

  const newChat = item('new-chat', label('New Chat', 'New chat'), 'CmdOrCtrl+N')
  const settings = item('open-settings', 'Settings…', 'CmdOrCtrl+,')
  const openDataFolder = item(
    'open-data-folder',
    label('Open Data Folder', 'Open data folder'),
    'CmdOrCtrl+Shift+O',
  )
  const showMemory = item('show-memory', label('Show Memory', 'Show memory'), 'CmdOrCtrl+1')
  const showHistory = item('show-history', label('Show History', 'Show history'), 'CmdOrCtrl+2')
  const showFullHistory = item(
    'show-full-history',
    label('Full History', 'Full history'),
    'CmdOrCtrl+Shift+H',
  )

  const appMenu: MenuItemSpec = {
    label: options.appName,
    submenu: [
      { role: 'about' },
      separator,
      settings,
      separator,
      { role: 'services' },
      separator,
      { role: 'hide' },
      { role: 'hideOthers' },
      { role: 'unhide' },
      separator,
      { role: 'quit' },
    ],
  }
  const fileMenu: MenuItemSpec = {
    label: mac ? 'File' : '&File',
    submenu: mac
      ? [newChat, separator, openDataFolder, separator, { role: 'close' }]
      : [newChat, separator, settings, openDataFolder, separator, { role: 'quit' }],
  }
  const editMenu: MenuItemSpec = {
    label: mac ? 'Edit' : '&Edit',
    submenu: [
      { role: 'undo' },
      { role: 'redo' },
      separator,
      { role: 'cut' },
      { role: 'copy' },
      { role: 'paste' },
      ...(mac ? [{ role: 'pasteAndMatchStyle' } as const] : []),
      { role: 'delete' },
      separator,
      { role: 'selectAll' },
    ],
  }
  const viewMenu: MenuItemSpec = {
    label: mac ? 'View' : '&View',
    submenu: [
      showMemory,
      showHistory,
      showFullHistory,
      separator,
      ...(options.development
        ? [
            { role: 'reload' } as const,
            { role: 'forceReload' } as const,
            { role: 'toggleDevTools' } as const,
            separator,
          ]
        : []),
      { role: 'resetZoom' },
      { role: 'zoomIn' },
      { role: 'zoomOut' },
      separator,
      { role: 'togglefullscreen' },
    ],
  }
  const windowMenu: MenuItemSpec = { role: 'windowMenu' }
  // About lives in the app menu on macOS; elsewhere it is Help's one item.
  const helpMenu: MenuItemSpec = { role: 'help', label: '&Help', submenu: [{ role: 'about' }] }
  return mac
    ? [appMenu, fileMenu, editMenu, viewMenu, windowMenu]
    : [fileMenu, editMenu, viewMenu, windowMenu, helpMenu]
}

/** What a right click hit (the parts of Electron's `ContextMenuParams` used here). */
export interface ContextMenuFacts {
  readonly isEditable: boolean
  readonly selectionText: string
  readonly misspelledWord: string
  readonly dictionarySuggestions: ReadonlyArray<string>
  readonly editFlags: {
    readonly canCut: boolean
    readonly canCopy: boolean
    readonly canPaste: boolean
    readonly canSelectAll: boolean
  }
}

/**
 * The right-click menu: spelling suggestions (where the spellchecker runs), then cut, copy,
 * paste and select all as they apply. Empty when there is nothing to offer.
 */
export function buildContextMenu(
  facts: ContextMenuFacts,
  actions: { readonly replaceMisspelling: (word: string) => void },
): MenuItemSpec[] {
  const items: MenuItemSpec[] = []
  if (facts.misspelledWord !== '') {
    const suggestions = facts.dictionarySuggestions.slice(0, 5)
    for (const word of suggestions) {
      items.push({ label: word, click: () => actions.replaceMisspelling(word) })
    }
    if (suggestions.length === 0) items.push({ label: 'No suggestions', enabled: false })
    items.push(separator)
  }
  if (facts.isEditable) {
    items.push(
      { role: 'cut', enabled: facts.editFlags.canCut },
      { role: 'copy', enabled: facts.editFlags.canCopy },
      { role: 'paste', enabled: facts.editFlags.canPaste },
      separator,
      { role: 'selectAll', enabled: facts.editFlags.canSelectAll },
    )
  } else if (facts.selectionText.trim() !== '') {
    items.push({ role: 'copy', enabled: facts.editFlags.canCopy })
  }
  return items.at(-1) === separator ? items.slice(0, -1) : items
}
