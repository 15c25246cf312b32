/**
 * The error a turn ended with is kept with its conversation: a window opened later (reloaded,
 * or after a restart) still says why the chat ends with the person's message, and Retry sends it
 * again; the next message clears it for good.
 */
import type { Locator, Page } from '@playwright/test'
import { reply, type FakeAnthropic } from '../test/fixtures/fake-anthropic'
import { expect, test, type Cairn } from './fixtures/harness'
import { ChatPage } from './pages/chat.page'

test.beforeEach(async ({ cairn }) => {
  await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-turn-error' })
})

/** Opens Cairn and sends a message whose reply comes back empty (a proxy's 502 page). */
async function sendIntoEmptyReply(
  page: Page,
  cairn: Cairn,
  anthropic: FakeAnthropic,
): Promise<{ chat: ChatPage; banner: Locator }> {
  anthropic.script(reply.raw('<html><body>502 Bad Gateway</body></html>'))
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.send('Are you there?')
  return { chat, banner: chat.transcript.getByRole('alert', { name: 'The reply was empty' }) }
}

test('an empty reply is still explained after a reload, until the next send', async ({
  page,
  cairn,
  anthropic,
}) => {
  const { chat, banner } = await sendIntoEmptyReply(page, cairn, anthropic)
  await expect(banner).toContainText('nothing of Claude’s answer came')

  await page.reload()
  await chat.openConversation('Are you there?')
  await expect(chat.userMessages()).toHaveText(['Are you there?'])
  await expect(banner).toContainText('nothing of Claude’s answer came')
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    await page.screenshot({ path: test.info().outputPath(`kept-error-${colorScheme}.png`) })
  }

  anthropic.script(reply.text('Yes, here now.'))
  await banner.getByRole('button', { name: 'Retry' }).click()
  await expect(chat.lastReply()).toContainText('Yes, here now.')
  await expect(chat.userMessages()).toHaveText(['Are you there?'])
  await expect(banner).toHaveCount(0)
  await page.reload()
  await chat.openConversation('Are you there?')
  await expect(chat.lastReply()).toContainText('Yes, here now.')
  await expect(chat.transcript.getByRole('alert')).toHaveCount(0)
})

test('Retry keeps the next message the person has begun to type', async ({
  page,
  cairn,
  anthropic,
}) => {
  const { chat, banner } = await sendIntoEmptyReply(page, cairn, anthropic)
  await expect(banner).toBeVisible()
  await chat.composer.fill('And one more thing, half typ')

  anthropic.script(reply.text('Yes, here now.'))
  await banner.getByRole('button', { name: 'Retry' }).click()
  await expect(chat.lastReply()).toContainText('Yes, here now.')
  // Sent again in the failed one's place: one copy on screen, in the store and to Claude.
  await expect(chat.userMessages()).toHaveText(['Are you there?'])
  const sent = anthropic.messageRequests().at(-1)!.body as {
    messages: Array<{ role: string; content: unknown }>
  }
  expect(sent.messages).toMatchObject([
    { role: 'user', content: [{ type: 'text', text: 'Are you there?' }] },
  ])
  expect(sent.messages).toHaveLength(1)
  // The draft is the person's: Retry sends the failed prompt and leaves it as it was.
  await expect(chat.composer).toHaveValue('And one more thing, half typ')
  await page.reload()
  await chat.openConversation('Are you there?')
  await expect(chat.lastReply()).toContainText('Yes, here now.')
  await expect(chat.userMessages()).toHaveText(['Are you there?'])
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    await page.screenshot({ path: test.info().outputPath(`retry-kept-draft-${colorScheme}.png`) })
  }
})

test('a declined reply says so after a reload; dismissed, it stays away, after a reload too', async ({
  page,
  cairn,
  anthropic,
}) => {
  anthropic.script(reply.message([{ type: 'text', text: 'I will not help with that.' }], 'refusal'))
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.send('Help me with that')
  await expect(chat.lastReply()).toContainText('I will not help with that.')

  await page.reload()
  await chat.openConversation('Help me with that')
  const banner = chat.transcript.getByRole('alert', { name: 'Claude declined to answer' })
  await expect(banner).toContainText('The reply ended as a refusal.')
  await banner.getByRole('button', { name: /dismiss/i }).click()
  await expect(banner).toHaveCount(0)
  await expect(chat.lastReply()).toContainText('I will not help with that.')
  // Forgotten in the conversation itself, not only in this window.
  await page.reload()
  await chat.openConversation('Help me with that')
  await expect(chat.lastReply()).toContainText('I will not help with that.')
  await expect(banner).toHaveCount(0)
})

test('an error dismissed as the turn ends stays away after a reload', async ({
  page,
  cairn,
  anthropic,
}) => {
  anthropic.script(reply.raw('<html><body>502 Bad Gateway</body></html>'))
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.send('Are you there?')
  const banner = chat.transcript.getByRole('alert', { name: 'The reply was empty' })
  await banner.getByRole('button', { name: /dismiss/i }).click()
  await expect(banner).toHaveCount(0)
  await page.reload()
  await chat.openConversation('Are you there?')
  await expect(chat.userMessages()).toHaveText(['Are you there?'])
  await expect(banner).toHaveCount(0)
})
