/**
 * Long content, as a demanding user brings it (issue 6's promises at scale): a memory file of
 * 5,000 lines, a folder of 3,000 files, a conversation of 500 messages. Each opens whole, its
 * far end is reached with the keyboard, and what the person changes lands exactly.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createCore } from '../src/main/core'
import { reply } from '../test/fixtures/fake-anthropic'
import { attachCore, expect, test } from './fixtures/harness'
import { buildLargeHistory } from './fixtures/large-history'
import { ChatPage } from './pages/chat.page'
import { HistoryPage } from './pages/history.page'
import { MemoryPage } from './pages/memory.page'

test('a 5,000-line memory file opens, reaches its end, is searched to a line, and is edited without a line lost', async ({
  page,
  cairn,
}) => {
  test.setTimeout(180_000)
  const lines = Array.from({ length: 5_000 }, (_, i) => `Line ${i + 1}: the river keeps its bed.`)
  lines[4_320] = 'Line 4321: the kingfisher nests here.'
  const original = `${lines.join('\n')}\n`
  await cairn.core.dispatch('memory:write', { path: '/memories/journal.md', content: original })
  await cairn.open(page)
  const memory = new MemoryPage(page)

  await memory.openFile('journal.md')
  const content = memory.content('journal.md')
  await expect(content).toContainText('Line 1: the river')
  // The keyboard reaches the end of the file.
  await content.focus()
  await page.keyboard.press('End')
  await expect(content.getByText('Line 5000: the river keeps its bed.')).toBeInViewport()

  // A search hit deep in the file opens it at that line, in view.
  await memory.searchFor('kingfisher')
  await memory.searchResults.getByRole('button', { name: /kingfisher/ }).click()
  await expect(content.getByText('Line 4321: the kingfisher nests here.')).toBeInViewport()
  await memory.searchFor('')

  // An edit at the far end saves every other line as it was.
  const editor = await memory.typeAtEnd('journal.md', 'Line 5001: added by hand.')
  await editor.press('ControlOrMeta+s')
  await expect(memory.notice).toContainText('Saved journal.md')
  const read = await cairn.core.dispatch('memory:read', { path: '/memories/journal.md' })
  expect(read.ok && (read.value as { text: string }).text).toBe(
    `${original}Line 5001: added by hand.`,
  )
  const history = new HistoryPage(page)
  await history.open()
  await expect(history.rows.first()).toContainText('You')
  await expect(history.rows.first()).toContainText('journal.md')
})

test('a folder of 3,000 files is listed whole, drawing only what is in view, and its last file is reached by keyboard and search', async ({
  page,
  rendererServer,
}) => {
  test.setTimeout(300_000)
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-wide-'))
  await buildLargeHistory(dataDir, { commits: 3_000, fileCount: 3_000 })
  const core = await createCore({ dataDir })
  const detach = await attachCore(page, core)
  try {
    await page.goto(rendererServer.url)
    const memory = new MemoryPage(page)
    // Every file is in the tree, as a screen reader counts it; only those in view are drawn.
    await expect(memory.item('topics')).toHaveAttribute('aria-setsize', '1', { timeout: 120_000 })
    const first = memory.tree.getByRole('treeitem', { level: 2 }).first()
    await expect(first).toHaveAttribute('aria-setsize', '3000')
    await expect(first).toHaveAttribute('aria-posinset', '1')
    expect(await memory.tree.getByRole('treeitem').count()).toBeLessThan(100)

    // Home and End move through the whole list; the file the focus lands on opens.
    await memory.item('topics').focus()
    await page.keyboard.press('End')
    const last = memory.tree.getByRole('treeitem').last()
    await expect(last).toBeFocused()
    await expect(last).toBeInViewport()
    await expect(last).toHaveAttribute('aria-selected', 'true')
    await expect(last).toHaveAttribute('aria-posinset', '3000')
    const lastName = (await last.getAttribute('aria-label'))!.split(',')[0]!
    await expect(memory.content(lastName)).toContainText('# Topic')
    await page.keyboard.press('Home')
    await expect(memory.item('topics')).toBeFocused()

    // Search reaches any one of them by its text.
    await memory.searchFor('Revision 2999.')
    await memory.searchResults.getByRole('button', { name: /Revision 2999\./ }).click()
    await expect(memory.content('topic-2999.md')).toContainText('Revision 2999.')
  } finally {
    detach()
    await core.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})

test('a conversation of 500 messages opens at its end, reads back to its start, and goes on', async ({
  page,
  cairn,
  anthropic,
}) => {
  test.setTimeout(180_000)
  await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-long-chat' })
  const start = Date.now() - 500 * 60_000
  const messages = Array.from({ length: 500 }, (_, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: [
      {
        type: 'text',
        text:
          i % 2 === 0
            ? `Question ${i / 2 + 1}: what did we say about day ${i / 2 + 1}?`
            : `Answer ${(i + 1) / 2}: day ${(i + 1) / 2} is **planned**.\n\n- walk\n- read`,
      },
    ],
    ...(i % 2 === 1 ? { stopReason: 'end_turn', usage: null } : {}),
    createdAt: start + i * 60_000,
  }))
  const folder = path.join(cairn.dataDir, 'conversations')
  await mkdir(folder, { recursive: true })
  await writeFile(
    path.join(folder, 'c_long500.json'),
    JSON.stringify({
      version: 1,
      id: 'c_long500',
      title: 'A long chat',
      createdAt: start,
      updatedAt: start + 500 * 60_000,
      messages,
      toolCommits: {},
    }),
  )
  anthropic.script(reply.text('Answer 251: still here, after all that.'))
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.openConversation('A long chat')
  await expect(chat.userMessages()).toHaveCount(250)
  await expect(chat.replies()).toHaveCount(250)
  // It opens where the conversation stands: the latest reply in view, the first far above.
  await expect(chat.lastReply()).toContainText('Answer 250: day 250 is planned.')
  await expect(chat.lastReply()).toBeInViewport()
  await expect(chat.userMessages().first()).not.toBeInViewport()

  // Read back to the start with the keyboard alone: from the message box to the transcript.
  await page.keyboard.press('ControlOrMeta+l')
  await expect(chat.composer).toBeFocused()
  await page.keyboard.press('Shift+Tab')
  await page.keyboard.press('Home')
  await expect(chat.userMessages().first()).toBeInViewport()
  await expect(chat.jumpToLatest).toBeVisible()

  // Sending follows the conversation to its new end.
  await chat.send('And now?')
  await expect(chat.lastReply()).toContainText('Answer 251: still here, after all that.')
  await expect(chat.lastReply()).toBeInViewport()
  await expect(chat.userMessages()).toHaveCount(251)
})
