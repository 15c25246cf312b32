import { describe, expect, it } from 'vitest'
import { buildApplicationMenu, buildContextMenu, type MenuCommand, type MenuItemSpec } from './menu'

function flatten(items: ReadonlyArray<MenuItemSpec>): MenuItemSpec[] {
  return items.flatMap((item) => [item, ...flatten(item.submenu ?? [])])
}

function menu(platform: NodeJS.Platform, development = false) {
  const ran: MenuCommand[] = []
  const template = buildApplicationMenu({
    platform,
    appName: 'Cairn',
    development,
    run: (command) => ran.push(command),
  })
  return { template, items: flatten(template), ran }
}

describe('the application menu', () => {
  it('follows macOS: an app menu with About, Settings (⌘,), Services, Hide and Quit', () => {
    const { template, items } = menu('darwin')
    expect(template.map((item) => item.label ?? item.role)).toEqual([
      'Cairn',
      'File',
      'Edit',
      'View',
      'windowMenu',
    ])
    const appMenu = template[0]!.submenu!.map((item) => item.role ?? item.label ?? item.type)
    expect(appMenu).toEqual([
      'about',
      'separator',
      'Settings…',
      'separator',
      'services',
      'separator',
      'hide',
      'hideOthers',
      'unhide',
      'separator',
      'quit',
    ])
    expect(items.find((item) => item.id === 'new-chat')?.label).toBe('New Chat')
    expect(items.find((item) => item.id === 'show-history')?.label).toBe('Show History')
    expect(items.filter((item) => item.role === 'quit')).toHaveLength(1)
    expect(items.some((item) => item.role === 'pasteAndMatchStyle')).toBe(true)
  })

  it('on Windows and Linux: File holds Settings and Quit, Help holds About, labels in sentence case', () => {
    for (const platform of ['linux', 'win32'] as const) {
      const { template } = menu(platform)
      expect(template.map((item) => item.label ?? item.role)).toEqual([
        '&File',
        '&Edit',
        '&View',
        'windowMenu',
        '&Help',
      ])
      const file = template[0]!.submenu!.map((item) => item.id ?? item.role ?? item.type)
      expect(file).toEqual([
        'new-chat',
        'separator',
        'open-settings',
        'open-data-folder',
        'separator',
        'quit',
      ])
      expect(template[4]!.submenu!.map((item) => item.role)).toEqual(['about'])
    }
  })

  it('runs each of Cairn’s items through one callback, with the same keys everywhere', () => {
    for (const platform of ['darwin', 'linux', 'win32'] as const) {
      const { items, ran } = menu(platform)
      const ours = items.filter((item) => item.id !== undefined)
      expect(Object.fromEntries(ours.map((item) => [item.id, item.accelerator]))).toEqual({
        'new-chat': 'CmdOrCtrl+N',
        'open-settings': 'CmdOrCtrl+,',
        'open-data-folder': 'CmdOrCtrl+Shift+O',
        'show-memory': 'CmdOrCtrl+1',
        'show-history': 'CmdOrCtrl+2',
        'show-full-history': 'CmdOrCtrl+Shift+H',
      })
      for (const item of ours) item.click!()
      expect(new Set(ran)).toEqual(
        new Set([
          'new-chat',
          'open-settings',
          'open-data-folder',
          'show-memory',
          'show-history',
          'show-full-history',
        ]),
      )
    }
  })

  it('offers reload and the developer tools only in development', () => {
    const roles = (development: boolean) =>
      menu('linux', development).items.map((item) => item.role)
    expect(roles(true)).toEqual(expect.arrayContaining(['reload', 'toggleDevTools']))
    expect(roles(false)).not.toContain('toggleDevTools')
    expect(roles(false)).not.toContain('reload')
  })
})

describe('the context menu', () => {
  const facts = {
    isEditable: false,
    selectionText: '',
    misspelledWord: '',
    dictionarySuggestions: [],
    editFlags: { canCut: false, canCopy: false, canPaste: false, canSelectAll: false },
  }
  const none = { replaceMisspelling: () => undefined }

  it('is empty where there is nothing to do', () => {
    expect(buildContextMenu(facts, none)).toEqual([])
  })

  it('offers Copy for selected text and the edit roles in a text field', () => {
    expect(
      buildContextMenu(
        { ...facts, selectionText: 'hi', editFlags: { ...facts.editFlags, canCopy: true } },
        none,
      ),
    ).toEqual([{ role: 'copy', enabled: true }])
    const field = buildContextMenu({ ...facts, isEditable: true }, none)
    expect(field.map((item) => item.role ?? item.type)).toEqual([
      'cut',
      'copy',
      'paste',
      'separator',
      'selectAll',
    ])
  })

  it('puts spelling suggestions first and replaces the word with the chosen one', () => {
    const replaced: string[] = []
    const items = buildContextMenu(
      {
        ...facts,
        isEditable: true,
        misspelledWord: 'teh',
        dictionarySuggestions: ['the', 'ten'],
      },
      { replaceMisspelling: (word) => replaced.push(word) },
    )
    expect(items.slice(0, 3).map((item) => item.label ?? item.type)).toEqual([
      'the',
      'ten',
      'separator',
    ])
    items[1]!.click!()
    expect(replaced).toEqual(['ten'])
  })
})
