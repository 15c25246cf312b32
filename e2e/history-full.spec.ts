import { execFileSync } from 'node:child_process'
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { claudeTurn, create, expect, reply, strReplace, test } from './fixtures/claude-turns'
import { ChatPage } from './pages/chat.page'
import { FullHistoryPage } from './pages/full-history.page'
import { MemoryPage } from './pages/memory.page'

const LONG =
  'Trail notes: ' +
  Array.from({ length: 40 }, (_, i) => `waypoint ${i} near the ridge`).join(', ') +
  '.'

test('the full history view opens with the keyboard and reads like a story', async ({
  page,
  cairn,
  anthropic,
}) => {
  await claudeTurn(cairn, anthropic, 'Remember my trail notes.', [
    create('/memories/trailhead.md', `# trailhead\n\n${LONG}\nShort line.\n`),
    reply.text('Saved.'),
  ])
  await claudeTurn(cairn, anthropic, 'It uses clap 4 now.', [
    strReplace('/memories/trailhead.md', 'Short line.', 'Uses clap 4.'),
    reply.text('Updated.'),
  ])
  await page.setViewportSize({ width: 1280, height: 800 })
  await cairn.open(page)
  const history = new FullHistoryPage(page)
  await expect(page.getByRole('main', { name: 'Chat' })).toBeVisible()

  await history.openWithKeyboard()
  await expect(history.view).toBeVisible()
  await expect(page.getByRole('main', { name: 'Chat' })).toBeHidden()
  await expect(history.timeline.getByRole('heading', { name: 'Today' })).toBeVisible()
  const edit = history.row('Claude edited trailhead.md')
  await expect(edit).toHaveCount(1)
  await expect(history.row('Claude created trailhead.md')).toHaveCount(1)
  // Times of day under the day heading, the exact moment on hover.
  const time = edit.locator('time')
  await expect(time).toHaveText(/^\d{1,2}:\d{2}/)
  await expect(time).toHaveAttribute('title', /\d{4}/)

  // Pick the change with the keyboard: the first row is the newest.
  await history.timeline.focus()
  await page.keyboard.press('ArrowDown')
  await expect(history.title()).toHaveText('Claude edited trailhead.md')
  await expect(history.detail.getByRole('button', { name: /^From / })).toContainText(
    'It uses clap 4 now.',
  )
  // The facts are one click away.
  await history.detail.getByText('Details').click()
  await expect(
    history.detail.getByRole('region', { name: 'Commit message and trailers' }),
  ).toContainText('Command: str_replace')

  // Unified: the diff takes the width of the window beside the timeline.
  const unified = history.diffTable('/memories/trailhead.md')
  await expect(unified).toContainText('Uses clap 4.')
  expect((await unified.boundingBox())?.width).toBeGreaterThan(700)

  // Side by side: long lines stay on one line (each side scrolls), unless asked to wrap.
  await history.showAs('Side by side')
  const split = history.diffTable('/memories/trailhead.md')
  const after = split.getByRole('rowgroup', { name: 'After' })
  const longRow = after.getByRole('row').filter({ hasText: 'waypoint 39' })
  const shortRow = after.getByRole('row').filter({ hasText: 'Uses clap 4.' })
  await expect(longRow).toBeVisible()
  const longBox = await longRow.boundingBox()
  const shortBox = await shortRow.boundingBox()
  expect(longBox?.height).toBeGreaterThan(0)
  expect(longBox?.height).toBe(shortBox?.height)
  expect((await split.boundingBox())?.width).toBeGreaterThan(700)
  const beforeSide = split.getByRole('rowgroup', { name: 'Before' })
  expect(await beforeSide.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true)

  await history.detail.getByRole('checkbox', { name: 'Wrap lines' }).check()
  const wrapped = history.diffTable('/memories/trailhead.md').getByRole('row').filter({
    hasText: 'waypoint 39',
  })
  expect((await wrapped.first().boundingBox())?.height).toBeGreaterThan(2 * (shortBox?.height ?? 0))

  // Escape goes back to the chat, as it was.
  await page.keyboard.press('Escape')
  await expect(history.view).toBeHidden()
  await expect(page.getByRole('main', { name: 'Chat' })).toBeVisible()
})

test('a line’s provenance leads to the reply that wrote it, scrolled into view', async ({
  page,
  cairn,
  anthropic,
}) => {
  const story = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} of a long answer.`).join(
    '\n\n',
  )
  const id = await claudeTurn(cairn, anthropic, 'I like green tea.', [
    create('/memories/notes.md', '# Notes\nSam likes green tea.\n'),
    reply.text(`Noted.\n\n${story}`),
  ])
  for (const topic of ['hiking', 'rust', 'coffee']) {
    await claudeTurn(
      cairn,
      anthropic,
      `Tell me about ${topic}.`,
      [
        strReplace('/memories/notes.md', '# Notes\n', `# Notes\nTopic: ${topic}.\n`),
        reply.text(`About ${topic}.\n\n${story}`),
      ],
      id,
    )
  }
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('notes.md')
  await memory.fileActions().getByRole('button', { name: 'Blame' }).click()
  const blame = memory.pane.getByRole('table', { name: 'Line history of /memories/notes.md' })
  const line = blame.getByRole('row').filter({ hasText: 'Sam likes green tea.' })
  await expect(line).toContainText('Claude')

  // The chat shows the end of another conversation (none open yet): the reply is far up.
  const chat = new ChatPage(page)
  const card = chat.transcript.getByRole('region', { name: 'Memory create /memories/notes.md' })
  await line.getByRole('button', { name: /Open the reply that wrote this/ }).click()
  await expect(chat.title).toHaveText('I like green tea.')
  await expect(card).toBeInViewport()
  await expect(card).toHaveAttribute('aria-current', 'true')
  // It was a real scroll: the latest reply is out of view.
  await expect(chat.replies().last()).not.toBeInViewport()
})

