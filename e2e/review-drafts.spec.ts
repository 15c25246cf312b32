/**
 * What the person types on a change waiting for review is theirs until they let it go
 * (review hunt13 D5, D6): an IME's Enter confirms the conversion, not the decision; looking
 * at another chat, or folding the change's row in the memory pane, keeps the text and the
 * reason typed so far; Escape leaves a step only while nothing was typed in it.
 */
import type { Page } from '@playwright/test'
import type { Cairn } from './fixtures/harness'
import { create, expect, reply, test } from './fixtures/claude-turns'
import { ChatPage } from './pages/chat.page'
import { allMode, PendingListPage, ReviewPanel } from './pages/review.page'
import type { FakeAnthropic } from '../test/fixtures/fake-anthropic'

const PATH = '/memories/prefs.md'
const EDITOR = /^Edit the text of/
const REASON = 'Reason for declining (optional)'

/** Claude's create of prefs.md, waiting for the person in `all` mode, on its chat card. */
async function held(page: Page, cairn: Cairn, anthropic: FakeAnthropic) {
  await allMode(cairn)
  anthropic.script(create(PATH, 'Editor: Vim\n'), reply.text('Noted.'))
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.send('Remember my editor')
  const card = chat.toolCard('create', PATH)
  await expect(card).toContainText('Waiting for you')
  return { chat, card, review: new ReviewPanel(page, card, PATH) }
}

/** Looks at a new chat (Ctrl+N), then comes back to the one whose change waits. */
async function awayAndBack(page: Page, chat: ChatPage): Promise<ReviewPanel> {
  await page.keyboard.press('Control+n')
  await expect(chat.welcome).toBeVisible()
  await chat.openConversation('Remember my editor')
  const card = chat.toolCard('create', PATH)
  await expect(card).toContainText('Waiting for you')
  return new ReviewPanel(page, card, PATH)
}

/** Still waiting, in main as on the card: nothing was decided. */
async function stillWaiting(cairn: Cairn, review: ReviewPanel): Promise<void> {
  await expect(review.region).toHaveAttribute('aria-busy', 'false')
  const list = await cairn.core.dispatch('review:list', undefined)
  expect(list.ok && (list.value as ReadonlyArray<unknown>).length).toBe(1)
}

test('the Enter that ends an IME composition in the decline reason does not decline', async ({
  page,
  cairn,
  anthropic,
}) => {
  const { card, review } = await held(page, cairn, anthropic)
  await review.region.getByRole('button', { name: 'Decline', exact: true }).click()
  const reason = review.region.getByRole('textbox', { name: REASON })
  await reason.focus()
  // Typing Japanese: the IME shows "きょう" while composing; Enter commits the conversion
  // (the keydown a browser sends for it says isComposing, as the composer expects).
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('Input.imeSetComposition', { text: 'きょう', selectionStart: 3, selectionEnd: 3 })
  await reason.evaluate((el) =>
    el.dispatchEvent(
      new KeyboardEvent('keydown', {
        key: 'Enter',
        code: 'Enter',
        isComposing: true,
        bubbles: true,
        cancelable: true,
      }),
    ),
  )
  await cdp.send('Input.insertText', { text: '今日' })
  await stillWaiting(cairn, review)
  await expect(card).toContainText('Waiting for you')
  await expect(reason).toBeVisible()
  // The Enter after the conversion declines, with the converted text as the reason.
  await reason.press('Enter')
  await expect(card).toContainText('Declined')
  await expect(card).toContainText('今日')
  await expect(card).not.toContainText('きょう')
})

test('the Enter that ends an IME composition in the editor does not approve', async ({
  page,
  cairn,
  anthropic,
}) => {
  const { review } = await held(page, cairn, anthropic)
  await review.region.getByRole('button', { name: 'Edit' }).click()
  const editor = review.region.getByRole('textbox', { name: EDITOR })
  await editor.evaluate((el) =>
    el.dispatchEvent(
      new KeyboardEvent('keydown', {
        key: 'Enter',
        code: 'Enter',
        ctrlKey: true,
        isComposing: true,
        bubbles: true,
        cancelable: true,
      }),
    ),
  )
  await stillWaiting(cairn, review)
  await expect(editor).toBeVisible()
})

