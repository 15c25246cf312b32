/**
 * A memory file's lines, windowed: a file of 10,000 or 100,000 lines draws only the lines in
 * view (it drew 10,000 at once, three elements each, and every action on the page took seconds),
 * and what drawing them all gave still works: the keys reach the end, a selection copies every
 * line it spans, Ctrl+A copies the whole file, Ctrl+F finds in all of it, a search hit opens in
 * view, the place is kept when the file changes, and right-to-left lines read from their start.
 * Screenshots go to e2e/artifacts (file-lines-<size>-<scheme>).
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Locator, Page } from '@playwright/test'
import { expect, shootBoth, test } from './fixtures/screens'
import { MemoryPage } from './pages/memory.page'

/** `count` lines, each naming its number, with a few words to find among them. */
function lines(count: number): string[] {
  const all = Array.from({ length: count }, (_, i) => `Line ${i + 1}: the river keeps its bed.`)
  all[count - 3] = `Line ${count - 2}: the kingfisher nests here.`
  all[count - 40] = `Line ${count - 39}: a kingfisher passes.`
  all[7] = 'שורה שמונה: הנהר זורם'
  return all
}

/** Scrolls the lines so that line `line` (1-based) is the first in view. */
function scrollToLine(region: Locator, line: number): Promise<void> {
  return region.evaluate(
    (element, top) => {
      element.scrollTop = top
    },
    (line - 1) * 20 + 6,
  )
}

/** Elements drawn in the region, as a person's page would hold them. */
function drawnElements(region: Locator): Promise<number> {
  return region.evaluate((element) => element.getElementsByTagName('*').length)
}

/** What the next copy in the page puts on the clipboard. */
async function copied(page: Page, copy: () => Promise<void>): Promise<string> {
  await page.evaluate(() => {
    const seen = window as unknown as { copiedText?: string }
    delete seen.copiedText
    window.addEventListener(
      'copy',
      (event) => {
        // Read after the view's own handler (which sits on an element inside the window).
        seen.copiedText = event.defaultPrevented
          ? event.clipboardData!.getData('text/plain')
          : String(document.getSelection())
      },
      { once: true },
    )
  })
  await copy()
  return page
    .waitForFunction(() => (window as unknown as { copiedText?: string }).copiedText, undefined, {
      timeout: 10_000,
    })
    .then((handle) => handle.jsonValue() as Promise<string>)
}

for (const count of [10_000, 100_000]) {
  test(`a file of ${count.toLocaleString('en-US')} lines draws only what is in view, and the keys, copy and find reach every line`, async ({
    page,
    cairn,
  }) => {
    test.setTimeout(120_000)
    const text = `${lines(count).join('\n')}\n`
    await writeFile(path.join(cairn.dataDir, 'memories', 'atlas.md'), text)
    await page.setViewportSize({ width: 1440, height: 900 })
    await cairn.open(page)
    const memory = new MemoryPage(page)
    await memory.openFile('atlas.md')
    const content = memory.content('atlas.md')
    await expect(content).toContainText('Line 1: the river')
    // Three elements a line drawn: some tens of lines, not all of them.
    const elements = await drawnElements(content)
    console.log(`${count} lines: ${elements} elements drawn`)
    expect(elements).toBeLessThan(400)

    // The line numbers reach the last line, the keys reach the end.
    await content.focus()
    await page.keyboard.press('End')
    const last = content.getByText(`Line ${count}: the river`)
    await expect(last).toBeInViewport()
    await expect(content.locator('[data-line]').last()).toContainText(String(count))
    expect(await drawnElements(content)).toBeLessThan(400)
    await page.keyboard.press('Home')
    await expect(content.getByText('Line 1: the river')).toBeInViewport()

    // A right-to-left line reads from its start at the right of its words.
    const hebrew = content.getByText('שורה שמונה: הנהר זורם')
    await expect(hebrew).toBeVisible()

    // A selection from line 2 to a line far below (Shift+click after scrolling) copies every
    // line between, though most were never drawn together.
    await content.getByText('Line 2: the river').click({ position: { x: 2, y: 5 } })
    const middle = Math.floor(count / 2)
    await scrollToLine(content, middle - 2)
    const far = content.getByText(new RegExp(`^Line ${middle}: the river`))
    await expect(far).toBeInViewport()
    await far.click({ position: { x: 2, y: 5 }, modifiers: ['Shift'] })
    const spanned = await copied(page, () => page.keyboard.press('ControlOrMeta+C'))
    const expected = text.split('\n').slice(1, middle)
    expect(spanned.split('\n')).toHaveLength(expected.length)
    expect(spanned.split('\n').slice(1, -1)).toEqual(expected.slice(1, -1))
    expect(spanned.startsWith('ine 2: the river') || spanned.startsWith('Line 2: the river')).toBe(
      true,
    )

    // Ctrl+A in the lines chooses the whole file (not the whole window); Ctrl+C copies it all.
    await content.focus()
    await page.keyboard.press('ControlOrMeta+A')
    expect(await copied(page, () => page.keyboard.press('ControlOrMeta+C'))).toBe(text)

    // Ctrl+F finds in the whole file: two matches, both far below what is drawn.
    await content.focus()
    await page.keyboard.press('ControlOrMeta+F')
    const find = memory.pane.getByRole('searchbox', { name: 'Find in file' })
    await expect(find).toBeFocused()
    await find.fill('KINGFISHER')
    const status = memory.pane.getByRole('search', { name: 'Find in atlas.md' }).getByRole('status')
    await expect(status).toHaveText('1 of 2')
    await expect(content.getByText('a kingfisher passes.')).toBeInViewport()
    await find.press('Enter')
    await expect(status).toHaveText('2 of 2')
    await expect(content.getByText('the kingfisher nests here.')).toBeInViewport()
    await expect(content.locator('mark.mem-find-hit')).toHaveText('kingfisher')
    await find.press('Shift+Enter')
    await expect(status).toHaveText('1 of 2')
    await shootBoth(page, cairn, `file-lines-${count}`)
    await page.setViewportSize({ width: 880, height: 560 })
    await shootBoth(page, cairn, `file-lines-${count}-small`)
    await find.fill('no such words')
    await expect(status).toHaveText('No matches')
    await find.press('Escape')
    await expect(find).toHaveCount(0)
    await expect(content).toBeFocused()
  })
}

