/**
 * Issue 6's promises tried the unkind way: right-to-left text in titles longer than the window
 * is wide, messages, replies and the message box, at the smallest window (880×560), light and
 * dark; a memory file of several MB.
 * Screenshots go to e2e/artifacts (acceptance-6-<screen>-<scheme>).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Locator } from '@playwright/test'
import { expect, shoot, test } from './fixtures/screens'
import { writeConversation } from './fixtures/stored-conversations'
import { ChatPage } from './pages/chat.page'
import { MemoryPage } from './pages/memory.page'

/** Where `word` is drawn (its first place in the element's text), and the element's own box. */
function drawn(
  element: Locator,
  word: string,
): Promise<{ readonly word: DOMRect | null; readonly box: DOMRect }> {
  return element.evaluate((box, sought) => {
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT)
    let word: DOMRect | null = null
    for (let node = walker.nextNode(); node && !word; node = walker.nextNode()) {
      const at = node.textContent?.indexOf(sought) ?? -1
      if (at < 0) continue
      const range = document.createRange()
      range.setStart(node, at)
      range.setEnd(node, at + sought.length)
      word = range.getBoundingClientRect().toJSON() as DOMRect
    }
    return { word, box: box.getBoundingClientRect().toJSON() as DOMRect }
  }, word)
}

/** Whether `word` is drawn inside the element's box (not cut off by its end). */
async function drawnInside(element: Locator, word: string): Promise<boolean> {
  const { word: at, box } = await drawn(element, word)
  return at !== null && at.left >= box.left - 0.5 && at.right <= box.right + 0.5
}

/** Whether `first` is drawn to the left of `second` in the element. */
async function leftOf(element: Locator, first: string, second: string): Promise<boolean> {
  const [a, b] = [(await drawn(element, first)).word, (await drawn(element, second)).word]
  return a !== null && b !== null && a.right <= b.left + 0.5
}

for (const scheme of ['light', 'dark'] as const) {
  test(`right-to-left text reads from its start: long titles, messages, replies and the message box (${scheme})`, async ({
    page,
    cairn,
  }) => {
    await page.emulateMedia({ colorScheme: scheme })
    await page.setViewportSize({ width: 880, height: 560 })
    const title = 'שיחה ארוכה מאוד על תכנון הטיול לצפון עם הרבה פרטים ועוד כמה מילים בסוף'
    const folder = path.join(cairn.dataDir, 'conversations')
    await mkdir(folder, { recursive: true })
    const now = Date.now()
    await writeFile(
      path.join(folder, 'c_hebrew.json'),
      JSON.stringify({
        version: 1,
        id: 'c_hebrew',
        title,
        createdAt: now,
        updatedAt: now,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'מה שלומך?' }], createdAt: now },
          {
            role: 'assistant',
            content: [
              {
                type: 'text',
                text: '## תשובה קצרה?\n\nהכול טוב, תודה!\n\n- פריט\n\n> ציטוט\n\n| ראשון | שני |\n| --- | --- |\n| תא | תא |',
              },
            ],
            stopReason: 'end_turn',
            usage: null,
            createdAt: now + 1,
          },
        ],
        toolCommits: {},
      }),
    )
    await cairn.open(page)
    const chat = new ChatPage(page)
    const listed = chat.conversation(title)
    await expect(listed).toBeVisible()
    // The person reads it from its first word; the cut falls at its end, not its start.
    expect(await drawnInside(listed, 'שיחה'), 'the title’s first word is hidden').toBe(true)
    expect(await drawnInside(listed, 'בסוף'), 'the title is not cut').toBe(false)

    await chat.openConversation(title)
    await expect(chat.title).toHaveText(title)
    expect(await drawnInside(chat.title, 'שיחה'), 'the heading’s first word is hidden').toBe(true)
    // A sentence's end mark stands at its end: left of the words, in right-to-left text.
    const message = chat.userMessages().first()
    await expect(message).toHaveText('מה שלומך?')
    expect(await leftOf(message, '?', 'שלומך'), 'the question mark is at the start').toBe(true)
    const answer = chat.lastReply()
    await expect(answer).toContainText('הכול טוב, תודה!')
    expect(await leftOf(answer, '!', 'תודה'), 'the exclamation mark is at the start').toBe(true)
    expect(await leftOf(answer, '?', 'קצרה'), 'the heading’s question mark is at the start').toBe(
      true,
    )
    // So do a list item and a table's cells, each by its own first letters.
    for (const part of [
      answer.getByRole('listitem'),
      answer.getByRole('columnheader').first(),
      answer.getByRole('cell').first(),
    ]) {
      expect(await part.evaluate((element) => element.matches(':dir(rtl)'))).toBe(true)
    }
    // And the blocks that hold them: the table's first column on the right, the list's bullets
    // and the quote's bar on the right (their room, left of the words, on that side).
    const table = answer.getByRole('table')
    expect(await leftOf(table, 'שני', 'ראשון'), 'the first column is on the left').toBe(true)
    const list = answer.getByRole('list')
    const item = (await drawn(answer.getByRole('listitem'), 'פריט')).box
    const { box: listBox } = await drawn(list, 'פריט')
    expect(listBox.right - item.right, 'the bullets’ room is on the left').toBeGreaterThan(10)
    const tableBox = (await drawn(table, 'ראשון')).box
    expect(Math.abs(listBox.right - tableBox.right), 'the table stands at the left').toBeLessThan(1)
    const quote = answer.getByRole('blockquote')
    const quoted = await drawn(quote, 'ציטוט')
    expect(quoted.box.right - quoted.word!.right, 'the quote’s bar is on the left').toBeGreaterThan(
      10,
    )

    await chat.composer.fill('שלום, אני כאן!')
    // What is typed sets the box's direction (its text is no node a range can measure).
    expect(await chat.composer.evaluate((box) => box.matches(':dir(rtl)'))).toBe(true)
    await shoot(page, cairn, `acceptance-6-rtl-${scheme}`)
  })
}

