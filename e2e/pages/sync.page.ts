import type { Locator, Page } from '@playwright/test'
import { SettingsPage } from './settings.page'

/** Sync: its part of the settings dialog, the sidebar indicator and the sync dialogs. */
export class SyncPage {
  readonly settings: SettingsPage
  readonly url: Locator
  readonly username: Locator
  readonly token: Locator
  readonly machineName: Locator
  readonly indicator: Locator
  readonly conflictDialog: Locator
  readonly joinDialog: Locator

  constructor(readonly page: Page) {
    this.settings = new SettingsPage(page)
    const dialog = this.settings.dialog
    this.url = dialog.getByRole('textbox', { name: 'Repository address' })
    this.username = dialog.getByRole('textbox', { name: 'Username' })
    this.token = dialog.getByLabel(/^(Access token|Replace the access token)$/)
    this.machineName = dialog.getByRole('textbox', { name: 'This machine’s name' })
    this.indicator = page
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('status', { name: 'Sync status' })
    this.conflictDialog = page.getByRole('dialog', { name: 'Resolve conflicts' })
    this.joinDialog = page.getByRole('dialog', { name: /already holds memory|was rewritten/ })
  }

  async openSettings(): Promise<void> {
    await this.settings.open()
  }

  async fill(remote: { url: string; username?: string; token?: string }): Promise<void> {
    await this.url.fill(remote.url)
    if (remote.username !== undefined) await this.username.fill(remote.username)
    if (remote.token !== undefined) await this.token.fill(remote.token)
  }

  async testConnection(): Promise<void> {
    await this.settings.dialog.getByRole('button', { name: 'Test connection' }).click()
  }

  /** The answer of "Test connection". */
  testResult(): Locator {
    return this.settings.dialog.getByLabel('Connection test')
  }

  async turnOn(): Promise<void> {
    await this.settings.dialog.getByRole('button', { name: 'Turn on sync' }).click()
  }

  /** The state line at the top of Settings → Sync. */
  state(): Locator {
    return this.settings.dialog.getByRole('status', { name: 'Sync state' })
  }

  async syncNow(): Promise<void> {
    await this.indicator.getByRole('button', { name: 'Sync now' }).click()
  }
}
