import type { Locator, Page } from '@playwright/test'

/** The opening screen the window shows while main opens the memory. */
export class OpeningPage {
  readonly screen: Locator
  readonly step: Locator
  readonly bar: Locator
  readonly closingNote: Locator
  readonly heading: Locator

  constructor(readonly page: Page) {
    // Named by its heading: "Opening your memory…", or "Closing…" once a quit waits for it.
    this.screen = page.getByRole('main', { name: /^(Opening your memory|Closing)…$/ })
    this.step = this.screen.getByRole('status', { name: 'Opening' })
    this.bar = this.screen.getByRole('progressbar')
    this.closingNote = this.screen.getByRole('note')
    this.heading = this.screen.getByRole('heading', { level: 1 })
  }
}
