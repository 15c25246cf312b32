/**
 * Issue #12 checked again the hostile way (probe34c): the full history view's filters by
 * keyboard alone (Escape in a filter field clears that field and keeps the view; Escape
 * elsewhere goes back to the chat), a line's link to a conversation since renamed and then
 * deleted, and the filters over 10,000 changes at the end of their pages. Screenshots go to
 * e2e/artifacts (acceptance-12-hostile-<size>-<scheme>).
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import type { ChangeResult, Conversation } from '../src/shared/types'
import { claudeTurn, create, reply, strReplace } from './fixtures/claude-turns'
import { withLargeHistory } from './fixtures/large-history'
import { expect, shoot, shootBoth, test } from './fixtures/screens'
import { ChatPage } from './pages/chat.page'
import { FullHistoryPage } from './pages/full-history.page'
import { tabTo } from './fixtures/keyboard'
import { MemoryPage } from './pages/memory.page'

const SIZES = [
  { width: 880, height: 560 },
  { width: 1440, height: 900 },
] as const

for (const size of SIZES) {
  for (const scheme of ['light', 'dark'] as const) {
    test(`at ${size.width}×${size.height}, Escape in a filter field clears it and keeps the full view (${scheme})`, async ({
      page,
      cairn,
      anthropic,
    }) => {
      await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-hostile-12' })
      const id = await claudeTurn(cairn, anthropic, 'Remember my dog.', [
        create('/memories/pets.md', 'Dog: Rex\n'),
        reply.text('Saved.'),
      ])
      await claudeTurn(
        cairn,
        anthropic,
        'And the cat.',
        [strReplace('/memories/pets.md', 'Dog: Rex\n', 'Dog: Rex\nCat: Tom\n'), reply.text('Ok.')],
        id,
      )
      await cairn.core.dispatch('memory:write', { path: '/memories/todo.md', content: 'Milk\n' })
      await page.setViewportSize(size)
      await page.emulateMedia({ colorScheme: scheme })
      await cairn.open(page)
      const history = new FullHistoryPage(page)
      await history.openWithKeyboard()
      await expect(history.view).toBeVisible()
      const filters = history.view.getByRole('search', { name: 'Filter history' })
      const count = filters.getByRole('status', { name: 'Number of changes' })
      await expect(count).toHaveText('3 changes')

      // Half-typed file filter, by keyboard: Escape clears it, the view stays.
      const file = filters.getByRole('combobox', { name: 'Filter by file' })
      await tabTo(page, file)
      await page.keyboard.type('/memories/pets.md')
      await page.keyboard.press('Enter')
      await expect(count).toHaveText('2 changes')
      await shoot(page, cairn, `acceptance-12-hostile-${size.width}x${size.height}-${scheme}`)
      await page.keyboard.press('Escape')
      await expect(history.view).toBeVisible()
      await expect(file).toHaveValue('')
      await expect(count).toHaveText('3 changes')
      await expect(file).toBeFocused()
      // The same for the search box, as before.
      await history.search.focus()
      await page.keyboard.type('Cat')
      await page.keyboard.press('Escape')
      await expect(history.view).toBeVisible()
      await expect(history.search).toHaveValue('')

      // On a checkbox (whose value is "on") Escape goes back to the chat, as anywhere else.
      const matchCase = history.view.getByRole('checkbox', { name: 'Match case' })
      await matchCase.focus()
      await page.keyboard.press('Escape')
      await expect(history.view).toBeHidden()
      await expect(page.getByRole('main', { name: 'Chat' })).toBeVisible()

      // An empty filter field: Escape goes back to the chat at once.
      await history.openWithKeyboard()
      await expect(history.view).toBeVisible()
      await file.focus()
      await page.keyboard.press('Escape')
      await expect(history.view).toBeHidden()
    })
  }
}

test('a line’s reply link follows its conversation’s new title, and gives way to plain words once it is deleted', async ({
  page,
  cairn,
  anthropic,
}) => {
  await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-hostile-12' })
  const id = await claudeTurn(cairn, anthropic, 'I like green tea.', [
    create('/memories/notes.md', '# Notes\nSam likes green tea.\n'),
    reply.text('Noted.'),
  ])
  await cairn.open(page)
  const history = new FullHistoryPage(page)
  await history.openWithKeyboard()
  await history.row('Claude created notes.md').click()
  await history.showAs('Blame')
  const line = history
    .blame('/memories/notes.md')
    .getByRole('row')
    // A run of lines from one change names it once, on its first line.
    .filter({ hasText: '# Notes' })
  await expect(
    line.getByRole('button', { name: 'Open the reply that wrote this, in “I like green tea.”' }),
  ).toHaveCount(1)

  // Renamed elsewhere (another window): the link says the new title without a reload.
  await cairn.core.dispatch('conversations:rename', { id, title: 'Tea and notes' })
  const link = line.getByRole('button', {
    name: 'Open the reply that wrote this, in “Tea and notes”',
  })
  await expect(link).toHaveCount(1)

  // Deleted: the gutter says so where the link was, and offers no link that leads nowhere
  // (it read "in “A conversation”" and led to a plain "no longer exists").
  await page.setViewportSize({ width: 1440, height: 900 })
  await cairn.core.dispatch('conversations:delete', { id })
  const gone = line.getByTitle('The conversation Claude wrote this in has been deleted')
  // In full where the gutter is wide, briefly where it is narrow (as "Reply" was).
  const shown = () => gone.evaluate((element) => (element as HTMLElement).innerText)
  await expect(gone).toBeVisible()
  expect(await shown()).toMatch(/^(Conversation deleted|Chat deleted)$/)
  await expect(line.getByRole('button', { name: /^Open the reply that wrote this/ })).toHaveCount(0)
  await expect(line.getByRole('button', { name: /^Claude, .*Open this change$/ })).toHaveCount(1)
  await expect(page.getByText('This conversation no longer exists')).toHaveCount(0)
  // The change's header and its timeline row say so too (both read "A conversation" and linked).
  const goneHere = 'The conversation this change came from has been deleted'
  await expect(history.view.getByTitle(goneHere).filter({ hasText: /^From / })).toHaveText(
    'From a deleted conversation',
  )
  await expect(history.row('Claude created notes.md').getByTitle(goneHere)).toHaveText(
    'Conversation deleted',
  )
  await expect(history.view.getByTitle('Open the conversation this change came from')).toHaveCount(
    0,
  )
  await shootBoth(page, cairn, 'blame-conversation-deleted-1440')
  await page.setViewportSize({ width: 880, height: 560 })
  await expect(gone).toBeVisible()
  expect(await shown()).toBe('Chat deleted')
  await shootBoth(page, cairn, 'blame-conversation-deleted-880')

  // The Memory tab's blame says the same.
  await page.keyboard.press('Escape')
  await expect(history.view).toBeHidden()
  const memory = new MemoryPage(page)
  await memory.openFile('notes.md')
  await memory.fileActions().getByRole('button', { name: 'Blame' }).click()
  const side = memory.pane
    .getByRole('region', { name: 'Blame of notes.md' })
    .getByTitle('The conversation Claude wrote this in has been deleted')
  await expect(side.first()).toHaveText('Chat deleted')
  await expect(
    memory.pane.getByRole('button', { name: /^Open the reply that wrote this/ }),
  ).toHaveCount(0)
  await shootBoth(page, cairn, 'blame-conversation-deleted-memory-880')
  await page.setViewportSize({ width: 1440, height: 900 })
  await shootBoth(page, cairn, 'blame-conversation-deleted-memory-1440')
  await expect(page.getByRole('main', { name: 'Chat' })).not.toContainText(cairn.dataDir)
  expect(cairn.pageErrors).toEqual([])
})

test('the full view’s filters over 10,000 changes reach the last of their rows by keyboard', async ({
  page,
  rendererServer,
}) => {
  // Building 10,000 commits and opening them took 56 s at load 23 on the shared machine.
  test.setTimeout(180_000)
  await withLargeHistory(
    page,
    { commits: 10_000, prefix: 'cairn-e2e-probe34c-large-' },
    async () => {
      await page.setViewportSize({ width: 1280, height: 800 })
      await page.goto(rendererServer.url)
      await expect(page.getByRole('main', { name: 'Chat' })).toBeVisible()
      const history = new FullHistoryPage(page)
      await history.openWithKeyboard()
      await expect(history.rows.first()).toBeVisible()
      const filters = history.view.getByRole('search', { name: 'Filter history' })
      const count = filters.getByRole('status', { name: 'Number of changes' })
      await expect(count).toHaveText('10,000 changes')
      const selected = history.timeline.getByRole('row', { selected: true })

      // Every tenth change is the person's: 1,000 of them, the oldest at commit 10.
      await filters.getByRole('combobox', { name: 'Filter by author' }).selectOption('You')
      await expect(count).toHaveText('1,000 changes')
      await history.timeline.focus()
      await page.keyboard.press('End')
      await expect(selected).toHaveAttribute('aria-rowindex', '1000')
      await expect(history.title()).toContainText('topics/topic-10.md')
      await page.keyboard.press('Home')
      await expect(selected).toHaveAttribute('aria-rowindex', '1')
      await expect(history.title()).toContainText('topics/topic-00.md')

      // One file (commits 7, 57, … 9,957: 200, all Claude's), then by the person: none.
      const file = filters.getByRole('combobox', { name: 'Filter by file' })
      await filters.getByRole('combobox', { name: 'Filter by author' }).selectOption('')
      await file.fill('/memories/topics/topic-07.md')
      await file.press('Enter')
      await expect(count).toHaveText('200 changes')
      await history.timeline.focus()
      await page.keyboard.press('End')
      await expect(selected).toHaveAttribute('aria-rowindex', '200')
      await expect(history.title()).toHaveText(/created topics\/topic-07\.md$/)
      await filters.getByRole('combobox', { name: 'Filter by author' }).selectOption('You')
      await expect(count).toHaveText('0 changes')
      await expect(history.view.getByText('No changes match these filters')).toBeVisible()
    },
  )
})

test('"Memory at this reply" after a reset --hard and a gc outside Cairn says so in a sentence', async ({
  page,
  cairn,
  anthropic,
}) => {
  await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-hostile-12' })
  const written = (await cairn.core.dispatch('memory:write', {
    path: '/memories/base.md',
    content: 'base\n',
  })) as { readonly value: ChangeResult }
  const base = written.value.commit?.oid as string
  const id = await claudeTurn(cairn, anthropic, 'I drink green tea.', [
    create('/memories/prefs.md', 'Tea: green\n'),
    reply.text('Noted.'),
  ])
  await claudeTurn(
    cairn,
    anthropic,
    'What do I drink?',
    [
      reply.toolUse({ input: { command: 'view', path: '/memories/prefs.md' } }),
      reply.text('Green tea.'),
    ],
    id,
  )
  const stored = (await cairn.core.dispatch('conversations:get', { id })) as {
    readonly value: Conversation
  }
  const at = stored.value.messages.filter((m) => m.role === 'assistant').at(-1)?.memoryAt
  expect(at).toMatch(/^[0-9a-f]{40}$/)
  // The person goes back past that reply with git, and lets git drop what is left behind.
  const git = (...args: string[]) =>
    execFileSync(
      'git',
      [
        '--git-dir',
        path.join(cairn.dataDir, 'history.git'),
        '--work-tree',
        path.join(cairn.dataDir, 'memories'),
        '-c',
        'user.name=Ann Smith',
        '-c',
        'user.email=ann@example.com',
        ...args,
      ],
      { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cairn.dataDir }, stdio: 'pipe' },
    )
  git('read-tree', 'main')
  git('reset', '-q', '--hard', base)
  git('reflog', 'expire', '--expire=now', '--all')
  git('gc', '--quiet', '--prune=now')
  expect(() => git('cat-file', '-e', at as string)).toThrow()

  await cairn.open(page)
  const chat = new ChatPage(page)
  await page
    .getByRole('navigation', { name: 'Conversations' })
    .getByText('I drink green tea.')
    .click()
  await expect(chat.replies()).toHaveCount(2)
  await chat.replies().last().getByRole('button', { name: 'Memory at this reply' }).click()
  const memory = new MemoryPage(page)
  await expect(memory.pane).toContainText(/rewritten outside Cairn/)
  await expect(memory.pane).not.toContainText(cairn.dataDir)
  await expect(memory.pane).not.toContainText(/Error:|at \w+ \(/)
  // Said once (the tree and the open file each said it), with no Retry that cannot succeed and
  // no comparison that cannot be made.
  await expect(memory.pane.getByText(/no longer in the history/)).toHaveCount(1)
  await expect(memory.pane.getByRole('button', { name: 'Retry' })).toHaveCount(0)
  await expect(memory.pane.getByRole('button', { name: 'Compare with now' })).toHaveCount(0)
  await expect(memory.pane.getByRole('button', { name: 'Back to now' })).toBeVisible()
  await shoot(page, cairn, 'acceptance-12-hostile-reset-away')
  for (const [width, height] of [
    [880, 560],
    [1440, 900],
  ] as const) {
    await page.setViewportSize({ width, height })
    await shootBoth(page, cairn, `acceptance-12-hostile-reset-away-${width}`)
  }
  expect(cairn.pageErrors).toEqual([])
})

for (const scheme of ['light', 'dark'] as const) {
  test(`"Compare with now" lists a file Claude renamed since the reply once, as renamed (${scheme})`, async ({
    page,
    cairn,
    anthropic,
  }) => {
    await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-hostile-12' })
    const id = await claudeTurn(cairn, anthropic, 'Plan my trip.', [
      create('/memories/notes/trip.md', '# Trip\nGo north.\n'),
      create('/memories/prefs.md', 'Tea: green\n'),
      reply.text('Planned.'),
    ])
    await claudeTurn(
      cairn,
      anthropic,
      'What is my plan?',
      [
        reply.toolUse({ input: { command: 'view', path: '/memories/notes/trip.md' } }),
        reply.text('Go north.'),
      ],
      id,
    )
    await claudeTurn(
      cairn,
      anthropic,
      'File it under travel, and I drink black tea now.',
      [
        reply.toolUse({
          input: { command: 'rename', old_path: '/memories/notes', new_path: '/memories/travel' },
        }),
        strReplace('/memories/prefs.md', 'green', 'black'),
        reply.text('Done.'),
      ],
      id,
    )
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const chat = new ChatPage(page)
    await page.getByRole('navigation', { name: 'Conversations' }).getByText('Plan my trip.').click()
    await expect(chat.replies()).toHaveCount(3)
    await chat.replies().nth(1).getByRole('button', { name: 'Memory at this reply' }).click()
    const memory = new MemoryPage(page)
    const banner = memory.pane.getByRole('status', { name: 'Memory at this reply' })
    await banner.getByRole('button', { name: 'Compare with now' }).click()
    const compared = memory.pane.getByRole('region', { name: 'Compared with now' })
    await expect(compared.getByRole('heading', { level: 3 })).toHaveText(
      '2 files changed since this reply',
    )
    const moved = compared.getByRole('button', { name: /Renamed since/ })
    await expect(moved).toContainText('notes/trip.md → travel/trip.md')
    await expect(compared.getByText('Deleted since')).toHaveCount(0)
    await moved.click()
    await expect(moved).toHaveAttribute('aria-pressed', 'true')
    await expect(compared.getByText('Renamed without changes to its content.')).toBeVisible()
    // Memory at the reply holds it under its old name, marked so in the tree.
    await expect(memory.item('trip.md')).toContainText('Renamed since')
    // Picking the edited file, then the moved one in the tree, shows each one's change.
    await compared.getByRole('button', { name: /Changed since/ }).click()
    await expect(compared.getByRole('cell', { name: 'added: Tea: black' })).toBeVisible()
    await memory.item('trip.md').click()
    await expect(moved).toHaveAttribute('aria-pressed', 'true')
    await shoot(page, cairn, `acceptance-12-hostile-compare-renamed-${scheme}`)
  })
}
