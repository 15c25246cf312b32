import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { LogPage } from '../src/shared/types'
import { claudeTurn, create, reply, strReplace } from './fixtures/claude-turns'
import { expect, shoot, test } from './fixtures/screens'
import { FullHistoryPage } from './pages/full-history.page'
import { HistoryPage } from './pages/history.page'
import { MemoryPage } from './pages/memory.page'

const NOTES = `# About the user

- Name: Sam
- Prefers **short answers** with code first
- Works on a Rust CLI called \`trailhead\`

## Projects

| Project   | Status  |
|-----------|---------|
| trailhead | active  |
| dotfiles  | paused  |
`

for (const scheme of ['light', 'dark'] as const) {
  test(`memory and history screens (${scheme})`, async ({ page, cairn, anthropic }) => {
    await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-screens' })
    const intro = await claudeTurn(cairn, anthropic, 'Hi, I am Sam. I like short answers.', [
      create('/memories/notes.md', NOTES),
      reply.text('Nice to meet you, Sam.'),
    ])
    await claudeTurn(cairn, anthropic, 'Tell me about trailhead.', [
      create(
        '/memories/projects/trailhead.md',
        '# trailhead\n\nA Rust CLI for trail maps.\nUses clap 4.\nShips as a single binary.\n',
      ),
      create('/memories/projects/dotfiles.md', 'Paused until spring.\n'),
      reply.text('Noted.'),
    ])
    await cairn.core.dispatch('memory:write', {
      path: '/memories/preferences.md',
      content: 'Editor: Helix\nTheme: dark\n',
    })
    await cairn.core.dispatch('memory:write', {
      path: '/memories/notes.md',
      content: NOTES.replace('- Name: Sam\n', '- Name: Sam (Samantha)\n'),
    })
    // An edit made in another editor: Cairn saves it as its own change.
    const changes = async () => {
      const log = await cairn.core.dispatch('history:log', { offset: 0, limit: 1 })
      return log.ok ? (log.value as LogPage).total : 0
    }
    const total = await changes()
    await writeFile(
      path.join(cairn.dataDir, 'memories', 'notes.md'),
      NOTES.replace('- Name: Sam\n', '- Name: Sam (Samantha)\n').replace(
        '| dotfiles  | paused  |\n',
        '| dotfiles  | paused  |\n| gpx-tools | planned |\n',
      ),
    )
    await expect.poll(changes).toBe(total + 1)
    await claudeTurn(
      cairn,
      anthropic,
      'trailhead now reads GPX files too.',
      [
        strReplace(
          '/memories/projects/trailhead.md',
          'A Rust CLI for trail maps.\nUses clap 4.',
          'A Rust CLI for trail maps and GPX files.\nUses clap 4 and serde.',
        ),
        strReplace('/memories/notes.md', '| trailhead | active  |', '| trailhead | shipping |'),
        reply.text('Updated.'),
      ],
      intro,
    )
    await claudeTurn(cairn, anthropic, 'Start my preferences over.', [
      create('/memories/preferences.md', 'Editor: Zed\n'),
      reply.text('Done.'),
    ])

    await page.setViewportSize({ width: 1440, height: 900 })
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const memory = new MemoryPage(page)
    await memory.openFile('notes.md')
    await expect(memory.content('notes.md')).toContainText('Prefers')
    await shoot(page, cairn, `memory-${scheme}`, { docs: scheme === 'dark' })
    await memory.fileActions().getByRole('button', { name: 'Blame' }).click()
    await expect(
      memory.pane.getByRole('table', { name: 'Line history of /memories/notes.md' }),
    ).toContainText('Outside Cairn')
    await shoot(page, cairn, `memory-blame-${scheme}`)

    const history = new HistoryPage(page)
    await history.open()
    await history.select(history.row('Claude edited projects/trailhead.md'))
    await expect(history.diffTable('/memories/projects/trailhead.md')).toContainText('GPX')
    await shoot(page, cairn, `history-${scheme}`)

    // The full history view: the timeline beside the whole change, here with line provenance.
    const full = new FullHistoryPage(page)
    await full.openWithKeyboard()
    await full.row('Claude edited notes.md').click()
    await full.showAs('Blame')
    const blame = full.blame('/memories/notes.md')
    await expect(blame).toContainText('You')
    await expect(blame).toContainText('Outside Cairn')
    await expect(blame).toContainText('Claude')
    await shoot(page, cairn, `full-history-blame-${scheme}`, { docs: scheme === 'light' })

    await full.row('Claude edited projects/trailhead.md').click()
    await full.showAs('Side by side')
    await expect(full.diffTable('/memories/projects/trailhead.md')).toContainText('serde')
    await shoot(page, cairn, `full-history-split-${scheme}`)

    // The history search: the changes that added or removed a text, one of them opened.
    await full.find('serde')
    await expect(full.searchProgress).toContainText('1 change added or removed')
    await full.hits.getByRole('option').first().click()
    await expect(full.title()).toHaveText('Claude edited projects/trailhead.md')
    await shoot(page, cairn, `full-history-search-${scheme}`)
  })
}
