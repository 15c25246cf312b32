/**
 * Issue 6's "every control reachable by keyboard with a visible focus", checked as someone
 * without a mouse works: Tab and the arrow keys only, from the window's first focus.
 */
import type { Page } from '@playwright/test'
import { claudeTurn, create, expect, notesOverwritten, reply, test } from './fixtures/claude-turns'
import { tabTo } from './fixtures/keyboard'
import { ChatPage } from './pages/chat.page'
import { HistoryPage } from './pages/history.page'
import { MemoryPage } from './pages/memory.page'
import { SettingsPage } from './pages/settings.page'

/** A short name for the focused element, to say which stop failed. */
function describeFocus(page: Page): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement
    if (!element || element === document.body) return 'the page itself'
    const role = element.getAttribute('role') ?? element.tagName.toLowerCase()
    const name =
      element.getAttribute('aria-label') ??
      element.getAttribute('title') ??
      (element.textContent ?? '').trim().slice(0, 40)
    return `${role} "${name}"`
  })
}

/** The focused element's box, grown by `pad` pixels on each side (its ring is drawn there). */
function focusBox(page: Page, pad = 6) {
  return page.evaluate((grow) => {
    const element = document.activeElement
    if (!element || element === document.body) return null
    const box = element.getBoundingClientRect()
    const x = Math.max(0, box.left - grow)
    const y = Math.max(0, box.top - grow)
    const width = Math.min(window.innerWidth - x, box.width + 2 * grow)
    const height = Math.min(window.innerHeight - y, box.height + 2 * grow)
    return width > 0 && height > 0 ? { x, y, width, height } : null
  }, pad)
}

/**
 * How plainly a focus indicator shows: the pixels whose colour differs between `focused` and
 * `left` (the same spot once the focus moved on) by a contrast ratio of at least 3:1 (what WCAG
 * 2.4.13 asks of a focus indicator). Decoded in `scratch`, a blank page of its own.
 */
function strongPixels(scratch: Page, focused: Buffer, left: Buffer): Promise<number> {
  return scratch.evaluate(
    async ([a, b]) => {
      const pixels = async (base64: string) => {
        const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))
        const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }))
        const canvas = new OffscreenCanvas(bitmap.width, bitmap.height)
        const context = canvas.getContext('2d')!
        context.drawImage(bitmap, 0, 0)
        return context.getImageData(0, 0, bitmap.width, bitmap.height).data
      }
      const [one, two] = await Promise.all([pixels(a), pixels(b)])
      const channel = (value: number) => {
        const c = value / 255
        return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
      }
      const luminance = (data: Uint8ClampedArray, i: number) =>
        0.2126 * channel(data[i]!) + 0.7152 * channel(data[i + 1]!) + 0.0722 * channel(data[i + 2]!)
      let strong = 0
      for (let i = 0; i < one.length; i += 4) {
        const [x, y] = [luminance(one, i), luminance(two, i)]
        if ((Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05) >= 3) strong++
      }
      return strong
    },
    [focused.toString('base64'), left.toString('base64')] as const,
  )
}

/**
 * Walks every Tab stop from where the focus is now until the focus comes back to the first one
 * (or `limit` stops), and returns the stops where fewer than `minimum` pixels changed plainly
 * (3:1) as the focus left them: nothing, or next to nothing, showed where the keyboard was.
 */
async function stopsWithoutVisibleFocus(
  page: Page,
  limit: number,
  minimum = 20,
): Promise<{ readonly visited: number; readonly unseen: ReadonlyArray<string> }> {
  const scratch = await page.context().newPage()
  await page.bringToFront()
  const unseen: string[] = []
  let visited = 0
  try {
    const first = await describeFocus(page)
    for (let stop = 0; stop < limit; stop++) {
      const name = await describeFocus(page)
      if (stop > 0 && name === first) break
      visited++
      const clip = await focusBox(page)
      const focused = clip && (await page.screenshot({ clip, animations: 'disabled' }))
      await page.keyboard.press('Tab')
      if (!clip || !focused) continue
      const left = await page.screenshot({ clip, animations: 'disabled' })
      const strong = await strongPixels(scratch, focused, left)
      if (strong < minimum) unseen.push(`${name} (${strong} px)`)
    }
  } finally {
    await scratch.close()
  }
  return { visited, unseen }
}