test('"Memory at this reply" shows memory as it was, read-only, and compares it with now', async ({
  page,
  cairn,
  anthropic,
}) => {
  const id = await claudeTurn(cairn, anthropic, 'I drink green tea.', [
    create('/memories/prefs.md', 'Tea: green\n'),
    reply.text('Noted.'),
  ])
  await claudeTurn(
    cairn,
    anthropic,
    'Now black tea.',
    [
      reply.toolUse({ input: { command: 'view', path: '/memories/prefs.md' } }),
      strReplace('/memories/prefs.md', 'green', 'black'),
      reply.text('Changed.'),
    ],
    id,
  )
  await cairn.open(page)
  const chat = new ChatPage(page)
  await page
    .getByRole('navigation', { name: 'Conversations' })
    .getByText('I drink green tea.')
    .click()
  await expect(chat.replies()).toHaveCount(2)
  await chat.replies().last().getByRole('button', { name: 'Memory at this reply' }).click()

  const memory = new MemoryPage(page)
  const banner = memory.pane.getByRole('status', { name: 'Memory at this reply' })
  await expect(banner).toContainText('Read-only')
  await expect(memory.item('prefs.md')).toContainText('Viewed')
  await expect(memory.content('prefs.md')).toContainText('Tea: green')
  await expect(memory.fileActions().getByRole('button', { name: 'Edit' })).toHaveCount(0)

  await banner.getByRole('button', { name: 'Compare with now' }).click()
  const diff = memory.pane.getByRole('table', { name: 'Changes in /memories/prefs.md' })
  await expect(diff.getByRole('cell', { name: 'removed: Tea: green' })).toBeVisible()
  await expect(diff.getByRole('cell', { name: 'added: Tea: black' })).toBeVisible()

  await banner.getByRole('button', { name: 'Back to now' }).click()
  await expect(banner).toBeHidden()
  await expect(memory.content('prefs.md')).toContainText('Tea: black')
})

for (const scheme of ['light', 'dark'] as const) {
  test(`"Memory at this reply" with one damaged old version lists the rest and marks it (${scheme})`, async ({
    page,
    cairn,
    anthropic,
  }) => {
    const id = await claudeTurn(cairn, anthropic, 'Keep two notes.', [
      create('/memories/prefs.md', 'Tea: green\n'),
      create('/memories/old-notes.md', 'an old note\n'),
      reply.text('Noted.'),
    ])
    await claudeTurn(
      cairn,
      anthropic,
      'Rewrite the old note.',
      [create('/memories/old-notes.md', 'rewritten\n'), reply.text('Done.')],
      id,
    )
    // The first version of old-notes.md loses its object (review hunt12-story D5).
    const gitDir = path.join(cairn.dataDir, 'history.git')
    const first = execFileSync('git', ['--git-dir', gitDir, 'log', '--format=%H', '--reverse'], {
      encoding: 'utf8',
    }).split('\n')[1] as string
    const blob = execFileSync('git', ['--git-dir', gitDir, 'rev-parse', `${first}:old-notes.md`], {
      encoding: 'utf8',
    }).trim()
    await rm(path.join(gitDir, 'objects', blob.slice(0, 2), blob.slice(2)))

    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const chat = new ChatPage(page)
    await page
      .getByRole('navigation', { name: 'Conversations' })
      .getByText('Keep two notes.')
      .click()
    await expect(chat.replies()).toHaveCount(2)
    await chat.replies().last().getByRole('button', { name: 'Memory at this reply' }).click()
    const memory = new MemoryPage(page)
    await expect(memory.pane.getByRole('status', { name: 'Memory at this reply' })).toContainText(
      'Read-only',
    )
    await expect(memory.item('old-notes.md')).toHaveAccessibleName(/Damaged/)
    await memory.openFile('prefs.md')
    await expect(memory.content('prefs.md')).toContainText('Tea: green')
    await page.screenshot({ path: `/tmp/fix12-story-shots/memory-at-reply-damaged-${scheme}.png` })
  })
}

test('the history search finds the change that introduced a sentence', async ({
  page,
  cairn,
  anthropic,
}) => {
  const id = await claudeTurn(cairn, anthropic, 'About me.', [
    create('/memories/me.md', '# Me\n- Lives in Lisbon.\n'),
    reply.text('Noted.'),
  ])
  await claudeTurn(
    cairn,
    anthropic,
    'I run.',
    [
      strReplace(
        '/memories/me.md',
        '- Lives in Lisbon.\n',
        '- Lives in Lisbon.\n- Training for a marathon in May.\n',
      ),
      reply.text('Noted.'),
    ],
    id,
  )
  await claudeTurn(
    cairn,
    anthropic,
    'I moved.',
    [strReplace('/memories/me.md', 'Lisbon', 'Porto'), reply.text('Noted.')],
    id,
  )
  await cairn.open(page)
  const history = new FullHistoryPage(page)
  await history.openWithKeyboard()
  await history.find('training for a marathon')
  await expect(history.searchProgress).toContainText('1 change added or removed')
  const hit = history.hits.getByRole('option')
  await expect(hit).toHaveCount(1)
  await expect(hit).toContainText('Claude edited me.md')
  await expect(hit).toContainText('added in me.md')
  await hit.click()
  await expect(history.title()).toHaveText('Claude edited me.md')
  await expect(history.diffTable('/memories/me.md')).toContainText('Training for a marathon')
  await expect(history.diffTable('/memories/me.md')).not.toContainText('Porto')

  await history.view.getByRole('button', { name: 'Back to all changes' }).click()
  await expect(history.timeline).toBeVisible()
})