test('a memory file of several MB opens at its first lines, draws only the lines in view, and a search hit far down opens in view', async ({
  page,
  cairn,
}) => {
  test.setTimeout(120_000)
  // 40,000 lines of 100 bytes: 4 MB, well under what the Memory tab opens (32 MB).
  const lines = Array.from({ length: 40_000 }, (_, i) =>
    `Line ${i + 1}: ${'the river keeps its bed. '.repeat(4)}`.slice(0, 99),
  )
  lines[11_999] = 'Line 12000: the kingfisher nests here.'
  await writeFile(path.join(cairn.dataDir, 'memories', 'atlas.md'), `${lines.join('\n')}\n`)
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('atlas.md')
  const content = memory.content('atlas.md')
  await expect(content).toContainText('Line 1: the river')
  // Only the lines in view are drawn (three elements each), not all 40,000.
  expect(await content.evaluate((region) => region.getElementsByTagName('*').length)).toBeLessThan(
    400,
  )
  await expect(content.getByText('Line 10001: the river')).toHaveCount(0)

  // A search hit far below opens at its line, in view.
  await memory.searchFor('kingfisher')
  await memory.searchResults.getByRole('button', { name: /kingfisher/ }).click()
  await expect(content.getByText('Line 12000: the kingfisher nests here.')).toBeInViewport({
    timeout: 30_000,
  })
  await memory.searchFor('')

  // The keyboard reaches the end of the file.
  await content.focus()
  await page.keyboard.press('End')
  await expect(content.getByText('Line 40000: the river', { exact: false })).toBeInViewport()
  await shoot(page, cairn, 'acceptance-6-large-file-light')
  await page.emulateMedia({ colorScheme: 'dark' })
  await shoot(page, cairn, 'acceptance-6-large-file-dark')
})

