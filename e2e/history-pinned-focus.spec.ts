/**
 * With History's change header pinned, a control reached by Shift+Tab from lower down scrolls
 * into view below the header, not under it (the scrolling pane's scroll-padding-top is the
 * pinned header's height).
 */
import { expect, test } from './fixtures/harness'
import { HistoryPage } from './pages/history.page'

const lines = (word: string) =>
  Array.from({ length: 60 }, (_, i) => `${word} line ${i + 1}`).join('\n') + '\n'

test('Shift+Tab up to a file’s button leaves it whole below the pinned header', async ({
  page,
  cairn,
}) => {
  const write = async (path: string, content: string) => {
    const result = await cairn.core.dispatch('memory:write', { path, content })
    if (!result.ok) throw new Error(result.error.message)
    return result.value as { commit: { oid: string } | null }
  }
  await write('/memories/a.md', lines('first'))
  const point = await write('/memories/b.md', lines('first'))
  await write('/memories/a.md', lines('second'))
  await write('/memories/b.md', lines('second'))
  await cairn.core.dispatch('history:restoreAll', { oid: point.commit!.oid })

  await page.setViewportSize({ width: 1280, height: 800 })
  await cairn.open(page)
  const history = new HistoryPage(page)
  await history.open()
  await history.select(history.rows.first())
  const restoreA = history.fileDiff('a.md').getByRole('button', { name: 'Restore this version' })
  const restoreB = history.fileDiff('b.md').getByRole('button', { name: 'Restore this version' })
  await expect(restoreB).toBeVisible()

  // From b.md's button, with the pane scrolled to its end, Shift+Tab goes up to a.md's.
  await restoreB.focus()
  await history.detail.evaluate((detail) => {
    // The pane that scrolls the change: the nearest parent that scrolls.
    let area = detail.parentElement
    while (area && !['auto', 'scroll'].includes(getComputedStyle(area).overflowY)) {
      area = area.parentElement
    }
    if (!area) throw new Error('nothing scrolls the change')
    area.scrollTop = area.scrollHeight
  })
  await page.keyboard.press('Shift+Tab')
  await expect(restoreA).toBeFocused()
  // The change's header is the first thing in its region, pinned at the pane's top.
  const headerBottom = await history.detail.evaluate(
    (detail) => detail.firstElementChild!.getBoundingClientRect().bottom,
  )
  const buttonBox = (await restoreA.boundingBox())!
  expect(buttonBox.y).toBeGreaterThanOrEqual(headerBottom - 1)
})