test('every Tab stop of the main window and of Settings shows where the focus is', async ({
  page,
  cairn,
  anthropic,
}) => {
  // Two screenshots per stop, some 80 stops: slow on a busy machine.
  test.setTimeout(180_000)
  await claudeTurn(cairn, anthropic, 'Remember my tea', [
    create('/memories/notes.md', '# Notes\n\nLikes green tea.\n'),
    reply.text('Saved to **notes.md**.'),
  ])
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.openConversation('Remember my tea')
  await expect(chat.lastReply()).toContainText('Saved to notes.md.')
  await chat.composer.focus()
  const main = await stopsWithoutVisibleFocus(page, 120)
  expect(main.unseen).toEqual([])
  // The walk went round the whole window (18 stops: chat, sidebar, side pane), not a corner.
  expect(main.visited).toBeGreaterThan(12)

  const settings = new SettingsPage(page)
  await page.keyboard.press('ControlOrMeta+Comma')
  await expect(settings.keyStatus).toBeVisible()
  // Inside the modal: every stop is in the dialog and visible; the page behind is out of reach.
  const outside: string[] = []
  for (let stop = 0; stop < 60; stop++) {
    await page.keyboard.press('Tab')
    const inside = await page.evaluate(
      () =>
        document.activeElement?.closest('dialog') !== null ||
        document.activeElement === document.body,
    )
    if (!inside) outside.push(await describeFocus(page))
  }
  expect(outside).toEqual([])
  // From the dialog's first control (the loop above may have left the focus with the browser).
  await settings.dialog.getByRole('button', { name: 'Close settings' }).focus()
  const dialog = await stopsWithoutVisibleFocus(page, 60)
  expect(dialog.unseen).toEqual([])
  expect(dialog.visited).toBeGreaterThan(6)
  test.info().annotations.push({
    type: 'tab stops',
    description: `${main.visited} in the window, ${dialog.visited} in Settings`,
  })
  await page.keyboard.press('Escape')
  await expect(settings.dialog).toBeHidden()
  await expect(chat.composer).toBeFocused()
})

test('a version is found, compared, restored and the restore undone, by keyboard alone', async ({
  page,
  cairn,
  anthropic,
}) => {
  await notesOverwritten(cairn, anthropic)
  await cairn.open(page)
  const chat = new ChatPage(page)
  const history = new HistoryPage(page)
  const memory = new MemoryPage(page)
  await expect(chat.composer).toBeFocused()

  // To History, into its timeline, down to the version before the overwrite.
  await page.keyboard.press('ControlOrMeta+2')
  await tabTo(page, history.timeline)
  await page.keyboard.press('ArrowDown')
  await page.keyboard.press('ArrowDown')
  await expect(history.timeline.getByRole('row', { selected: true })).not.toContainText('Overwrite')
  await expect(history.detail).toContainText('Pet: a cat called Miso')

  // Compare side by side, then restore that version.
  const sideBySide = history.detail.getByRole('button', { name: 'Side by side' })
  await tabTo(page, sideBySide)
  await page.keyboard.press('Enter')
  await expect(sideBySide).toHaveAttribute('aria-pressed', 'true')
  const restore = history.fileDiff('notes.md').getByRole('button', { name: 'Restore this version' })
  await tabTo(page, restore)
  await page.keyboard.press('Enter')
  await expect(history.dialog).toContainText('notes.md will get back the content it had')
  await tabTo(page, history.dialog.getByRole('button', { name: 'Restore file' }))
  await page.keyboard.press('Enter')
  await expect(history.notice).toContainText('Restored notes.md')

  // The result's Undo, by keyboard too.
  const undo = history.notice.getByRole('button', { name: 'Undo' })
  await tabTo(page, undo)
  await page.keyboard.press('Enter')
  await expect(history.notice).toContainText('Undone')
  await expect(history.count).toHaveText('4 changes')

  // The file as it stands, opened from the Memory tab's tree with the keyboard.
  await page.keyboard.press('ControlOrMeta+1')
  await tabTo(page, memory.item('notes.md'))
  await page.keyboard.press('Enter')
  await expect(memory.content('notes.md')).toContainText('Favourite colour: green')
  await expect(memory.content('notes.md')).not.toContainText('Miso')
})

test('the message box: Shift+Enter starts a line, Enter sends, blank text is never sent', async ({
  page,
  cairn,
  anthropic,
}) => {
  anthropic.script(reply.text('Two lines received.'))
  await cairn.open(page)
  const chat = new ChatPage(page)
  await expect(chat.composer).toBeFocused()
  // Blank: Enter does nothing, and Send stays unavailable.
  await page.keyboard.type('   ')
  await page.keyboard.press('Shift+Enter')
  await page.keyboard.press('Enter')
  await expect(chat.userMessages()).toHaveCount(0)
  await expect(chat.sendButton).toBeDisabled()
  await chat.composer.fill('')

  await page.keyboard.type('First line')
  await page.keyboard.press('Shift+Enter')
  await page.keyboard.type('Second line')
  await expect(chat.composer).toHaveValue('First line\nSecond line')
  await page.keyboard.press('Enter')
  await expect(chat.userMessages()).toHaveText(['First line\nSecond line'])
  await expect(chat.lastReply()).toContainText('Two lines received.')
  await expect(chat.composer).toHaveValue('')
  await expect(chat.composer).toBeFocused()
  expect(JSON.stringify(anthropic.messageRequests()[0]!.body)).toContain('First line\\nSecond line')
})
