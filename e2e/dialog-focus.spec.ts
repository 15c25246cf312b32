import { expect, test } from './fixtures/screens'
import { HistoryPage } from './pages/history.page'
import { MemoryPage } from './pages/memory.page'

// rnotices27: a dialog answered without changing anything (Cancel, Escape, Close) gives the
// keyboard back where it was, on the button that opened it.

test('the Memory tab gives the focus back to Delete after its dialog is cancelled', async ({
  page,
  cairn,
}) => {
  await cairn.core.dispatch('memory:write', { path: '/memories/notes.md', content: 'x\n' })
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('notes.md')
  const remove = memory.fileActions().getByRole('button', { name: 'Delete' })
  await remove.focus()
  await page.keyboard.press('Enter')
  await expect(memory.dialog.getByRole('button', { name: 'Delete' })).toBeFocused()
  await page.keyboard.press('Escape')
  await expect(memory.dialog).toHaveCount(0)
  await expect(remove).toBeFocused()
  await page.keyboard.press('Enter')
  await page.keyboard.press('Shift+Tab')
  await expect(memory.dialog.getByRole('button', { name: 'Cancel' })).toBeFocused()
  await page.keyboard.press('Enter')
  await expect(memory.dialog).toHaveCount(0)
  await expect(remove).toBeFocused()
})

test('History gives the focus back to Restore this version after its dialog is closed', async ({
  page,
  cairn,
}) => {
  await cairn.core.dispatch('memory:write', { path: '/memories/a.md', content: 'v1\n' })
  await cairn.core.dispatch('memory:write', { path: '/memories/a.md', content: 'v2\n' })
  await cairn.open(page)
  const history = new HistoryPage(page)
  await history.open()
  await expect(history.rows).toHaveCount(2)
  await history.select(history.rows.nth(1))
  const restore = history.fileDiff('a.md').getByRole('button', { name: 'Restore this version' })
  await restore.focus()
  await page.keyboard.press('Enter')
  await expect(history.dialog).toBeVisible()
  await page.keyboard.press('Escape')
  await expect(history.dialog).toHaveCount(0)
  await expect(restore).toBeFocused()
  // Nothing was restored.
  expect(await cairn.core.dispatch('history:log', { offset: 0, limit: 1 })).toMatchObject({
    ok: true,
    value: { total: 2 },
  })
})
