import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { reply } from '../test/fixtures/fake-anthropic'
import { expect, test } from './fixtures/harness'
import { AppPage } from './pages/app.page'
import { ChatPage } from './pages/chat.page'
import { HistoryPage } from './pages/history.page'
import { MemoryPage } from './pages/memory.page'
import { SettingsPage } from './pages/settings.page'

const KEY = 'sk-ant-e2e-chat-key'

test.describe('chat', () => {
  test.beforeEach(async ({ cairn }) => {
    await cairn.core.dispatch('settings:setApiKey', { key: KEY })
  })

  test('a turn that creates /memories/notes.md streams the reply and shows the memory card', async ({
    page,
    cairn,
    anthropic,
  }) => {
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    anthropic.script(
      reply.toolUse(
        {
          input: { command: 'create', path: '/memories/notes.md', file_text: 'Likes: Python\n' },
        },
        { usage: { inputTokens: 1000, outputTokens: 20 } },
      ),
      reply.text('Noted: your favourite language is **Python**, saved to memory.', {
        hold,
        usage: { inputTokens: 1200, outputTokens: 34 },
      }),
    )
    await cairn.open(page)
    const chat = new ChatPage(page)
    await chat.send('My favourite language is Python. Remember it.')

    await expect(chat.userMessages().last()).toHaveText(
      'My favourite language is Python. Remember it.',
    )
    const card = chat.toolCard('create', '/memories/notes.md')
    await expect(card).toContainText('Done')
    // The reply is held after its first chunk: it is visibly streaming and can be stopped.
    await expect(chat.lastReply()).toContainText('Noted: your')
    await expect(chat.lastReply()).not.toContainText('saved to memory')
    await expect(chat.stopButton).toBeVisible()
    await expect(chat.composer).toBeDisabled()

    release()
    await expect(chat.lastReply()).toContainText(
      'Noted: your favourite language is Python, saved to memory.',
    )
    await expect(chat.lastReply().getByText('Python', { exact: true })).toBeVisible()
    // Usage is summed over the turn's two API responses.
    await expect(chat.lastReply()).toContainText('2,200 tokens in · 54 out')
    await expect(card).toContainText('1 line')
    await expect(chat.composer).toBeEnabled()
    await expect(chat.composer).toBeFocused()
    await expect(chat.title).toHaveText('My favourite language is Python. Remember it.')
    await expect(chat.conversation('My favourite language is Python. Remember it.')).toBeVisible()

    // The request declared the memory tool; the card links to its commit in History.
    expect(JSON.stringify(anthropic.messageRequests()[0]!.body)).toContain('memory_20250818')
    await card.getByRole('button', { name: /View change/ }).click()
    const app = new AppPage(page)
    await expect(app.sideTab('History')).toHaveAttribute('aria-selected', 'true')
    const history = new HistoryPage(page)
    const selected = history.timeline.getByRole('row', { selected: true })
    await expect(selected).toContainText('Claude')
    await expect(selected).toContainText('notes.md')
    await expect(history.detail).toContainText('create /memories/notes.md')
  })

  test('a 401 from the API explains the key problem and leads to Settings', async ({
    page,
    cairn,
    anthropic,
  }) => {
    anthropic.script(reply.error(401))
    await cairn.open(page)
    const chat = new ChatPage(page)
    await chat.send('Hello?')

    await expect(chat.errorBanner).toContainText('Your API key was not accepted')
    await expect(chat.errorBanner).toContainText('401')
    await expect(chat.composer).toBeEnabled()
    await chat.errorBanner.getByRole('button', { name: 'Open Settings' }).click()
    const settings = new SettingsPage(page)
    await expect(settings.dialog).toBeVisible()
    await expect(settings.keyStatus).toContainText('Set')
  })

  test('a reply that ends as a refusal says Claude declined, under what it said', async ({
    page,
    cairn,
    anthropic,
  }) => {
    anthropic.script(
      reply.message([{ type: 'text', text: 'I will not help with that.' }], 'refusal'),
    )
    await cairn.open(page)
    const chat = new ChatPage(page)
    await chat.send('Help me with something I should not do')

    await expect(chat.lastReply()).toContainText('I will not help with that.')
    await expect(chat.errorBanner).toContainText('Claude declined to answer')
    await expect(chat.errorBanner).toContainText('rephrase your message')
    await expect(chat.composer).toBeEnabled()
  })

  test('the same words sent twice are two turns, each with its own reply', async ({
    page,
    cairn,
    anthropic,
  }) => {
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    anthropic.script(reply.text('First answer.'), reply.text('Second answer, streaming.', { hold }))
    await cairn.open(page)
    const chat = new ChatPage(page)
    await chat.send('Again?')
    await expect(chat.lastReply()).toContainText('First answer.')
    await expect(chat.composer).toBeEnabled()
    await chat.send('Again?')
    // While the second reply streams, the first turn stays whole and the new one is separate.
    await expect(chat.stopButton).toBeVisible()
    await expect(chat.userMessages()).toHaveCount(2)
    await expect(chat.replies().first()).toContainText('First answer.')
    release()
    await expect(chat.lastReply()).toContainText('Second answer, streaming.')
    await expect(chat.userMessages()).toHaveCount(2)
    await expect(chat.replies()).toHaveCount(2)
  })

  test('a memory command that fails shows its error on its card', async ({
    page,
    cairn,
    anthropic,
  }) => {
    anthropic.script(
      reply.toolUse({
        input: { command: 'create', path: '/memories/notes.md', file_text: 'Likes: Python\n' },
      }),
      reply.toolUse({
        input: {
          command: 'str_replace',
          path: '/memories/notes.md',
          old_str: 'Likes: Rust',
          new_str: 'Likes: Go',
        },
      }),
      reply.text('That text was not in the file.'),
    )
    await cairn.open(page)
    const chat = new ChatPage(page)
    await chat.send('Change Rust to Go in my notes.')

    const card = chat.toolCard('str_replace', '/memories/notes.md')
    await expect(card).toContainText('Failed')
    await expect(card).toContainText('No replacement was performed')
    await expect(card.getByRole('button', { name: /View change/ })).toHaveCount(0)
    await expect(chat.toolCard('create', '/memories/notes.md')).toContainText('Done')
    await expect(chat.lastReply()).toContainText('That text was not in the file.')

    // Reopened from storage, the cards look the same.
    await page.reload()
    await chat.openConversation('Change Rust to Go in my notes.')
    await expect(chat.toolCard('str_replace', '/memories/notes.md')).toContainText(
      'No replacement was performed',
    )
    await expect(
      chat.toolCard('create', '/memories/notes.md').getByRole('button', { name: /View change/ }),
    ).toBeVisible()
  })

  test('tool cards with hostile input shapes are drawn, live and reopened from storage', async ({
    page,
    cairn,
    anthropic,
  }) => {
    await cairn.core.dispatch('memory:write', { path: '/memories/a.md', content: 'one\ntwo\n' })
    // Odd inputs the fake Messages API can send, stored raw (review hunt12-story D9).
    anthropic.script(
      reply.toolUse({
        input: { command: 'view', path: '/memories/a.md', view_range: [{ toString: 1 }, 5] },
      }),
      reply.toolUse({ input: { command: '__proto__', path: '/memories/a.md' } }),
      reply.text('Looked around.'),
    )
    await cairn.open(page)
    const chat = new ChatPage(page)
    await chat.send('Look at my notes oddly.')
    await expect(chat.lastReply()).toContainText('Looked around.')
    await expect(chat.toolCard('view', '/memories/a.md')).toBeVisible()
    await expect(chat.toolCard('__proto__', '/memories/a.md')).toContainText('__proto__')

    await page.reload()
    await chat.openConversation('Look at my notes oddly.')
    await expect(chat.toolCard('view', '/memories/a.md')).toBeVisible()
    await expect(chat.toolCard('__proto__', '/memories/a.md')).toBeVisible()
    await expect(page.getByText('Cairn could not show this window')).toHaveCount(0)
  })

  test('Stop ends a held reply and the conversation can continue', async ({
    page,
    cairn,
    anthropic,
  }) => {
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    anthropic.script(
      reply.text('Here is a very long story about stones stacked on a hill…', { hold }),
      reply.text('Continuing as asked.'),
    )
    await cairn.open(page)
    const chat = new ChatPage(page)
    try {
      await chat.send('Tell me a long story.')
      await expect(chat.lastReply()).toContainText('Here is a ve')
      await chat.stopButton.click()
      await expect(chat.stopButton).toBeHidden()
      await expect(chat.transcript).toContainText('You stopped the last reply')
      await expect(chat.composer).toBeEnabled()
    } finally {
      release()
    }
    await chat.send('Go on.')
    await expect(chat.lastReply()).toContainText('Continuing as asked.')
  })

  test('Escape stops a running turn', async ({ page, cairn, anthropic }) => {
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    anthropic.script(reply.text('A reply that will be cut short, sadly.', { hold }))
    await cairn.open(page)
    const chat = new ChatPage(page)
    try {
      await chat.send('Start talking.')
      await expect(chat.lastReply()).toContainText('A reply that')
      await page.keyboard.press('Escape')
      await expect(chat.transcript).toContainText('You stopped the last reply')
    } finally {
      release()
    }
  })

  // Review hunt10-app D4: Escape in a field of another pane (clearing the memory search)
  // stopped Claude's reply too.
  test('Escape in the memory search box clears it and leaves the reply running', async ({
    page,
    cairn,
    anthropic,
  }) => {
    await cairn.core.dispatch('memory:write', { path: '/memories/notes.md', content: 'tea\n' })
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    anthropic.script(reply.text('A long answer, still streaming while you search.', { hold }))
    await cairn.open(page)
    const chat = new ChatPage(page)
    const memory = new MemoryPage(page)
    try {
      await chat.send('Tell me a long story.')
      await expect(chat.lastReply()).toContainText('A long')
      await memory.searchFor('tea')
      await expect(memory.searchResults).toBeVisible()
      await memory.search.press('Escape')
      await expect(memory.search).toHaveValue('')
      await expect(chat.stopButton).toBeVisible()
    } finally {
      release()
    }
    await expect(chat.lastReply()).toContainText('still streaming while you search.')
    await expect(chat.stopButton).toBeHidden()
    await expect(chat.transcript).not.toContainText('You stopped the last reply')
  })
})