test('a search hit far down a long file opens in view, and the place read is kept when the file changes', async ({
  page,
  cairn,
}) => {
  test.setTimeout(120_000)
  const all = lines(40_000)
  all[29_999] = 'Line 30000: the heron waits.'
  const file = path.join(cairn.dataDir, 'memories', 'atlas.md')
  await writeFile(file, `${all.join('\n')}\n`)
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('atlas.md')
  const content = memory.content('atlas.md')
  await expect(content).toContainText('Line 1: the river')

  await memory.searchFor('heron')
  await memory.searchResults.getByRole('button', { name: /heron/ }).click()
  const heron = content.getByText('Line 30000: the heron waits.')
  await expect(heron).toBeInViewport({ timeout: 30_000 })
  await memory.searchFor('')

  // Another program (or Claude) changes a line above the one read (line 29,979, its top just
  // scrolled out of view): the view keeps the line one reads where it was.
  await scrollToLine(content, 29_979)
  const reading = content.getByText(/^Line 29980: the river/)
  await expect(reading).toBeInViewport()
  const before = (await reading.boundingBox())!.y
  all[29_978] = 'Line 29979: the river changed its bed.'
  await writeFile(file, `${all.join('\n')}\n`)
  await expect(content.getByText('Line 29979: the river changed its bed.')).toBeInViewport({
    timeout: 30_000,
  })
  await expect(reading).toBeInViewport()
  expect(Math.abs((await reading.boundingBox())!.y - before)).toBeLessThan(1)
})