test('a file another program deletes while it is open, then while it is edited, is said gone, and the text typed is saved back', async ({
  page,
  cairn,
}) => {
  const folder = path.join(cairn.dataDir, 'memories')
  await writeFile(path.join(folder, 'errands.md'), 'Buy stamps\n')
  await writeFile(path.join(folder, 'garden.md'), 'Water the ferns\n')
  await cairn.open(page)
  const memory = new MemoryPage(page)

  // Open only: the view says the file is gone and where to find it again.
  await memory.openFile('errands.md')
  await expect(memory.content('errands.md')).toContainText('Buy stamps')
  await rm(path.join(folder, 'errands.md'))
  await expect(memory.pane).toContainText('errands.md is no longer in memory')
  await expect(memory.pane.getByRole('button', { name: 'Show history' })).toBeVisible()

  // Being edited: the text typed stays, the words name what could have done it, Save writes it.
  const editor = await memory.typeAtEnd('garden.md', 'Sow the beans\n')
  await rm(path.join(folder, 'garden.md'))
  const gone = memory.pane.getByRole('alert')
  await expect(gone).toContainText('garden.md was renamed or deleted while you were editing')
  await expect(gone).toContainText('another program')
  await expect(editor).toHaveValue('Water the ferns\nSow the beans\n')
  await shoot(page, cairn, 'acceptance-6-edited-file-gone-light')
  await page.emulateMedia({ colorScheme: 'dark' })
  await shoot(page, cairn, 'acceptance-6-edited-file-gone-dark')
  await editor.press('ControlOrMeta+s')
  await expect(memory.notice).toContainText('Saved garden.md')
  const read = await cairn.core.dispatch('memory:read', { path: '/memories/garden.md' })
  expect(read.ok && (read.value as { text: string }).text).toBe('Water the ferns\nSow the beans\n')
})

test('the conversation list by keyboard: a rename or a delete dialog closed gives the focus back to the row; a delete, to the list', async ({
  page,
  cairn,
}) => {
  const now = Date.now()
  for (const [id, title, age] of [
    ['c_alpha', 'Alpha', 0],
    ['c_bravo', 'Bravo', 1],
    ['c_charlie', 'Charlie', 2],
    ['c_delta', 'Delta', 3 * 24 * 60],
  ] as const) {
    await writeConversation(cairn.dataDir, { id, title, at: now - age * 60_000 })
  }
  await cairn.open(page)
  const chat = new ChatPage(page)
  const field = chat.sidebar.getByRole('textbox', { name: 'Conversation title' })

  await chat.conversation('Alpha').focus()
  await page.keyboard.press('F2')
  await expect(field).toBeFocused()
  await page.keyboard.press('Escape')
  await expect(field).toHaveCount(0)
  await expect(chat.conversation('Alpha')).toBeFocused()

  await page.keyboard.press('F2')
  await page.keyboard.press('End')
  await page.keyboard.type(' and Omega')
  await page.keyboard.press('Enter')
  await expect(chat.conversation('Alpha and Omega')).toBeFocused()
  // The focus can go on from there: Tab reaches the row's own Rename button.
  await page.keyboard.press('Tab')
  await expect(chat.sidebar.getByRole('button', { name: 'Rename Alpha and Omega' })).toBeFocused()

  await chat.conversation('Bravo').focus()
  await page.keyboard.press('Delete')
  await expect(chat.dialog).toBeVisible()
  await page.keyboard.press('Escape')
  await expect(chat.dialog).toHaveCount(0)
  await expect(chat.conversation('Bravo')).toBeFocused()

  // Deleted: its row goes, and the list has the focus (its first row), where Tab goes on.
  await page.keyboard.press('Delete')
  await page.keyboard.press('Tab')
  const confirm = chat.dialog.getByRole('button', { name: 'Delete conversation' })
  await expect(confirm).toBeFocused()
  await page.keyboard.press('Enter')
  await expect(chat.conversation('Bravo')).toHaveCount(0)
  await expect(chat.conversation('Alpha and Omega')).toBeFocused()

  // A row three days old, renamed, moves to Today once the list reloads: it keeps the focus.
  await chat.conversation('Delta').focus()
  await page.keyboard.press('F2')
  await page.keyboard.press('End')
  await page.keyboard.type(' Force')
  await page.keyboard.press('Enter')
  const today = chat.sidebar.getByRole('list', { name: 'Today conversations' })
  await expect(today.getByRole('button', { name: 'Delta Force', exact: true })).toBeFocused()
})
