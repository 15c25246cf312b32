import { claudeTurn, create, expect, reply, strReplace, test } from './fixtures/claude-turns'
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
    await claudeTurn(cairn, anthropic, 'Hi, I am Sam. I like short answers.', [
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
    await claudeTurn(cairn, anthropic, 'trailhead now reads GPX files too.', [
      strReplace(
        '/memories/projects/trailhead.md',
        'A Rust CLI for trail maps.\nUses clap 4.',
        'A Rust CLI for trail maps and GPX files.\nUses clap 4 and serde.',
      ),
      reply.text('Updated.'),
    ])
    await claudeTurn(cairn, anthropic, 'Start my preferences over.', [
      create('/memories/preferences.md', 'Editor: Zed\n'),
      reply.text('Done.'),
    ])

    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const memory = new MemoryPage(page)
    await memory.openFile('notes.md')
    await expect(memory.content('notes.md')).toContainText('Prefers')
    await page.screenshot({ path: `e2e/artifacts/memory-${scheme}.png` })

    const history = new HistoryPage(page)
    await history.open()
    await history.select(history.row('str_replace'))
    await expect(history.diffTable('/memories/projects/trailhead.md')).toContainText('GPX')
    await page.screenshot({ path: `e2e/artifacts/history-${scheme}.png` })

    await history.showSideBySide()
    await expect(history.diffTable('/memories/projects/trailhead.md')).toContainText('serde')
    await page.screenshot({ path: `e2e/artifacts/history-split-${scheme}.png` })
  })
}
