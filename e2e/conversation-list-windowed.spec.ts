/**
 * The conversation list over 1,000 and 10,000 conversations: only the lines in view are drawn
 * (it drew every conversation, about 11 elements each: 11,039 in the sidebar at 1,000), and the
 * list still works whole by keyboard (arrows, Home/End, F2 rename, Delete, Tab to the row's own
 * buttons), by search, and scrolls the open conversation into view.
 * Screenshots go to e2e/artifacts (conversation-list-windowed-<size>-<scheme>).
 */
import type { Page } from '@playwright/test'
import { expect, test, shootBoth } from './fixtures/screens'
import type { Cairn } from './fixtures/harness'
import { writeConversation } from './fixtures/stored-conversations'
import { ChatPage } from './pages/chat.page'

/** Writes `count` conversations, `Conversation 0000` the newest, one hour apart. */
async function writeConversations(cairn: Cairn, count: number): Promise<void> {
  const now = Date.now()
  const width = String(count - 1).length
  for (let i = 0; i < count; i++) {
    const n = String(i).padStart(width, '0')
    await writeConversation(cairn.dataDir, {
      id: `c_${n}`,
      title: `Conversation ${n}`,
      at: now - i * 60 * 60_000,
    })
  }
}

/** How many elements the sidebar holds. */
function elementsIn(page: Page): Promise<number> {
  return new ChatPage(page).sidebar.evaluate((element) => element.querySelectorAll('*').length)
}

test('1,000 conversations: only the lines in view are drawn, and the whole list works by keyboard and search', async ({
  page,
  cairn,
}) => {
  test.setTimeout(180_000)
  await writeConversations(cairn, 1000)
  await cairn.open(page)
  const chat = new ChatPage(page)
  await expect(chat.conversation('Conversation 000')).toBeVisible({ timeout: 60_000 })
  const drawn = await elementsIn(page)
  console.log(`sidebar elements at 1,000 conversations: ${drawn}`)
  expect(drawn).toBeLessThan(800)
  for (const [width, height] of [
    [880, 560],
    [1440, 900],
  ] as const) {
    await page.setViewportSize({ width, height })
    await shootBoth(page, cairn, `conversation-list-windowed-${width}`)
  }
  await page.setViewportSize({ width: 880, height: 560 })

  // The list is one Tab stop; the arrows, Home and End walk all of it, drawing as they go.
  await chat.conversation('Conversation 000').focus()
  await page.keyboard.press('End')
  const last = chat.conversation('Conversation 999')
  await expect(last).toBeFocused()
  await expect(last).toBeInViewport()
  const older = chat.sidebar.getByRole('list', { name: 'Older conversations' })
  const lastItem = older
    .getByRole('listitem')
    .filter({ has: page.getByRole('button', { name: 'Conversation 999', exact: true }) })
  await expect(lastItem).toHaveAttribute(
    'aria-posinset',
    (await lastItem.getAttribute('aria-setsize'))!,
  )
  await page.keyboard.press('ArrowUp')
  await expect(chat.conversation('Conversation 998')).toBeFocused()
  await page.keyboard.press('Home')
  await expect(chat.conversation('Conversation 000')).toBeFocused()
  await expect(chat.conversation('Conversation 000')).toBeInViewport()
  await page.keyboard.press('ArrowDown')
  await expect(chat.conversation('Conversation 001')).toBeFocused()
  // Tab goes to the row's own buttons, then out of the list (not through 1,000 rows).
  await page.keyboard.press('Tab')
  await expect(chat.sidebar.getByRole('button', { name: 'Rename Conversation 001' })).toBeFocused()
  await page.keyboard.press('Tab')
  await expect(chat.sidebar.getByRole('button', { name: 'Delete Conversation 001' })).toBeFocused()
  await page.keyboard.press('Tab')
  expect(
    await page.evaluate(() => document.activeElement?.closest('.conv-groups') ?? null),
  ).toBeNull()

  // F2 on a row far down: renamed, it moves to Today, at the top, and keeps the focus.
  await chat.conversation('Conversation 001').focus()
  await page.keyboard.press('End')
  await page.keyboard.press('ArrowUp')
  await expect(chat.conversation('Conversation 998')).toBeFocused()
  await page.keyboard.press('F2')
  const field = chat.sidebar.getByRole('textbox', { name: 'Conversation title' })
  await expect(field).toBeFocused()
  await page.keyboard.press('End')
  await page.keyboard.type(' renamed')
  await page.keyboard.press('Enter')
  const today = chat.sidebar.getByRole('list', { name: 'Today conversations' })
  const renamed = today.getByRole('button', { name: 'Conversation 998 renamed', exact: true })
  await expect(renamed).toBeFocused()
  await expect(renamed).toBeInViewport()

  // Delete on the last row: the dialog, and Escape gives the focus back to that row.
  await page.keyboard.press('End')
  await expect(last).toBeFocused()
  await page.keyboard.press('Delete')
  await expect(chat.dialog).toBeVisible()
  await page.keyboard.press('Escape')
  await expect(chat.dialog).toHaveCount(0)
  await expect(last).toBeFocused()

  // Search finds a row far down; opened, and the search cleared, it is scrolled into view.
  await chat.search.fill('Conversation 500')
  await expect(chat.conversation('Conversation 000')).toHaveCount(0)
  await chat.conversation('Conversation 500').click()
  await expect(chat.conversation('Conversation 500')).toHaveAttribute('aria-current', 'page')
  await chat.search.fill('')
  // The whole list again (the rows beside it), and the open one in view.
  await expect(chat.conversation('Conversation 501')).toHaveCount(1)
  await expect(chat.conversation('Conversation 500')).toBeInViewport()
  await expect(chat.conversation('Conversation 500')).toHaveAttribute('aria-current', 'page')
  expect(await elementsIn(page)).toBeLessThan(800)
})

