import type { Locator, Page } from '@playwright/test'

/** The full history view: the timeline as a left column, the selected change beside it. */
export class FullHistoryPage {
  readonly view: Locator
  readonly timeline: Locator
  readonly rows: Locator
  readonly detail: Locator
  readonly search: Locator
  readonly hits: Locator
  readonly searchProgress: Locator

  constructor(readonly page: Page) {
    this.view = page.getByRole('region', { name: 'Full history' })
    this.timeline = this.view.getByRole('grid', { name: 'Commits' })
    this.rows = this.timeline.getByRole('row')
    this.detail = this.view.getByRole('region', { name: 'Change details' })
    this.search = this.view.getByRole('searchbox', { name: 'Find text in history' })
    this.hits = this.view.getByRole('listbox', { name: 'Changes that add or remove the text' })
    this.searchProgress = this.view.getByRole('status', { name: 'Search progress' })
  }

  /** Opens the view with its keyboard shortcut. */
  async openWithKeyboard(): Promise<void> {
    await this.page.keyboard.press('ControlOrMeta+Shift+H')
  }

  row(text: string | RegExp): Locator {
    return this.rows.filter({ hasText: text })
  }

  /** The sentence heading the selected change. */
  title(): Locator {
    return this.detail.getByRole('heading', { level: 2 })
  }

  async showAs(mode: 'Unified' | 'Side by side' | 'Blame'): Promise<void> {
    await this.detail.getByRole('button', { name: mode, exact: true }).click()
  }

  diffTable(path: string): Locator {
    return this.detail.getByRole('table', { name: `Changes in ${path}` })
  }

  blame(path: string): Locator {
    return this.detail.getByRole('table', { name: `Line history of ${path}` })
  }

  async find(text: string): Promise<void> {
    await this.search.fill(text)
    await this.search.press('Enter')
  }
}
