/**
 * The History tab at 880×560 (the smallest window): the timeline shows two and a half rows
 * and more (it showed under two), and a change's own "Restore this version" still shows as it opens,
 * without scrolling the detail. Screenshots go to e2e/artifacts (history-short-<scheme>).
 */
import { expect, shootBoth, test } from './fixtures/screens'
import { HistoryPage } from './pages/history.page'

test('at 880×560 the history timeline shows more than two rows, and a change still opens with its restore in view', async ({
  page,
  cairn,
}) => {
  for (const name of ['ferns', 'stamps', 'kettle', 'bicycle', 'letters', 'garden']) {
    const written = await cairn.core.dispatch('memory:write', {
      path: `/memories/${name}.md`,
      content: `About the ${name}\n`,
    })
    expect(written.ok).toBe(true)
  }
  await page.setViewportSize({ width: 880, height: 560 })
  await cairn.open(page)
  const history = new HistoryPage(page)
  await history.open()
  await expect(history.rows).toHaveCount(6)
  await history.select(history.rows.nth(1))
  await expect(history.detail).toContainText('About the letters')

  // How many rows of the timeline are in view, without scrolling it (parts of rows counted).
  const shown = await history.timeline.evaluate((timeline) => {
    const box = timeline.getBoundingClientRect()
    let rows = 0
    for (const row of timeline.querySelectorAll('[role="row"]')) {
      const at = row.getBoundingClientRect()
      const seen = Math.min(at.bottom, box.bottom) - Math.max(at.top, box.top)
      if (seen > 0) rows += seen / at.height
    }
    return rows
  })
  console.log(`880×560: ${shown.toFixed(2)} timeline rows in view`)
  expect(shown, 'rows of the timeline in view').toBeGreaterThanOrEqual(2.5)

  const restoreFile = history.detail.getByRole('button', { name: 'Restore this version' })
  const [button, pane] = await Promise.all([
    restoreFile.boundingBox(),
    history.pane.locator('.hist-detail-area').boundingBox(),
  ])
  expect(button!.y).toBeGreaterThanOrEqual(pane!.y)
  expect(button!.y + button!.height).toBeLessThanOrEqual(pane!.y + pane!.height)
  await shootBoth(page, cairn, 'history-short')
})
