/**
 * A window reloaded, or a second one opened, while Claude answers: it asks the core which
 * turn runs (`chat:running`) and shows the reply so far, its memory card, Stop, and a composer
 * that says a reply is running; the rest streams in once, without a gap or a double.
 */
import { reply } from '../test/fixtures/fake-anthropic'
import { expect, test } from './fixtures/harness'
import { ChatPage } from './pages/chat.page'

const ANSWER = 'A long answer that is still being written, slowly and with care.'

test.beforeEach(async ({ cairn }) => {
  await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-running-turn' })
})

test('a window reloaded while a reply streams shows it so far, Stop works', async ({
  page,
  cairn,
  anthropic,
}) => {
  let release!: () => void
  const hold = new Promise<void>((resolve) => (release = resolve))
  anthropic.script(
    reply.toolUse({
      input: { command: 'create', path: '/memories/slow.md', file_text: 'slow answers\n' },
    }),
    reply.text(ANSWER, { hold }),
    reply.text('Here again, all ears.'),
  )
  await cairn.open(page)
  const chat = new ChatPage(page)
  try {
    await chat.send('Tell me slowly')
    await expect(chat.lastReply()).toContainText('A long')

    await page.reload()
    await chat.openConversation('Tell me slowly')
    await expect(chat.userMessages()).toHaveText(['Tell me slowly'])
    await expect(chat.lastReply()).toContainText('A long')
    await expect(chat.toolCard('create', '/memories/slow.md')).toContainText('Done')
    await expect(chat.stopButton).toBeVisible()
    await expect(chat.composer).toBeDisabled()
    await expect(chat.composer).toHaveAttribute('placeholder', 'Claude is replying…')
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme })
      await page.screenshot({
        path: test.info().outputPath(`reloaded-mid-reply-${colorScheme}.png`),
      })
    }

    await chat.stopButton.click()
    await expect(chat.transcript).toContainText('You stopped the last reply')
    await expect(chat.composer).toBeEnabled()
  } finally {
    release()
  }
  await chat.send('Are you there?')
  await expect(chat.lastReply()).toContainText('Here again, all ears.')
  await expect(chat.userMessages()).toHaveText(['Tell me slowly', 'Are you there?'])
})

test('a second window opened mid-reply shows it running, and the whole reply once', async ({
  page,
  cairn,
  anthropic,
}) => {
  let release!: () => void
  const hold = new Promise<void>((resolve) => (release = resolve))
  anthropic.script(reply.text(ANSWER, { hold }))
  await cairn.open(page)
  const here = new ChatPage(page)
  const second = await page.context().newPage()
  const there = new ChatPage(second)
  try {
    await here.send('Tell me slowly')
    await expect(here.lastReply()).toContainText('A long')

    await cairn.open(second)
    await there.openConversation('Tell me slowly')
    await expect(there.lastReply()).toContainText('A long')
    await expect(there.stopButton).toBeVisible()
    await expect(there.composer).toBeDisabled()
  } finally {
    release()
  }
  for (const chat of [here, there]) {
    await expect(chat.stopButton).toBeHidden()
    await expect(chat.replies()).toHaveCount(1)
    await expect(chat.lastReply()).toContainText(ANSWER)
    await expect(chat.composer).toBeEnabled()
  }
})
