/**
 * Issue #12's full history view checked again on current main (probe31b): at the smallest
 * window the app allows and at a large one, light and dark, the diff gets the room beside the
 * timeline (never squeezed back into a side pane's width), nothing scrolls the window
 * sideways, and the change, its view modes and a line's provenance are reached by keyboard
 * alone, each with a name a screen reader says. Screenshots go to e2e/artifacts
 * (full-history-<size>-<scheme>).
 */
import type { Locator, Page } from '@playwright/test'
import { claudeTurn, create, reply, strReplace } from './fixtures/claude-turns'
import { tabTo } from './fixtures/keyboard'
import { withLargeHistory } from './fixtures/large-history'
import { expect, shoot, test } from './fixtures/screens'
import { ChatPage } from './pages/chat.page'
import { FullHistoryPage } from './pages/full-history.page'

const SIZES = [
  { width: 880, height: 560 },
  { width: 2560, height: 1440 },
] as const

const LONG =
  'Trail notes: ' +
  Array.from({ length: 40 }, (_, i) => `waypoint ${i} near the ridge`).join(', ') +
  '.'

async function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = document.scrollingElement ?? document.documentElement
    return root.scrollWidth - root.clientWidth
  })
}

/**
 * Each element in `root` that draws words wider than its box, and by how much (none: nothing
 * cut). A select's words are its chosen option's, measured in its own font,
 * against the box less its padding and the arrow's room.
 */
async function clipped(root: Locator, selector: string): Promise<string[]> {
  return root.evaluate((element, css) => {
    const canvas = document.createElement('canvas').getContext('2d')!
    return [...element.querySelectorAll<HTMLElement>(css)]
      .filter((el) => el.getClientRects().length > 0)
      .map((el) => {
        const name = `${el.className} “${el.innerText}”`
        if (!(el instanceof HTMLSelectElement))
          return { name, cut: el.scrollWidth - el.clientWidth }
        const style = getComputedStyle(el)
        canvas.font = style.font
        const text = el.options[el.selectedIndex]?.text ?? ''
        const room =
          el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 16
        return { name, cut: Math.ceil(canvas.measureText(text).width - room) }
      })
      .filter(({ cut }) => cut > 0)
      .map(({ name, cut }) => `${name} cut by ${cut} px`)
  }, selector)
}