test('replies render safe markdown: https links open outside, other links and raw HTML do not', async ({
  page,
  cairn,
  anthropic,
}) => {
  await cairn.core.dispatch('settings:setApiKey', { key: KEY })
  anthropic.script(
    reply.text(
      [
        'Read [the guide](https://example.com/guide) or [this](http://plain.example/x).',
        '',
        '<img src="x" onerror="window.__pwned = 1"><b>raw bold</b>',
        '',
        '| Name | Value |',
        '|---|---|',
        '| a | 1 |',
      ].join('\n'),
    ),
  )
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.send('Show me links.')
  const replyView = chat.lastReply()
  await expect(replyView.getByRole('table')).toContainText('Value')
  await expect(replyView.getByRole('link')).toHaveCount(1)
  await expect(replyView).toContainText('or this.')
  // Raw HTML is never turned into elements: no image, no handler ran.
  await expect(replyView.getByRole('img')).toHaveCount(0)
  expect(
    await page.evaluate(
      () => 'window.__pwned' in window && (window as unknown as { __pwned?: number }).__pwned,
    ),
  ).toBeFalsy()

  await replyView.getByRole('link', { name: 'the guide' }).click()
  await expect
    .poll(() => cairn.host.opened)
    .toContainEqual({
      kind: 'url',
      target: 'https://example.com/guide',
    })
  await expect(chat.transcript).toBeVisible()
})

