import { claudeTurn, expect, reply, test } from './fixtures/claude-turns'
import { ChatPage } from './pages/chat.page'

const LONG = 'A long answer to read. '.repeat(300)

test('the transcript follows a streaming reply, but not once the user scrolled up to read', async ({
  page,
  cairn,
  anthropic,
}) => {
  let id: string | null = null
  for (const question of ['First question', 'Second question']) {
    id = await claudeTurn(cairn, anthropic, question, [reply.text(LONG)], id)
  }
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.openConversation('First question')
  await expect(chat.lastReply()).toBeInViewport()
  await expect(chat.jumpToLatest).toBeHidden()

  let release!: () => void
  const hold = new Promise<void>((resolve) => (release = resolve))
  anthropic.script(reply.text(`Streaming begins. ${LONG} The very end.`, { hold }))
  await chat.send('Third question')
  // Sending follows the new turn to the end, even from far up the transcript.
  await expect(chat.lastReply()).toContainText('Streaming be')
  await expect(chat.lastReply().getByText(/Streaming be/)).toBeInViewport()

  await chat.scrollTranscriptUp()
  const reading = chat.replies().nth(1)
  await expect(reading).toBeInViewport()
  await expect(chat.jumpToLatest).toBeVisible()
  release()
  await expect(chat.lastReply()).toContainText('The very end.')
  // Not yanked back down while reading.
  await expect(reading).toBeInViewport()
  await expect(chat.lastReply().getByText(/The very end\./)).not.toBeInViewport()
  await expect(chat.jumpToLatest).toBeVisible()

  await chat.jumpToLatest.click()
  await expect(chat.lastReply().getByText(/The very end\./)).toBeInViewport()
  await expect(chat.jumpToLatest).toBeHidden()
})
