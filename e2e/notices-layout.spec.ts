import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Locator, Page } from '@playwright/test'
import { createCore, type Core } from '../src/main/core'
import { attachCore, expect, test } from './fixtures/harness'
import { shoot } from './fixtures/screens'
import { ChatPage } from './pages/chat.page'

/** The box of `locator`, which must be on the page. */
async function boxOf(locator: Locator) {
  const box = await locator.boundingBox()
  if (!box) throw new Error('not laid out')
  return box
}

/** True when the element at the middle of `locator`'s box is that element or inside it. */
async function hitAtMiddle(locator: Locator): Promise<boolean> {
  return locator.evaluate((element) => {
    const box = element.getBoundingClientRect()
    const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2)
    return hit !== null && element.contains(hit)
  })
}

/**
 * Whether the line between the notices and the chat is drawn whole: a row of pixels across the
 * stack's width, at its bottom edge (its own last row or the one just below), every pixel in
 * the theme's border colour. Read from a real screenshot, decoded in the page.
 */
async function lineUnderNoticesIsWhole(page: Page, stack: Locator): Promise<boolean> {
  const box = await boxOf(stack)
  const edge = Math.round(box.y + box.height)
  const x = Math.ceil(box.x)
  const png = await page.screenshot({
    clip: { x, y: edge - 2, width: Math.floor(box.x + box.width) - x, height: 4 },
  })
  return page.evaluate(async (base64) => {
    const probe = document.createElement('div')
    probe.style.color = 'var(--border)'
    document.body.append(probe)
    const [r, g, b] = (getComputedStyle(probe).color.match(/\d+/g) ?? []).map(Number)
    probe.remove()
    const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0))
    const image = await createImageBitmap(new Blob([bytes], { type: 'image/png' }))
    const canvas = new OffscreenCanvas(image.width, image.height)
    const context = canvas.getContext('2d')
    if (!context || r === undefined || g === undefined || b === undefined) return false
    context.drawImage(image, 0, 0)
    const { data, width, height } = context.getImageData(0, 0, image.width, image.height)
    const near = (i: number) =>
      Math.abs(data[i]! - r) <= 2 &&
      Math.abs(data[i + 1]! - g) <= 2 &&
      Math.abs(data[i + 2]! - b) <= 2
    for (let row = 0; row < height; row++) {
      let whole = true
      for (let column = 0; column < width && whole; column++)
        whole = near((row * width + column) * 4)
      if (whole) return true
    }
    return false
  }, png.toString('base64'))
}

/**
 * The notices stack is no taller than a third of the window and scrolls itself: its last
 * banner, brought into view, is whole inside it and can take focus. Every suggestion of the
 * welcome screen, brought into view, sits whole above the composer and is what a click there
 * reaches.
 */
