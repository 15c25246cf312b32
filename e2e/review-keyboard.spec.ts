/**
 * Reviewing with the keyboard alone, and a window that reloads while changes wait: an
 * acceptance check of issue #13's chat card in real Chromium. Every step is a key press; the
 * page is never clicked.
 */
import type { Page } from '@playwright/test'
import type { Cairn } from './fixtures/harness'
import { expect, reply, test } from './fixtures/claude-turns'
import { ChatPage } from './pages/chat.page'
import { MemoryPage } from './pages/memory.page'
import { tabTo } from './fixtures/keyboard'
import { allMode, PendingListPage, ReviewPanel } from './pages/review.page'
import type { FakeAnthropic } from '../test/fixtures/fake-anthropic'

function toolResults(anthropic: FakeAnthropic, n: number) {
  const messages = anthropic.messageRequests()[n]?.body?.messages ?? []
  return messages.flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as Array<Record<string, unknown>>).filter((b) => b.type === 'tool_result')
      : [],
  )
}

const THREE = reply.toolUses([
  { id: 'toolu_k1', input: { command: 'create', path: '/memories/one.md', file_text: 'One\n' } },
  { id: 'toolu_k2', input: { command: 'create', path: '/memories/two.md', file_text: 'Two\n' } },
  {
    id: 'toolu_k3',
    input: { command: 'create', path: '/memories/three.md', file_text: 'Three\n' },
  },
])

test('approve, edit and decline with the keyboard alone; the focus stays in the chat', async ({
  page,
  cairn,
  anthropic,
}) => {
  // Many key presses and four screenshots: three times the usual time on a loaded machine.
  test.slow()
  await allMode(cairn)
  let release!: () => void
  const hold = new Promise<void>((resolve) => (release = resolve))
  anthropic.script(THREE, reply.text('All decided.', { hold }))
  try {
    await keyboardOnly(page, cairn, anthropic, release)
  } finally {
    release()
  }
})

async function keyboardOnly(
  page: Page,
  cairn: Cairn,
  anthropic: FakeAnthropic,
  release: () => void,
) {
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.composer.focus()
  await page.keyboard.type('Remember three things')
  await page.keyboard.press('Enter')

  const panel = (name: string) =>
    new ReviewPanel(page, chat.toolCard('create', `/memories/${name}`), `/memories/${name}`)
  const one = panel('one.md')
  const two = panel('two.md')
  const three = panel('three.md')
  await expect(three.region).toBeVisible()
  // The screen reader names of each step.
  await expect(one.region.getByRole('group', { name: 'Decision' })).toBeVisible()
  await expect(one.diff('/memories/one.md').getByRole('cell', { name: 'added: One' })).toBeVisible()

  // Approve: Tab to it, Enter.
  const approveOne = one.region.getByRole('button', { name: 'Approve', exact: true })
  await tabTo(page, approveOne)
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    await page.screenshot({ path: test.info().outputPath(`keyboard-approve-${colorScheme}.png`) })
  }
  await page.keyboard.press('Enter')
  await expect(chat.toolCard('create', '/memories/one.md')).toContainText('Done')
  // The focus goes on to the next change waiting, not to the top of the page.
  await expect(two.region.getByRole('button', { name: 'Approve', exact: true })).toBeFocused()

  // A step left with Escape gives the focus back to the button that began it.
  await tabTo(page, two.region.getByRole('button', { name: 'Decline', exact: true }))
  await page.keyboard.press('Enter')
  await expect(
    two.region.getByRole('textbox', { name: 'Reason for declining (optional)' }),
  ).toBeFocused()
  await page.keyboard.press('Escape')
  await expect(two.region.getByRole('button', { name: 'Decline', exact: true })).toBeFocused()
  await expect(chat.stopButton).toBeVisible()

  // Edit: Tab to Edit, Enter; the editor has the focus; type; Ctrl+Enter approves.
  await tabTo(page, two.region.getByRole('button', { name: 'Edit' }))
  await page.keyboard.press('Enter')
  const editor = two.region.getByRole('textbox', {
    name: 'Edit the text of two.md before approving',
  })
  await expect(editor).toBeFocused()
  await page.keyboard.press('Control+End')
  await page.keyboard.type('and a half\n')
  await page.keyboard.press('Control+Enter')
  await expect(chat.toolCard('create', '/memories/two.md')).toContainText('Done')
  await expect(three.region.getByRole('button', { name: 'Approve', exact: true })).toBeFocused()

  // Decline: Tab to Decline, Enter; the reason has the focus; type; Enter declines.
  await tabTo(page, three.region.getByRole('button', { name: 'Decline', exact: true }))
  await page.keyboard.press('Enter')
  const reason = three.region.getByRole('textbox', { name: 'Reason for declining (optional)' })
  await expect(reason).toBeFocused()
  await page.keyboard.type('three is too many')
  await page.keyboard.press('Enter')
  await expect(chat.toolCard('create', '/memories/three.md')).toContainText('Declined')
  // The last one decided: its card keeps the focus while Claude goes on, where the person can
  // read what happened; once the reply ends, the composer takes it, as after every reply.
  await expect(chat.toolCard('create', '/memories/three.md')).toBeFocused()
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    await page.screenshot({ path: test.info().outputPath(`keyboard-decided-${colorScheme}.png`) })
  }
  release()
  await expect(chat.lastReply()).toContainText('All decided.')
  await expect(chat.composer).toBeFocused()

  const memory = new MemoryPage(page)
  await memory.openFile('two.md')
  await expect(memory.content('two.md')).toContainText('and a half')
  await expect(memory.item('three.md')).toHaveCount(0)
  const results = toolResults(anthropic, 1)
  expect(results.map((r) => r.tool_use_id)).toEqual(['toolu_k1', 'toolu_k2', 'toolu_k3'])
  expect(results[2]).toMatchObject({
    is_error: true,
    content:
      'Error: The person declined the change to /memories/three.md. Their reason: "three is too many". Nothing was changed.',
  })
}

