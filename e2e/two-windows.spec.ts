/**
 * Two windows on one core (a second window, or the app's window beside a test's), as issue 6's
 * chat promises hold in each: a reply streams in both, Stop works from either, and the chat goes
 * on from the other one with both showing every turn.
 */
import { reply } from '../test/fixtures/fake-anthropic'
import { expect, test } from './fixtures/harness'
import { ChatPage } from './pages/chat.page'
import { MemoryPage } from './pages/memory.page'

test('a reply streams in both windows, Stop in the other one ends it, and either goes on', async ({
  page,
  cairn,
  anthropic,
}) => {
  await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-two-windows' })
  let release!: () => void
  const hold = new Promise<void>((resolve) => (release = resolve))
  anthropic.script(
    reply.toolUse({
      input: { command: 'create', path: '/memories/week.md', file_text: 'Monday: rest\n' },
    }),
    reply.text('Your week is planned: Monday is for rest, and the rest follows.', { hold }),
    reply.text('Tuesday: a long walk by the river.'),
  )
  await cairn.open(page)
  const second = await page.context().newPage()
  await cairn.open(second)
  const here = new ChatPage(page)
  const there = new ChatPage(second)
  try {
    await here.send('Plan my week')
    await expect(here.lastReply()).toContainText('Your week')

    // The other window lists the new chat, and shows its reply and card as they come.
    await there.openConversation('Plan my week')
    await expect(there.userMessages()).toHaveText(['Plan my week'])
    await expect(there.lastReply()).toContainText('Your week')
    await expect(there.toolCard('create', '/memories/week.md')).toContainText('Done')
    await expect(new MemoryPage(second).item('week.md')).toBeVisible()
    await expect(there.stopButton).toBeVisible()
    await expect(there.composer).toBeDisabled()

    await there.stopButton.click()
    for (const chat of [there, here]) {
      await expect(chat.transcript).toContainText('You stopped the last reply')
      await expect(chat.stopButton).toBeHidden()
      await expect(chat.composer).toBeEnabled()
    }
  } finally {
    release()
  }

  await there.send('Go on.')
  for (const chat of [there, here]) {
    await expect(chat.lastReply()).toContainText('Tuesday: a long walk by the river.')
    await expect(chat.userMessages()).toHaveText(['Plan my week', 'Go on.'])
    await expect(chat.replies()).toHaveCount(2)
  }
})
