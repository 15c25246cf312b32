import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Locator, Page } from '@playwright/test'
import { expect, test } from './fixtures/harness'
import { HistoryPage } from './pages/history.page'
import { MemoryPage } from './pages/memory.page'

// A pane's Result banner (what a save, restore, rename or undo did) dismissed with the keyboard
// took the focus with it: it fell to the page's body, and a keyboard user had lost their place in
// the pane. It goes to another banner of the pane, else back to the control that produced the
// result, else to the pane's list, as the chat's notices hand it on.

/** Writes a memory file through the real API, a change made before the test's own steps. */
async function seed(cairn: { core: { dispatch: (c: string, p: unknown) => Promise<unknown> } }) {
  for (const content of ['Tea: green\n', 'Tea: black\n']) {
    const written = await cairn.core.dispatch('memory:write', {
      path: '/memories/notes.md',
      content,
    })
    expect(written).toMatchObject({ ok: true })
  }
}

/** Seeds two versions, opens the app and the History pane, and selects the earlier version. */
async function historyAtTheVersionBefore(
  page: Page,
  cairn: Parameters<typeof seed>[0] & { open: (page: Page) => Promise<unknown> },
): Promise<HistoryPage> {
  await seed(cairn)
  await cairn.open(page)
  const history = new HistoryPage(page)
  await history.open()
  await history.select(history.rows.nth(1))
  return history
}

/** Moves the focus to `button` and presses it with Enter, as a keyboard user does. */
async function pressWithKeyboard(page: Page, button: Locator): Promise<void> {
  await button.focus()
  await expect(button).toBeFocused()
  await page.keyboard.press('Enter')
}

/** Whether the focus has fallen to the page's body (nothing holds it). */
function focusOnBody(page: Page): Promise<boolean> {
  return page.evaluate(() => document.activeElement === document.body)
}

test('a Result dismissed by keyboard in the History pane hands the focus to the timeline', async ({
  page,
  cairn,
}) => {
  const history = await historyAtTheVersionBefore(page, cairn)
  await history.fileDiff('notes.md').getByRole('button', { name: 'Restore this version' }).click()
  await history.dialog.getByRole('button', { name: 'Restore file' }).click()
  await expect(history.notice).toContainText('Restored notes.md')

  // Undo, pressed with the keyboard: its result takes the banner's place, and the focus with it.
  await pressWithKeyboard(page, history.notice.getByRole('button', { name: 'Undo' }))
  await expect(history.notice).toContainText('Undone')
  await expect(history.notice.getByRole('button', { name: 'Dismiss' })).toBeFocused()

  // Dismissed: the control that produced it (in the dialog, or the Undo gone with its banner) is
  // gone, so the pane's list has the focus, where the arrow keys go on.
  await page.keyboard.press('Enter')
  await expect(history.notice).toHaveCount(0)
  await expect(history.timeline).toBeFocused()
  expect(await focusOnBody(page)).toBe(false)
  const selected = await history.timeline.getAttribute('aria-activedescendant')
  await page.keyboard.press('ArrowDown')
  await expect(history.timeline).not.toHaveAttribute('aria-activedescendant', selected ?? '')
})

test('a Result dismissed by keyboard hands the focus back to the control that produced it', async ({
  page,
  cairn,
}) => {
  const history = await historyAtTheVersionBefore(page, cairn)
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-export-'))
  try {
    cairn.host.answerDialog(path.join(dir, 'then.zip'))
    const exportVersion = history.detail.getByRole('button', { name: 'Export this version (.zip)' })
    await pressWithKeyboard(page, exportVersion)
    await expect(history.notice).toBeVisible()

    await pressWithKeyboard(page, history.notice.getByRole('button', { name: 'Dismiss' }))
    await expect(history.notice).toHaveCount(0)
    await expect(exportVersion).toBeFocused()
    expect(await focusOnBody(page)).toBe(false)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('a Result dismissed by keyboard in the Memory pane, its control gone, hands the focus to the list', async ({
  page,
  cairn,
}) => {
  await seed(cairn)
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.open()
  await memory.openFile('notes.md')
  await memory.renameOpenFile('/memories/tea.md')
  await expect(memory.notice).toContainText('Renamed notes.md to tea.md')

  await pressWithKeyboard(page, memory.notice.getByRole('button', { name: 'Dismiss' }))
  await expect(memory.notice).toHaveCount(0)
  // The rename's dialog is gone: the file list's current row has the focus.
  await expect(memory.item('tea.md')).toBeFocused()
  expect(await focusOnBody(page)).toBe(false)
})

// R3 (polish26): the delete dialog, confirmed with the keyboard, handed the focus back to the
// file's Delete button, which went with the file, so the focus fell to the page's body.
test('a file deleted with the keyboard leaves the focus on the file list, not the page', async ({
  page,
  cairn,
}) => {
  await seed(cairn)
  expect(
    await cairn.core.dispatch('memory:write', { path: '/memories/tea.md', content: 'Oolong\n' }),
  ).toMatchObject({ ok: true })
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.open()
  await memory.openFile('notes.md')

  await pressWithKeyboard(page, memory.fileActions().getByRole('button', { name: 'Delete' }))
  await expect(memory.dialog).toBeVisible()
  await pressWithKeyboard(page, memory.dialog.getByRole('button', { name: 'Delete' }))
  await expect(memory.dialog).toHaveCount(0)
  await expect(memory.notice).toContainText('Deleted notes.md')
  await expect(memory.item('notes.md')).toHaveCount(0)

  // The list's current row has it, where the arrow keys go on.
  await expect(memory.item('tea.md')).toBeFocused()
  expect(await focusOnBody(page)).toBe(false)
})