test('an invisible character copies as itself, and a match far along a 100,000-character line is brought into view', async ({
  page,
  cairn,
}) => {
  test.setTimeout(120_000)
  const all = Array.from({ length: 40 }, (_, i) => `Line ${i + 1}: the river keeps its bed.`)
  // A right-to-left mark, as right-to-left text often holds, and a right-to-left override.
  all[4] = 'Line 5: שורה\u200f חמש'
  all[8] = 'Line 9: report\u202etxt.exe'
  all[20] = `${'x'.repeat(99_000)}kingfisher${'y'.repeat(990)}`
  await writeFile(path.join(cairn.dataDir, 'memories', 'atlas.md'), `${all.join('\r\n')}\r\n`)
  await page.setViewportSize({ width: 1440, height: 900 })
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('atlas.md')
  const content = memory.content('atlas.md')
  await expect(content.locator('mark.hidden-char')).toHaveText(['U+200F', 'U+202E'])

  // From line 5 to the end of line 9 (a click, then a Shift+click): the clipboard holds the
  // characters, not their labels (it held "U+200F" and "U+202E").
  const textOf = (line: number) => content.locator(`[data-line="${line - 1}"] .mem-code-text`)
  await textOf(5).click({ position: { x: 2, y: 5 } })
  const nine = (await textOf(9).boundingBox())!
  await textOf(9).click({ position: { x: nine.width - 1, y: 5 }, modifiers: ['Shift'] })
  const spanned = await copied(page, () => page.keyboard.press('ControlOrMeta+C'))
  const expected = all.slice(4, 9).map((line) => `${line}\r`)
  expected[4] = expected[4]!.slice(0, -1)
  expect(spanned).not.toContain('U+')
  expect(spanned.split('\n').slice(1)).toEqual(expected.slice(1))
  expect(expected[0]!.endsWith(spanned.split('\n')[0]!)).toBe(true)
  expect(spanned.split('\n')[0]!.length).toBeGreaterThan(expected[0]!.length - 3)

  // Within one line (dragged across it), the same.
  await page.mouse.move(nine.x + 1, nine.y + 5)
  await page.mouse.down()
  await page.mouse.move(nine.x + nine.width - 1, nine.y + 5, { steps: 4 })
  await page.mouse.up()
  const within = await copied(page, () => page.keyboard.press('ControlOrMeta+C'))
  expect(within).not.toContain('U+')
  expect(within).toContain('report\u202etxt.exe')

  // Find stands on a match 99,000 characters along a line: it is scrolled into view across.
  await content.focus()
  await page.keyboard.press('ControlOrMeta+F')
  const find = memory.pane.getByRole('searchbox', { name: 'Find in file' })
  await find.fill('kingfisher')
  const status = memory.pane.getByRole('search', { name: 'Find in atlas.md' }).getByRole('status')
  await expect(status).toHaveText('1 of 1')
  const mark = content.locator('mark.mem-find-hit')
  await expect(mark).toHaveText('kingfisher')
  await expect(mark).toBeInViewport()
  await shootBoth(page, cairn, 'file-lines-long-line-find')
  // In a small window, found again from the start of the line.
  await page.setViewportSize({ width: 880, height: 560 })
  await find.fill('')
  await content.evaluate((element) => {
    element.scrollLeft = 0
  })
  await find.fill('kingfisher')
  await expect(status).toHaveText('1 of 1')
  // The box keeps room for what is typed in a narrow pane (it was 20 px wide, the buttons
  // beside it), and the buttons stay in reach.
  expect((await find.boundingBox())!.width).toBeGreaterThan(120)
  await expect(memory.pane.getByRole('button', { name: 'Close' })).toBeVisible()
  // The pane scrolls down to the lines (the region itself is not scrolled so).
  await content.evaluate((element) => element.scrollIntoView({ block: 'end' }))
  await expect(mark).toBeInViewport()
  expect(await content.evaluate((element) => element.scrollLeft)).toBeGreaterThan(500_000)
  await shootBoth(page, cairn, 'file-lines-long-line-find-small')
})

test('a selection from line 5 to line 9,000 copies the same once the view is scrolled back to the top', async ({
  page,
  cairn,
}) => {
  test.setTimeout(120_000)
  const all = lines(10_000)
  await writeFile(path.join(cairn.dataDir, 'memories', 'atlas.md'), `${all.join('\n')}\n`)
  await page.setViewportSize({ width: 1440, height: 900 })
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('atlas.md')
  const content = memory.content('atlas.md')
  await content.getByText('Line 5: the river').click({ position: { x: 2, y: 5 } })
  await scrollToLine(content, 8_995)
  const far = content.getByText(/^Line 9000: the river/)
  await expect(far).toBeInViewport()
  await far.click({ position: { x: 30, y: 5 }, modifiers: ['Shift'] })
  // Back to the top before copying: the row the selection ends on is out of view (it was taken
  // out of the page, and the copy held lines 2 to 4).
  await scrollToLine(content, 1)
  await expect(content.getByText('Line 1: the river')).toBeInViewport()
  const spanned = (await copied(page, () => page.keyboard.press('ControlOrMeta+C'))).split('\n')
  expect(spanned).toHaveLength(8_996)
  expect(spanned.slice(1, -1)).toEqual(all.slice(5, 8_999))
  expect(all[4]!.endsWith(spanned[0]!)).toBe(true)
  expect(spanned[0]!.length).toBeGreaterThan(all[4]!.length - 3)
  expect(spanned.at(-1)).not.toBe('')
  expect(all[8_999]!.startsWith(spanned.at(-1)!)).toBe(true)
})
