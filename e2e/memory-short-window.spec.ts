/**
 * The Memory tab at 880×560 (the smallest window): an open file shows several of its lines
 * (the pane's actions, its use line and the size meter took all of the height, and no line of
 * the file was in view), and every action of the file is still in view.
 * Screenshots go to e2e/artifacts (memory-short-<scheme>, memory-wide-<scheme>).
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Locator } from '@playwright/test'
import { expect, shootBoth, test } from './fixtures/screens'
import { MemoryPage } from './pages/memory.page'

/** Lines of `region` in view without scrolling it (parts of lines counted). */
function linesInView(region: Locator): Promise<number> {
  return region.evaluate((element) => {
    const box = element.getBoundingClientRect()
    const bottom = Math.min(box.bottom, window.innerHeight)
    let shown = 0
    for (const line of element.querySelectorAll('.mem-code-line')) {
      const at = line.getBoundingClientRect()
      const seen = Math.min(at.bottom, bottom) - Math.max(at.top, box.top)
      if (seen > 0) shown += seen / at.height
    }
    return shown
  })
}

test('at 880×560 an open file shows several of its lines, and every action of the file is in view', async ({
  page,
  cairn,
}) => {
  test.setTimeout(120_000)
  // Long enough for the "longer than one view" warnings, the tallest the pane's header gets.
  const text = Array.from({ length: 100_000 }, (_, i) => `Line ${i + 1}: the river keeps its bed.`)
  await writeFile(path.join(cairn.dataDir, 'memories', 'atlas.md'), `${text.join('\n')}\n`)
  await writeFile(path.join(cairn.dataDir, 'memories', 'birds.md'), 'Kingfishers\n')
  await page.setViewportSize({ width: 880, height: 560 })
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('atlas.md')
  const content = memory.content('atlas.md')
  await expect(content).toContainText('Line 1: the river')

  const shown = await linesInView(content)
  console.log(`880×560: ${shown.toFixed(2)} lines of the open file in view`)
  expect(shown, 'lines of the open file in view').toBeGreaterThanOrEqual(5)
  // The tree still shows its files.
  await expect(memory.pane.getByRole('treeitem', { name: /birds\.md/ })).toBeInViewport()

  // Every action of the file is in view, none hidden past the pane's edge.
  const actions = memory.pane.getByRole('toolbar', { name: 'File actions' }).getByRole('button')
  const names = await actions.allTextContents()
  expect(names).toEqual(
    expect.arrayContaining(['Preview', 'Blame', 'Edit', 'Show history', 'Rename', 'Delete']),
  )
  for (let i = 0; i < names.length; i++) {
    await expect(actions.nth(i)).toBeInViewport({ ratio: 1 })
  }
  await shootBoth(page, cairn, 'memory-short')

  await page.setViewportSize({ width: 1440, height: 900 })
  await expect(content).toContainText('Line 1: the river')
  expect(await linesInView(content)).toBeGreaterThanOrEqual(12)
  await shootBoth(page, cairn, 'memory-wide')
})