test.describe('conversation list', () => {
  test.beforeEach(async ({ cairn }) => {
    await cairn.core.dispatch('settings:setApiKey', { key: KEY })
  })

  test('new chat, rename, search and delete with confirmation', async ({
    page,
    cairn,
    anthropic,
  }) => {
    anthropic.script(reply.text('Paris it is.'), reply.text('Sourdough needs time.'))
    await cairn.open(page)
    const chat = new ChatPage(page)
    await expect(chat.sidebar).toContainText('No conversations yet')

    await chat.send('Plan a weekend in Paris')
    await expect(chat.lastReply()).toContainText('Paris it is.')
    await page.keyboard.press('ControlOrMeta+n')
    await expect(chat.title).toHaveText('New chat')
    await expect(chat.composer).toBeFocused()
    await chat.send('How do I bake sourdough?')
    await expect(chat.lastReply()).toContainText('Sourdough needs time.')
    await expect(chat.conversation('How do I bake sourdough?')).toHaveAttribute(
      'aria-current',
      'page',
    )

    await chat.rename('Plan a weekend in Paris', 'Paris trip')
    await expect(chat.conversation('Paris trip')).toBeVisible()
    await expect(chat.conversation('Plan a weekend in Paris')).toHaveCount(0)

    // Search finds content, not only titles.
    await chat.searchFor('bake')
    await expect(chat.conversation('How do I bake sourdough?')).toBeVisible()
    await expect(chat.conversation('Paris trip')).toHaveCount(0)
    await chat.searchFor('nothing like this')
    await expect(chat.sidebar).toContainText('No conversation mentions “nothing like this”')
    await chat.searchFor('')
    await expect(chat.conversation('Paris trip')).toBeVisible()

    await chat.openConversation('Paris trip')
    await expect(chat.transcript).toContainText('Paris it is.')
    await chat.askToDelete('Paris trip')
    await expect(chat.dialog).toContainText('“Paris trip” and its messages will be removed')
    await chat.dialog.getByRole('button', { name: 'Cancel' }).click()
    await expect(chat.conversation('Paris trip')).toBeVisible()
    // The keyboard path: Delete on a focused row asks too, Escape cancels.
    await chat.conversation('Paris trip').focus()
    await page.keyboard.press('Delete')
    await expect(chat.dialog).toContainText('“Paris trip”')
    await page.keyboard.press('Escape')
    await expect(chat.dialog).toBeHidden()
    await chat.askToDelete('Paris trip')
    await chat.dialog.getByRole('button', { name: 'Delete conversation' }).click()
    await expect(chat.conversation('Paris trip')).toHaveCount(0)
    await expect(chat.title).toHaveText('New chat')
    const list = await cairn.core.dispatch('conversations:list', {})
    expect(list).toMatchObject({
      ok: true,
      value: [{ conversation: { title: 'How do I bake sourdough?' } }],
    })
  })
})

