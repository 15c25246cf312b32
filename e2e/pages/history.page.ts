import type { Locator, Page } from '@playwright/test'

/** The History tab: filters, the virtualized timeline, the selected change and restores. */
export class HistoryPage {
  readonly pane: Locator
  readonly timeline: Locator
  readonly rows: Locator
  readonly detail: Locator
  readonly notice: Locator
  readonly error: Locator
  readonly dialog: Locator
  readonly count: Locator
  /** "Showing 100 of 3,412 changed files", when a change is too large to send whole. */
  readonly filesShown: Locator

  constructor(readonly page: Page) {
    this.pane = page.getByRole('tabpanel', { name: 'History' })
    this.timeline = this.pane.getByRole('grid', { name: 'Commits' })
    this.rows = this.timeline.getByRole('row')
    this.detail = this.pane.getByRole('region', { name: 'Change details' })
    this.notice = this.pane.getByRole('status', { name: 'Result' })
    this.error = this.pane.getByRole('alert')
    this.dialog = page.getByRole('dialog')
    this.count = this.pane.getByRole('status', { name: 'Number of changes' })
    this.filesShown = this.detail.getByRole('note', { name: 'Files shown' })
  }

  async open(): Promise<void> {
    await this.page
      .getByRole('complementary', { name: 'Memory and history' })
      .getByRole('tab', { name: 'History' })
      .click()
  }

  /** The timeline rows whose text matches, newest first. */
  row(text: string | RegExp): Locator {
    return this.rows.filter({ hasText: text })
  }

  async select(row: Locator): Promise<void> {
    await row.click()
  }

  /** The diff of one file of the selected change (`notes.md`, relative to /memories). */
  fileDiff(file: string): Locator {
    return this.detail.getByRole('article', { name: `Diff of ${file}` })
  }

  diffTable(path: string): Locator {
    return this.detail.getByRole('table', { name: `Changes in ${path}` })
  }

  /** Loads the diff of a file whose text was left out of a large change. */
  async loadDiff(file: string): Promise<void> {
    await this.fileDiff(file).getByRole('button', { name: 'Load diff' }).click()
  }

  async showSideBySide(): Promise<void> {
    await this.detail.getByRole('button', { name: 'Side by side' }).click()
  }

  /** Clicks an action of the selected change and confirms it in the dialog. */
  async confirmAction(action: Locator, confirmLabel: string): Promise<void> {
    await action.click()
    await this.dialog.getByRole('button', { name: confirmLabel }).click()
  }

  async bringBack(file: string): Promise<void> {
    await this.confirmAction(
      this.fileDiff(file).getByRole('button', { name: 'Bring back this file' }),
      'Bring back',
    )
  }

  async revertSelected(): Promise<void> {
    await this.confirmAction(
      this.detail.getByRole('button', { name: 'Revert this change' }),
      'Revert change',
    )
  }

  async undoFromNotice(): Promise<void> {
    await this.notice.getByRole('button', { name: 'Undo' }).click()
  }

  async filterByAuthor(
    author: 'All authors' | 'Claude' | 'You' | 'Cairn (recovery, outside edits)',
  ): Promise<void> {
    await this.pane
      .getByRole('combobox', { name: 'Filter by author' })
      .selectOption({ label: author })
  }

  async filterByConversation(title: string): Promise<void> {
    await this.pane
      .getByRole('combobox', { name: 'Filter by conversation' })
      .selectOption({ label: title })
  }

  async filterByFile(path: string): Promise<void> {
    const input = this.pane.getByRole('combobox', { name: 'Filter by file' })
    await input.fill(path)
    await input.press('Enter')
  }
}
