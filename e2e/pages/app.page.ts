import type { Locator, Page } from '@playwright/test'

/** The window's frame: sidebar, chat pane, and the memory/history side pane. */
export class AppPage {
  readonly sidebar: Locator
  readonly chat: Locator
  readonly sidePane: Locator
  readonly about: Locator

  constructor(readonly page: Page) {
    this.sidebar = page.getByRole('navigation', { name: 'Conversations' })
    this.chat = page.getByRole('main', { name: 'Chat' })
    this.sidePane = page.getByRole('complementary', { name: 'Memory and history' })
    this.about = page.getByRole('region', { name: 'About' })
  }

  sideTab(name: 'Memory' | 'History'): Locator {
    return this.sidePane.getByRole('tab', { name })
  }

  async showSidePane(name: 'Memory' | 'History'): Promise<void> {
    await this.sideTab(name).click()
  }
}
