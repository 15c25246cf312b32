import { claudeTurn, expect, reply, test } from './fixtures/claude-turns'
import { ChatPage } from './pages/chat.page'

const LONG = 'A long answer to read. '.repeat(300)

/**
 * Clicks "Jump to latest" and says, in the same moment, how far the transcript still is from
 * its end (px): 0 when it jumped, more while a smooth scroll is only beginning.
 */
async function distanceRightAfterJump(chat: ChatPage): Promise<number> {
  const jump = await chat.jumpToLatest.elementHandle()
  return chat.transcript.evaluate((log, button) => {
    // The log is drawn inside the element that scrolls.
    const scroller = log.parentElement
    if (!scroller || !button) throw new Error('the transcript or its button is gone')
    ;(button as HTMLButtonElement).click()
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight
  }, jump)
}

test('with reduced motion asked for, Jump to latest jumps instead of scrolling smoothly', async ({
  page,
  cairn,
  anthropic,
}) => {
  let id: string | null = null
  for (const question of ['First question', 'Second question', 'Third question']) {
    id = await claudeTurn(cairn, anthropic, question, [reply.text(LONG)], id)
  }
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.openConversation('First question')
  await expect(chat.lastReply()).toBeInViewport()

  // Without the preference the jump glides (so the check below can tell the two apart).
  await chat.scrollTranscriptUp(4000)
  await expect(chat.jumpToLatest).toBeVisible()
  expect(await distanceRightAfterJump(chat)).toBeGreaterThan(100)
  await expect(chat.jumpToLatest).toBeHidden()

  await page.emulateMedia({ reducedMotion: 'reduce' })
  await chat.scrollTranscriptUp(4000)
  await expect(chat.jumpToLatest).toBeVisible()
  expect(await distanceRightAfterJump(chat)).toBeLessThan(1)
  await expect(chat.lastReply()).toBeInViewport()
  await expect(chat.jumpToLatest).toBeHidden()
})

test('with reduced motion asked for, the thinking dots stand still and still show', async ({
  page,
  cairn,
  anthropic,
}) => {
  await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-reduced-motion' })
  // The API never answers: Claude is thinking until the person stops the turn.
  anthropic.script(reply.raw('', { head: false, ending: 'hang' }))
  await cairn.open(page)
  const chat = new ChatPage(page)
  const thinking = chat.transcript.getByRole('status', { name: 'Claude is thinking' })
  const moving = () => thinking.evaluate((dots) => dots.getAnimations({ subtree: true }).length)

  // Without the preference the dots pulse (so the check below can tell the two apart).
  await chat.send('Think first')
  await expect(thinking).toBeVisible()
  expect(await moving()).toBeGreaterThan(0)

  await page.emulateMedia({ reducedMotion: 'reduce' })
  await expect(thinking).toBeVisible()
  expect(await moving()).toBe(0)
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    await thinking.screenshot({ path: test.info().outputPath(`thinking-still-${colorScheme}.png`) })
  }
  await chat.stopButton.click()
  await expect(thinking).toBeHidden()
})