test('first launch without a key welcomes the person and leads to Settings', async ({
  page,
  cairn,
}) => {
  await cairn.open(page)
  const chat = new ChatPage(page)
  await expect(chat.welcome).toContainText('Welcome to Cairn')
  await chat.welcome.getByRole('button', { name: 'Add your API key' }).click()
  const settings = new SettingsPage(page)
  await expect(settings.keyStatus).toContainText('Not set')
  await expect(settings.keyField).toBeFocused()
})

test('keyboard shortcuts switch panes and open settings', async ({ page, cairn }) => {
  await cairn.open(page)
  const app = new AppPage(page)
  const chat = new ChatPage(page)
  await expect(chat.composer).toBeFocused()
  await page.keyboard.press('ControlOrMeta+2')
  await expect(app.sideTab('History')).toHaveAttribute('aria-selected', 'true')
  await page.keyboard.press('ControlOrMeta+1')
  await expect(app.sideTab('Memory')).toHaveAttribute('aria-selected', 'true')
  await page.keyboard.press('ControlOrMeta+Comma')
  const settings = new SettingsPage(page)
  await expect(settings.dialog).toBeVisible()
  await page.keyboard.press('Escape')
  await expect(settings.dialog).toBeHidden()
  await app.sideTab('Memory').focus()
  await page.keyboard.press('ControlOrMeta+l')
  await expect(chat.composer).toBeFocused()
})

test('an edit made outside Cairn while it runs is saved, told, and one click from History', async ({
  page,
  cairn,
}) => {
  await cairn.open(page)
  const chat = new ChatPage(page)
  await expect(chat.composer).toBeFocused()
  // Another editor writes into the memory folder: the core's watcher commits it and tells.
  await writeFile(path.join(cairn.dataDir, 'memories', 'from-editor.md'), 'typed elsewhere\n')
  const notice = chat.pane.getByRole('status', { name: 'Edits made outside Cairn saved' })
  await expect(notice).toContainText(
    'from-editor.md was edited outside Cairn and saved to the history as its own change.',
  )
  await notice.getByRole('button', { name: 'View in History' }).click()
  const history = new HistoryPage(page)
  await expect(history.detail).toContainText('Changes made outside Cairn')
  await expect(history.fileDiff('from-editor.md')).toContainText('typed elsewhere')
  await notice.getByRole('button', { name: 'Dismiss' }).click()
  await expect(notice).toBeHidden()
})
