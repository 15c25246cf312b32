/**
 * A conversation's title is drawn safely: a bidi override cannot reorder the list, a control
 * character cannot break a line, a title of only zero-width characters reads "Untitled", and
 * joined emoji and right-to-left titles stay whole. Only the drawing changes: the stored title
 * is the person's, as they wrote it.
 */
import { reply } from '../test/fixtures/fake-anthropic'
import { expect, test, shootBoth } from './fixtures/screens'
import { ChatPage } from './pages/chat.page'
import { FullHistoryPage } from './pages/full-history.page'

const FAMILY = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}'

test('titles with controls, bidi overrides or nothing visible are drawn safely', async ({
  page,
  cairn,
  anthropic,
}) => {
  await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-titles' })
  const titles = {
    override: 'Invoice \u202Efdp.exe\u202C plan',
    control: 'Line one\nline\u0007two',
    blank: '\u200B\u200C\u2060',
    family: `${FAMILY} trip`,
    hebrew: 'רשימת קניות',
  }
  const ids: Record<string, string> = {}
  for (const [key, title] of Object.entries(titles)) {
    anthropic.script(reply.text('Ok.'))
    const sent = await cairn.core.dispatch('chat:send', {
      conversationId: null,
      text: `About ${key}`,
      clientId: `c-${key}`,
    })
    if (!sent.ok) throw new Error('send failed')
    const id = (sent.value as { conversationId: string }).conversationId
    await anthropic.waitForMessageRequests(Object.keys(ids).length + 1)
    const renamed = await cairn.core.dispatch('conversations:rename', { id, title })
    expect(renamed.ok).toBe(true)
    ids[key] = id
  }
  await cairn.open(page)
  const chat = new ChatPage(page)
  await expect(chat.conversation('Invoice fdp.exe plan')).toBeVisible()
  await expect(chat.conversation('Line one line two')).toBeVisible()
  await expect(chat.conversation('Untitled')).toBeVisible()
  await expect(chat.conversation(`${FAMILY} trip`)).toBeVisible()
  await expect(chat.conversation('רשימת קניות')).toBeVisible()
  // Nothing invisible reaches the list's text.
  const drawn = await chat.sidebar.innerText()
  // (The family's joiners aside, and the line breaks between rows.)
  expect(drawn.replaceAll(FAMILY, '').replaceAll('\n', '')).not.toMatch(/[\p{Cc}\p{Cf}]/u)
  expect(drawn).toContain(FAMILY)

  await chat.openConversation('Invoice fdp.exe plan')
  await expect(chat.title).toHaveText('Invoice fdp.exe plan')
  await chat.openConversation('רשימת קניות')
  await expect(chat.title).toHaveText('רשימת קניות')
  await expect(chat.title).toHaveAttribute('dir', 'auto')
  await shootBoth(page, cairn, 'conversation-titles')

  // The history's conversation filter names them the same way.
  const history = new FullHistoryPage(page)
  await history.openWithKeyboard()
  const filter = history.view.getByRole('combobox', { name: 'Filter by conversation' })
  await expect(filter.getByRole('option', { name: 'Untitled' })).toHaveCount(1)
  await expect(filter.getByRole('option', { name: 'Invoice fdp.exe plan' })).toHaveCount(1)

  // The stored titles are as written.
  for (const [key, title] of Object.entries(titles)) {
    const stored = await cairn.core.dispatch('conversations:get', { id: ids[key] })
    expect(stored).toMatchObject({ ok: true, value: { title } })
  }
})
