import type { Locator, Page } from '@playwright/test'

/** The opening screen the window shows while main opens the memory. */
export class OpeningPage {
  readonly screen: Locator
  readonly step: Locator
  readonly bar: Locator
  readonly closingNote: Locator

  constructor(readonly page: Page) {
    this.screen = page.getByRole('main', { name: 'Opening your memory…' })
    this.step = this.screen.getByRole('status', { name: 'Opening' })
    this.bar = this.screen.getByRole('progressbar')
    this.closingNote = this.screen.getByRole('note')
  }
}