test('a window reloaded while changes wait catches up, and its decisions reach Claude', async ({
  page,
  cairn,
  anthropic,
}) => {
  await allMode(cairn)
  anthropic.script(THREE, reply.text('Thanks for deciding.'))
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.send('Three after a reload')
  await expect(
    new ReviewPanel(page, chat.toolCard('create', '/memories/three.md'), '/memories/three.md')
      .region,
  ).toBeVisible()
  // One is decided before the reload.
  await new ReviewPanel(
    page,
    chat.toolCard('create', '/memories/one.md'),
    '/memories/one.md',
  ).approve()
  await expect(chat.toolCard('create', '/memories/one.md')).toContainText('Done')

  await page.reload()
  await chat.openConversation('Three after a reload')
  await expect(chat.toolCard('create', '/memories/one.md')).toContainText('Done')
  for (const name of ['two.md', 'three.md']) {
    await expect(chat.toolCard('create', `/memories/${name}`)).toContainText('Waiting for you')
  }
  await expect(chat.stopButton).toBeVisible()
  const two = new ReviewPanel(page, chat.toolCard('create', '/memories/two.md'), '/memories/two.md')
  await expect(two.diff('/memories/two.md').getByRole('cell', { name: 'added: Two' })).toBeVisible()
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    await page.screenshot({
      path: test.info().outputPath(`reloaded-while-held-${colorScheme}.png`),
    })
  }
  await two.decline('not after a reload')
  await new ReviewPanel(
    page,
    chat.toolCard('create', '/memories/three.md'),
    '/memories/three.md',
  ).approve()
  await expect(chat.lastReply()).toContainText('Thanks for deciding.')
  await expect(chat.toolCard('create', '/memories/two.md')).toContainText('Declined')
  await expect(chat.toolCard('create', '/memories/three.md')).toContainText('Done')
  const results = toolResults(anthropic, 1)
  expect(results.map((r) => [r.tool_use_id, r.is_error === true])).toEqual([
    ['toolu_k1', false],
    ['toolu_k2', true],
    ['toolu_k3', false],
  ])
  expect(String(results[1]!.content)).toContain('"not after a reload"')
})

test('deciding in the memory pane’s list with the keyboard goes on to the next change there', async ({
  page,
  cairn,
  anthropic,
}) => {
  await allMode(cairn)
  anthropic.script(THREE, reply.text('Decided in the pane.'))
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.send('Three for the pane')
  const pending = new PendingListPage(page)
  await expect(pending.heading()).toContainText('3 changes wait for your review')
  const approveOne = pending
    .panel('/memories/one.md')
    .region.getByRole('button', { name: 'Approve', exact: true })
  await approveOne.focus()
  await page.keyboard.press('Enter')
  await expect(pending.heading()).toContainText('2 changes wait for your review')
  // The next change's row has the focus, and has opened.
  const rowTwo = pending.item('Claude: Write two.md')
  await expect(rowTwo).toBeFocused()
  await expect(rowTwo).toHaveAttribute('aria-expanded', 'true')
  await tabTo(
    page,
    pending.panel('/memories/two.md').region.getByRole('button', { name: 'Decline', exact: true }),
  )
  await page.keyboard.press('Enter')
  await page.keyboard.press('Enter')
  await expect(pending.item('Claude: Write three.md')).toBeFocused()
  await tabTo(
    page,
    pending
      .panel('/memories/three.md')
      .region.getByRole('button', { name: 'Approve', exact: true }),
  )
  await page.keyboard.press('Enter')
  await expect(pending.section).toHaveCount(0)
  await expect(chat.lastReply()).toContainText('Decided in the pane.')
  expect(await page.evaluate(() => document.activeElement !== document.body)).toBe(true)
  const results = toolResults(anthropic, 1)
  expect(results.map((r) => [r.tool_use_id, r.is_error === true])).toEqual([
    ['toolu_k1', false],
    ['toolu_k2', true],
    ['toolu_k3', false],
  ])
})
