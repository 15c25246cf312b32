import { expect, test } from './fixtures/harness'
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

async function seedMemory(dispatch: (channel: string, payload: unknown) => Promise<unknown>) {
  const write = (path: string, content: string) => dispatch('memory:write', { path, content })
  await write('/memories/notes.md', NOTES)
  await write(
    '/memories/projects/trailhead.md',
    '# trailhead\n\nA Rust CLI for trail maps.\nUses clap 4.\n',
  )
  await write('/memories/projects/dotfiles.md', 'Paused until spring.\n')
  await write('/memories/preferences.md', 'Editor: Helix\nTheme: dark\n')
  await write(
    '/memories/projects/trailhead.md',
    '# trailhead\n\nA Rust CLI for trail maps and GPX files.\nUses clap 4 and serde.\n',
  )
}

for (const scheme of ['light', 'dark'] as const) {
  test(`memory and history screens (${scheme})`, async ({ page, cairn }) => {
    await seedMemory((channel, payload) => cairn.core.dispatch(channel, payload))
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const memory = new MemoryPage(page)
    await memory.openFile('notes.md')
    await expect(memory.content('notes.md')).toContainText('Prefers')
    await page.screenshot({ path: `e2e/artifacts/memory-${scheme}.png` })

    const history = new HistoryPage(page)
    await history.open()
    await history.select(history.row('trailhead.md').first())
    await expect(history.diffTable('/memories/projects/trailhead.md')).toContainText('GPX')
    await page.screenshot({ path: `e2e/artifacts/history-${scheme}.png` })
  })
}
