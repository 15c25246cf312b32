import type { Locator, Page } from '@playwright/test'

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The Memory tab: the /memories tree, search, the open file and the user's edits. */
export class MemoryPage {
  readonly pane: Locator
  readonly tree: Locator
  readonly search: Locator
  readonly searchResults: Locator
  readonly notice: Locator
  readonly dialog: Locator

  constructor(readonly page: Page) {
    this.pane = page.getByRole('tabpanel', { name: 'Memory' })
    this.tree = this.pane.getByRole('tree', { name: 'Memory files' })
    this.search = this.pane.getByRole('searchbox', { name: 'Search memory files' })
    this.searchResults = this.pane.getByRole('region', { name: 'Search results' })
    this.notice = this.pane.getByRole('status', { name: 'Result' })
    this.dialog = page.getByRole('dialog')
  }

  async open(): Promise<void> {
    await this.page
      .getByRole('complementary', { name: 'Memory and history' })
      .getByRole('tab', { name: 'Memory' })
      .click()
  }

  /** A tree row by its file or folder name (`notes.md`). */
  item(name: string): Locator {
    return this.tree.getByRole('treeitem', { name: new RegExp(`^${escape(name)}, `) })
  }

  async openFile(name: string): Promise<void> {
    await this.item(name).click()
  }

  /** The open file's text (line view, rendered view or image). */
  content(name: string): Locator {
    return this.pane.getByRole('region', { name: `Content of ${name}` })
  }

  fileActions(): Locator {
    return this.pane.getByRole('toolbar', { name: 'File actions' })
  }

  editor(name: string): Locator {
    return this.pane.getByRole('textbox', { name: `Edit ${name}` })
  }

  /** Opens `name`, starts editing it and types `text` at its end (unsaved); its editor. */
  async typeAtEnd(name: string, text: string): Promise<Locator> {
    await this.openFile(name)
    await this.fileActions().getByRole('button', { name: 'Edit' }).click()
    const editor = this.editor(name)
    await editor.press('ControlOrMeta+End')
    await editor.pressSequentially(text)
    return editor
  }

  /** Opens the editor, replaces the text and saves with the keyboard shortcut. */
  async editAndSave(name: string, text: string): Promise<void> {
    await this.fileActions().getByRole('button', { name: 'Edit' }).click()
    await this.editor(name).fill(text)
    await this.editor(name).press('ControlOrMeta+s')
  }

  async createFile(path: string, content: string): Promise<void> {
    await this.pane.getByRole('button', { name: 'New file' }).click()
    await this.dialog.getByRole('textbox', { name: 'Path' }).fill(path)
    await this.dialog.getByRole('textbox', { name: 'Content' }).fill(content)
    await this.dialog.getByRole('button', { name: 'Create file' }).click()
  }

  async renameOpenFile(to: string): Promise<void> {
    await this.fileActions().getByRole('button', { name: 'Rename' }).click()
    await this.dialog.getByRole('textbox', { name: 'New path' }).fill(to)
    await this.dialog.getByRole('button', { name: 'Rename' }).click()
  }

  async showHistoryOfOpenFile(): Promise<void> {
    await this.fileActions().getByRole('button', { name: 'Show history' }).click()
  }

  async searchFor(query: string): Promise<void> {
    await this.search.fill(query)
  }
}
