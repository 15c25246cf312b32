import type { Locator, Page } from '@playwright/test'
import type { Cairn } from '../fixtures/harness'

/** Sets which of Claude's changes wait for review; fails if the settings refuse it. */
export async function reviewMode(cairn: Cairn, mode: 'off' | 'flagged' | 'all'): Promise<void> {
  const result = await cairn.core.dispatch('settings:update', { reviewMode: mode })
  if (!result.ok) throw new Error(result.error.message)
}

/** Sets every change of Claude's to wait for review. */
export function allMode(cairn: Cairn): Promise<void> {
  return reviewMode(cairn, 'all')
}

/**
 * A change waiting for review, wherever it shows: inside a chat tool card or in the memory
 * pane's list (both hold the same region). Intent methods for each decision.
 */
export class ReviewPanel {
  readonly region: Locator

  constructor(
    readonly page: Page,
    scope: Locator,
    path: string,
  ) {
    const name = path.replace(/^\/memories\//, '')
    this.region = scope.getByRole('region', { name: `Review the change to ${name}` })
  }

  diff(path: string): Locator {
    return this.region.getByRole('table', { name: `Changes to ${path}` })
  }

  flags(): Locator {
    return this.region.getByRole('list', { name: 'Why this change was flagged' })
  }

  async approve(): Promise<void> {
    await this.region.getByRole('button', { name: 'Approve', exact: true }).click()
  }

  async editAndApprove(text: string): Promise<void> {
    await this.region.getByRole('button', { name: 'Edit' }).click()
    await this.region.getByRole('textbox', { name: /^Edit the text of/ }).fill(text)
    await this.region.getByRole('button', { name: 'Approve edited text' }).click()
  }

  async decline(reason?: string): Promise<void> {
    await this.region.getByRole('button', { name: 'Decline', exact: true }).click()
    if (reason !== undefined) {
      await this.region
        .getByRole('textbox', { name: 'Reason for declining (optional)' })
        .fill(reason)
    }
    await this.region.getByRole('button', { name: 'Decline change' }).click()
  }
}

/** The memory pane's list of changes waiting for review. */
export class PendingListPage {
  readonly section: Locator

  constructor(readonly page: Page) {
    this.section = page
      .getByRole('tabpanel', { name: 'Memory' })
      .getByRole('region', { name: 'Waiting for your review' })
  }

  heading(): Locator {
    return this.section.getByRole('button', { name: /for your review/ })
  }

  /** The row of one change, by what it says (`Claude: Write notes.md`). */
  item(label: string | RegExp): Locator {
    return this.section.getByRole('button', { name: label })
  }

  panel(path: string): ReviewPanel {
    return new ReviewPanel(this.page, this.section, path)
  }
}