test('text typed into Edit survives looking at another chat and coming back', async ({
  page,
  cairn,
  anthropic,
}) => {
  const { chat, review } = await held(page, cairn, anthropic)
  await review.region.getByRole('button', { name: 'Edit' }).click()
  await review.region.getByRole('textbox', { name: EDITOR }).fill('Editor: Helix\nTheme: dark\n')
  const back = await awayAndBack(page, chat)
  const editor = back.region.getByRole('textbox', { name: EDITOR })
  await expect(editor).toHaveValue('Editor: Helix\nTheme: dark\n')
  // And it is what lands when approved.
  await editor.press('Control+Enter')
  await expect(chat.toolCard('create', PATH)).toContainText('Done')
  const file = await cairn.core.dispatch('memory:read', { path: PATH })
  expect(file.ok && (file.value as { text: string }).text).toBe('Editor: Helix\nTheme: dark\n')
})

test('a decline reason being typed survives looking at another chat and coming back', async ({
  page,
  cairn,
  anthropic,
}) => {
  const { chat, review } = await held(page, cairn, anthropic)
  await review.region.getByRole('button', { name: 'Decline', exact: true }).click()
  await review.region.getByRole('textbox', { name: REASON }).fill('I switched to Helix last year')
  const back = await awayAndBack(page, chat)
  await expect(back.region.getByRole('textbox', { name: REASON })).toHaveValue(
    'I switched to Helix last year',
  )
})

test('Escape leaves Edit only while nothing was typed; Cancel edit lets the text go', async ({
  page,
  cairn,
  anthropic,
}) => {
  const { review } = await held(page, cairn, anthropic)
  const edit = review.region.getByRole('button', { name: 'Edit' })
  const editor = review.region.getByRole('textbox', { name: EDITOR })
  // Nothing typed: Escape cancels, as before.
  await edit.click()
  await editor.press('Escape')
  await expect(editor).toHaveCount(0)
  // Typed: Escape keeps the editor and the text.
  await edit.click()
  await editor.fill('Editor: Helix\n')
  await editor.press('Escape')
  await expect(editor).toHaveValue('Editor: Helix\n')
  await expect(review.region).toContainText('Cancel edit lets your text go')
  // The step's own button lets it go: Edit starts again from Claude's text.
  await review.region.getByRole('button', { name: 'Cancel edit' }).click()
  await edit.click()
  await expect(editor).toHaveValue('Editor: Vim\n')
  // The same for a reason.
  await review.region.getByRole('button', { name: 'Cancel edit' }).click()
  await review.region.getByRole('button', { name: 'Decline', exact: true }).click()
  const reason = review.region.getByRole('textbox', { name: REASON })
  await reason.fill('not now')
  await reason.press('Escape')
  await expect(reason).toHaveValue('not now')
  await stillWaiting(cairn, review)
})

test('folding the change in the memory pane keeps the text typed there', async ({
  page,
  cairn,
  anthropic,
}) => {
  await held(page, cairn, anthropic)
  const pending = new PendingListPage(page)
  const panel = pending.panel(PATH)
  await panel.region.getByRole('button', { name: 'Edit' }).click()
  await panel.region.getByRole('textbox', { name: EDITOR }).fill('Editor: Helix\n')
  const row = pending.item('Claude: Write prefs.md')
  await row.click()
  await expect(row).toHaveAttribute('aria-expanded', 'false')
  await expect(panel.region).toHaveCount(0)
  await row.click()
  await expect(panel.region.getByRole('textbox', { name: EDITOR })).toHaveValue('Editor: Helix\n')
  // The whole list folded and unfolded, too.
  await pending.heading().click()
  await pending.heading().click()
  await expect(panel.region.getByRole('textbox', { name: EDITOR })).toHaveValue('Editor: Helix\n')
})
