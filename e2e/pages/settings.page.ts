import type { Locator, Page } from '@playwright/test'

/** The settings dialog. */
export class SettingsPage {
  readonly dialog: Locator
  readonly keyStatus: Locator
  readonly keyField: Locator
  readonly model: Locator
  readonly maxTokens: Locator
  readonly instructions: Locator
  readonly overwritePolicy: Locator
  readonly secretScanning: Locator
  readonly theme: Locator
  readonly save: Locator

  constructor(readonly page: Page) {
    this.dialog = page.getByRole('dialog', { name: 'Settings' })
    this.keyStatus = this.dialog.getByRole('status', { name: 'API key status' })
    this.keyField = this.dialog.getByLabel(
      /^(API key|Replace with a new key|Save a key to use instead)$/,
    )
    this.model = this.dialog.getByRole('combobox', { name: 'Model' })
    this.maxTokens = this.dialog.getByRole('spinbutton', { name: 'Max tokens' })
    this.instructions = this.dialog.getByRole('textbox', { name: 'Custom instructions' })
    this.overwritePolicy = this.dialog.getByRole('combobox', {
      name: 'When Claude creates a file that already exists',
    })
    this.secretScanning = this.dialog.getByRole('checkbox', { name: /Secret scanning/ })
    this.theme = this.dialog.getByRole('radiogroup', { name: 'Theme' })
    this.save = this.dialog.getByRole('button', { name: 'Save changes' })
  }

  /** Opens settings from the sidebar's Settings button. */
  async open(): Promise<void> {
    await this.page
      .getByRole('navigation', { name: 'Conversations' })
      .getByRole('button', { name: /^Settings/ })
      .click()
  }

  async close(): Promise<void> {
    await this.dialog.getByRole('button', { name: 'Close settings' }).click()
  }

  async enterKey(key: string): Promise<void> {
    await this.keyField.fill(key)
    await this.dialog.getByRole('button', { name: 'Save key' }).click()
  }

  async removeKey(): Promise<void> {
    await this.dialog.getByRole('button', { name: 'Remove key' }).click()
  }

  async chooseTheme(name: 'System' | 'Light' | 'Dark'): Promise<void> {
    await this.theme.getByRole('radio', { name }).check()
  }

  /** The notice after saving or removing the key. */
  keyNotice(): Locator {
    return this.dialog.getByRole('status', { name: 'API key result' })
  }

  /** The notice when saving or removing the key failed. */
  keyProblem(): Locator {
    return this.dialog.getByRole('alert', { name: 'API key result' })
  }

  /** The notice after saving the other settings. */
  saveNotice(): Locator {
    return this.dialog.getByRole('status', { name: 'Save result' })
  }
}