test('10,000 conversations: the sidebar holds as many elements as at 1,000, and End reaches the last', async ({
  page,
  cairn,
}) => {
  test.setTimeout(240_000)
  await writeConversations(cairn, 10_000)
  await cairn.open(page)
  const chat = new ChatPage(page)
  await expect(chat.conversation('Conversation 0000')).toBeVisible({ timeout: 120_000 })
  const drawn = await elementsIn(page)
  console.log(`sidebar elements at 10,000 conversations: ${drawn}`)
  expect(drawn).toBeLessThan(800)
  await chat.conversation('Conversation 0000').focus()
  await page.keyboard.press('End')
  await expect(chat.conversation('Conversation 9999')).toBeFocused()
  await expect(chat.conversation('Conversation 9999')).toBeInViewport()
  expect(await elementsIn(page)).toBeLessThan(800)
})

test('scrolled away from the open conversation, one renamed in another window leaves the list where it is', async ({
  page,
  cairn,
}) => {
  test.setTimeout(120_000)
  await writeConversations(cairn, 300)
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.conversation('Conversation 001').click()
  await expect(chat.conversation('Conversation 001')).toHaveAttribute('aria-current', 'page')
  const scroller = chat.sidebar.locator('.conv-groups')
  await scroller.evaluate((element) => element.scrollTo({ top: element.scrollHeight }))
  const last = chat.conversation('Conversation 299')
  await expect(last).toBeInViewport()
  const lastItem = chat.sidebar
    .getByRole('list', { name: 'Previous 30 days conversations' })
    .getByRole('listitem')
    .filter({ has: page.getByRole('button', { name: 'Conversation 299', exact: true }) })
  const size = Number(await lastItem.getAttribute('aria-setsize'))

  // Renamed elsewhere, a conversation of the last group moves to Today, above the open one, shifting it; the
  // list (it had jumped back to the open conversation) stays at the bottom, where one reads.
  await cairn.core.dispatch('conversations:rename', { id: 'c_250', title: 'Renamed elsewhere' })
  await expect(lastItem).toHaveAttribute('aria-setsize', String(size - 1))
  await expect(last).toBeInViewport()
  await expect(chat.conversation('Conversation 001')).toHaveAttribute('aria-current', 'page')

  // Scrolled back to the open conversation, it is followed as the list changes above it.
  await scroller.evaluate((element) => element.scrollTo({ top: 0 }))
  await expect(chat.conversation('Conversation 001')).toBeInViewport()
  await cairn.core.dispatch('conversations:rename', { id: 'c_260', title: 'Renamed again' })
  await expect(chat.conversation('Renamed again')).toBeVisible()
  await expect(chat.conversation('Conversation 001')).toBeInViewport()
})

test('scrolling the list does not re-key every conversation on each frame', async ({
  page,
  cairn,
}) => {
  test.setTimeout(120_000)
  await writeConversations(cairn, 1000)
  await cairn.open(page)
  const chat = new ChatPage(page)
  await expect(chat.conversation('Conversation 000')).toBeVisible({ timeout: 60_000 })
  const scroller = chat.sidebar.locator('.conv-groups')
  // Every line's measured height is looked up in a Map by the line's key when the virtualizer
  // places the lines anew: counted while the list scrolls a little (the same lines drawn).
  const lookUps = await scroller.evaluate(async (element) => {
    const frame = () => new Promise((resolve) => requestAnimationFrame(resolve))
    const get = Map.prototype.get
    let count = 0
    Map.prototype.get = function (this: Map<unknown, unknown>, key: unknown) {
      count += 1
      return get.call(this, key)
    }
    try {
      for (let step = 0; step < 5; step++) {
        element.scrollTop += 2
        await frame()
        await frame()
      }
      // Until the list has settled (it renders again when the scrolling ends).
      await new Promise((resolve) => setTimeout(resolve, 400))
      await frame()
    } finally {
      Map.prototype.get = get
    }
    return count
  })
  console.log(`Map look-ups while scrolling 1,000 conversations: ${lookUps}`)
  // With a new key function each render, each render re-keyed all 1,000 lines (3,145 look-ups
  // where this change was made; 130 after it).
  expect(lookUps).toBeLessThan(1000)
})