for (const size of SIZES) {
  for (const scheme of ['light', 'dark'] as const) {
    test(`at ${size.width}×${size.height} the full view gives the diff the window, by keyboard alone (${scheme})`, async ({
      page,
      cairn,
      anthropic,
    }) => {
      await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-full-sizes' })
      const id = await claudeTurn(cairn, anthropic, 'Remember my trail notes.', [
        create('/memories/trailhead.md', `# trailhead\n\n${LONG}\nShort line.\n`),
        reply.text('Saved.'),
      ])
      await claudeTurn(
        cairn,
        anthropic,
        'It uses clap 4 now.',
        [strReplace('/memories/trailhead.md', 'Short line.', 'Uses clap 4.'), reply.text('Ok.')],
        id,
      )
      await page.setViewportSize(size)
      await page.emulateMedia({ colorScheme: scheme })
      await cairn.open(page)
      const history = new FullHistoryPage(page)
      await history.openWithKeyboard()
      await expect(history.view).toBeVisible()
      // The filters fit the timeline's column: no choice cut ("All autho"), each by Tab.
      const filters = history.view.getByRole('search', { name: 'Filter history' })
      const author = filters.getByRole('combobox', { name: 'Filter by author' })
      const conversation = filters.getByRole('combobox', { name: 'Filter by conversation' })
      expect(await clipped(filters, 'select, input')).toEqual([])
      const column = await history.timeline.boundingBox()
      for (const select of [author, conversation]) {
        const box = await select.boundingBox()
        expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(
          (column?.x ?? 0) + (column?.width ?? 0) + 1,
        )
      }
      await tabTo(page, author, { max: 40 })
      await page.keyboard.press('Tab')
      await expect(conversation).toBeFocused()
      await history.timeline.focus()
      await page.keyboard.press('ArrowDown')
      await expect(history.title()).toHaveText('Claude edited trailhead.md')

      // The diff takes the width the timeline leaves: more than 60% of the window at both
      // sizes (the side pane's 485 px would give it about 450).
      const unified = history.diffTable('/memories/trailhead.md')
      await unified.scrollIntoViewIfNeeded()
      const timelineBox = await history.timeline.boundingBox()
      const diffBox = await unified.boundingBox()
      expect(diffBox?.width ?? 0).toBeGreaterThan(size.width * 0.6)
      expect(diffBox?.x ?? 0).toBeGreaterThanOrEqual(
        (timelineBox?.x ?? 0) + (timelineBox?.width ?? 0) - 1,
      )
      expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0)

      // Side by side by keyboard: the long line stays one row high, each side scrolls.
      const actions = history.detail.getByRole('toolbar', { name: 'Change actions' })
      const sideBySide = actions.getByRole('button', { name: 'Side by side', exact: true })
      await tabTo(page, sideBySide, { max: 40 })
      await page.keyboard.press('Enter')
      const split = history.diffTable('/memories/trailhead.md')
      const after = split.getByRole('rowgroup', { name: 'After' })
      const longRow = after.getByRole('row').filter({ hasText: 'waypoint 39' })
      const shortRow = after.getByRole('row').filter({ hasText: 'Uses clap 4.' })
      await longRow.scrollIntoViewIfNeeded()
      expect((await longRow.boundingBox())?.height).toBe((await shortRow.boundingBox())?.height)
      expect((await split.boundingBox())?.width ?? 0).toBeGreaterThan(size.width * 0.6)
      expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0)
      await shoot(page, cairn, `full-history-${size.width}x${size.height}-split-${scheme}`)

      // Blame by keyboard: each line's gutter names who wrote it and when, and the reply.
      const blameMode = actions.getByRole('button', { name: 'Blame', exact: true })
      await blameMode.focus()
      await page.keyboard.press('Enter')
      const blame = history.blame('/memories/trailhead.md')
      const line = blame.getByRole('row').filter({ hasText: 'Uses clap 4.' })
      const open = line.getByRole('button', { name: /^Claude, .*: .*\. Open this change$/ })
      await expect(open).toHaveCount(1)
      const reply_ = line.getByRole('button', {
        name: 'Open the reply that wrote this, in “Remember my trail notes.”',
      })
      await reply_.scrollIntoViewIfNeeded()
      await expect(reply_).toBeInViewport()
      // The gutter keeps under a third of the blame's width, its words whole: at the small
      // size who, the time briefly and Reply (the names and tooltips say it all).
      const gutter = line.getByRole('cell').first()
      const gutterWidth = (await gutter.boundingBox())?.width ?? 0
      const blameWidth = (await blame.boundingBox())?.width ?? 0
      expect(gutterWidth).toBeLessThan(blameWidth / 3)
      expect(await clipped(line, '.blame-gutter, .blame-gutter *')).toEqual([])
      expect(await reply_.innerText()).toBe(
        size.width < 1200 ? 'Reply' : 'Remember my trail notes.',
      )
      expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0)
      await shoot(page, cairn, `full-history-${size.width}x${size.height}-blame-${scheme}`)
      await tabTo(page, reply_, { max: 40 })
      await page.keyboard.press('Enter')
      const chat = new ChatPage(page)
      const card = chat.transcript.getByRole('region', {
        name: 'Memory str_replace /memories/trailhead.md',
      })
      await expect(card).toHaveAttribute('aria-current', 'true')
      await expect(card).toBeInViewport()
    })
  }
}

test('the full view over 10,000 changes is walked by keyboard, drawing only the rows on screen', async ({
  page,
  rendererServer,
}) => {
  // Building 10,000 commits and opening them took 56 s at load 23 on the shared machine.
  test.setTimeout(180_000)
  await withLargeHistory(page, { commits: 10_000, prefix: 'cairn-e2e-full-large-' }, async () => {
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.goto(rendererServer.url)
    await expect(page.getByRole('main', { name: 'Chat' })).toBeVisible()
    const history = new FullHistoryPage(page)
    await history.openWithKeyboard()
    await expect(history.view).toBeVisible()
    await expect(history.rows.first()).toBeVisible()
    await history.timeline.focus()
    await page.keyboard.press('End')
    const selected = history.timeline.getByRole('row', { selected: true })
    await expect(selected).toHaveAttribute('aria-rowindex', '10000')
    await expect(history.title()).toHaveText(/created topics\/topic-01\.md$/)
    await page.keyboard.press('PageUp')
    await expect(selected).not.toHaveAttribute('aria-rowindex', '10000')
    await page.keyboard.press('Home')
    await expect(selected).toHaveAttribute('aria-rowindex', '1')
    await expect(history.title()).toContainText('topics/topic-00.md')
    // Only the rows on screen (and their day headings) exist.
    expect(await history.rows.count()).toBeLessThan(80)
  })
})