async function expectChatReachable(page: Page, chat: ChatPage, stack: Locator) {
  const window = page.viewportSize()
  if (!window) throw new Error('no viewport')
  const stackBox = await boxOf(stack)
  expect(stackBox.height).toBeLessThanOrEqual(window.height / 3 + 1)
  const last = stack.getByRole('status').last()
  const dismissLast = last.getByRole('button', { name: 'Dismiss' })
  // By keyboard: focused, its button is scrolled into the stack and is what a click reaches.
  await stack.evaluate((element) => element.scrollTo({ top: 0 }))
  await dismissLast.focus()
  await expect(dismissLast).toBeFocused()
  expect(await hitAtMiddle(dismissLast)).toBe(true)
  // By scrolling: the whole banner shows inside the stack.
  await last.scrollIntoViewIfNeeded()
  const lastBox = await boxOf(last)
  expect(lastBox.y).toBeGreaterThanOrEqual(stackBox.y - 1)
  expect(lastBox.y + lastBox.height).toBeLessThanOrEqual(stackBox.y + stackBox.height + 1)
  // Its bottom fades while more notices wait below, and not once the last one shows; the line
  // under it stays whole either way (it faded with the notices once).
  await stack.evaluate((element) => element.scrollTo({ top: element.scrollHeight }))
  await expect(stack).not.toHaveAttribute('data-more-below')
  expect(await lineUnderNoticesIsWhole(page, stack)).toBe(true)
  await stack.evaluate((element) => element.scrollTo({ top: 0 }))
  await expect(stack).toHaveAttribute('data-more-below', '')
  expect(await lineUnderNoticesIsWhole(page, stack)).toBe(true)

  const composerTop = (await boxOf(chat.pane.getByRole('form', { name: 'Message composer' }))).y
  const header = await boxOf(chat.title)
  const suggestions = chat.welcome.getByRole('group', { name: 'Suggestions' }).getByRole('button')
  await expect(suggestions).toHaveCount(3)
  for (const suggestion of await suggestions.all()) {
    await suggestion.scrollIntoViewIfNeeded()
    const box = await boxOf(suggestion)
    expect(box.y).toBeGreaterThanOrEqual(header.y + header.height)
    expect(box.y + box.height).toBeLessThanOrEqual(composerTop)
    expect(await hitAtMiddle(suggestion)).toBe(true)
  }
  const lastSuggestion = suggestions.last()
  await lastSuggestion.click()
  await expect(chat.composer).toHaveValue((await lastSuggestion.textContent()) ?? '')
  await chat.composer.fill('')
}

// However many notices the core has, the chat under them stays whole: the notices take at most
// a third of the window and scroll, and the welcome screen scrolls in the room left above the
// composer — in a full window and a short one, light and dark.
test('notices never hide the chat: their stack is capped and scrolls, the welcome stays reachable', async ({
  page,
  anthropic,
  rendererServer,
}) => {
  const dataDir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-notices-')))
  const memories = path.join(dataDir, 'memories')
  await mkdir(memories, { recursive: true })
  // Five names History refuses (a backslash): five notices at open.
  for (let i = 1; i <= 5; i++)
    await writeFile(path.join(memories, `draft\\${i}.md`), `Draft ${i}\n`)
  let core: Core | null = null
  let stop = () => {}
  try {
    core = await createCore({
      appVersion: '0.1.0-e2e',
      env: { ANTHROPIC_API_KEY: 'sk-ant-e2e-key', ANTHROPIC_BASE_URL: anthropic.url },
      anthropicMaxRetries: 0,
      dataDir,
      logger: { warn: () => {}, error: () => {} },
    })
    stop = await attachCore(page, core)
    await page.goto(rendererServer.url)
    const chat = new ChatPage(page)
    const stack = chat.pane.getByRole('region', { name: 'Notices' })
    await expect(stack.getByRole('status', { name: 'A file is not versioned' })).toHaveCount(5)
    // A sixth: an edit made outside Cairn while the window is open.
    await writeFile(path.join(memories, 'notes.md'), 'Prefers trains.\n')
    await expect(
      stack.getByRole('status', { name: 'Edits made outside Cairn saved' }),
    ).toBeVisible()
    await expect(chat.welcome).toBeVisible()

    for (const size of [
      { width: 1280, height: 800 },
      { width: 1000, height: 600 },
    ]) {
      await page.setViewportSize(size)
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme })
        await expectChatReachable(page, chat, stack)
        await stack.evaluate((element) => element.scrollTo({ top: 0 }))
        await shoot(page, { dataDir }, `notices-stack-${size.width}x${size.height}-${scheme}`)
      }
    }
    // Dismissed down to what fits: nothing is below, so nothing fades.
    const unversioned = stack.getByRole('status', { name: 'A file is not versioned' })
    for (let left = 5; left > 0; left--) {
      await unversioned.first().getByRole('button', { name: 'Dismiss' }).click()
      await expect(unversioned).toHaveCount(left - 1)
    }
    await expect(stack).not.toHaveAttribute('data-more-below')
  } finally {
    stop()
    await core?.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})
