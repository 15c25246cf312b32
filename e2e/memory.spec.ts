import { execFileSync } from 'node:child_process'
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { nodeDisk, setDisk } from '../src/main/lib/disk'
import { asTheAccount, errnoError, hookDisk } from '../src/main/lib/disk-hooks'
import { create, expect, reply, test } from './fixtures/claude-turns'
import { HistoryPage } from './pages/history.page'
import { MemoryPage } from './pages/memory.page'
import { shoot } from './fixtures/screens'

/** Seeds a memory file through the real API, as a change made before the test's own steps. */
async function seed(
  cairn: { core: { dispatch: (c: string, p: unknown) => Promise<unknown> } },
  file: string,
  content: string,
) {
  const result = await cairn.core.dispatch('memory:write', { path: `/memories/${file}`, content })
  expect(result).toMatchObject({ ok: true })
}

function lastAuthor(dataDir: string): string {
  return execFileSync(
    'git',
    ['--git-dir', path.join(dataDir, 'history.git'), 'log', '-1', '--format=%an'],
    {
      encoding: 'utf8',
    },
  ).trim()
}

test('the user edits a memory file in the browser and the commit is by You', async ({
  page,
  cairn,
}) => {
  await seed(cairn, 'notes.md', '# Notes\n\nLikes tea.\n')
  await cairn.open(page)
  const memory = new MemoryPage(page)

  await expect(memory.item('notes.md')).toBeVisible()
  await memory.openFile('notes.md')
  await expect(memory.content('notes.md')).toContainText('Likes tea.')

  await memory.editAndSave('notes.md', '# Notes\n\nLikes green tea.\n')
  await expect(memory.notice).toContainText('Saved notes.md')
  await expect(memory.content('notes.md')).toContainText('Likes green tea.')
  expect(lastAuthor(cairn.dataDir)).toBe('You')

  const history = new HistoryPage(page)
  await history.open()
  const newest = history.rows.first()
  await expect(newest).toContainText('You')
  await expect(newest).toContainText('edit')
  await expect(newest).toContainText('notes.md')
  await history.select(newest)
  await expect(history.diffTable('/memories/notes.md')).toContainText('Likes green tea.')
})

test('the user creates, renames and deletes a file, each confirmed and undoable', async ({
  page,
  cairn,
}) => {
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await expect(memory.pane.getByText('No memories yet')).toBeVisible()
  await expect(memory.pane.getByText('How memory works')).toBeVisible()

  await memory.createFile('/memories/people/ana.md', 'Ana prefers mornings.\n')
  await expect(memory.notice).toContainText('Created people/ana.md')
  await expect(memory.item('ana.md')).toBeVisible()
  await expect(memory.content('ana.md')).toContainText('Ana prefers mornings.')

  await memory.renameOpenFile('/memories/people/ana-lopez.md')
  await expect(memory.notice).toContainText('Renamed people/ana.md to people/ana-lopez.md')
  await expect(memory.item('ana-lopez.md')).toBeVisible()
  await expect(memory.item('ana.md')).toHaveCount(0)

  await memory.fileActions().getByRole('button', { name: 'Delete' }).click()
  await expect(memory.dialog).toContainText('you can bring it back from History')
  await memory.dialog.getByRole('button', { name: 'Delete' }).click()
  await expect(memory.notice).toContainText('Deleted people/ana-lopez.md')
  await expect(memory.item('ana-lopez.md')).toHaveCount(0)

  await memory.notice.getByRole('button', { name: 'Undo' }).click()
  await expect(memory.item('ana-lopez.md')).toBeVisible()
  expect(lastAuthor(cairn.dataDir)).toBe('You')
})

test('full-text search opens the file at the matching line', async ({ page, cairn }) => {
  await seed(cairn, 'travel.md', 'Trips\n- Lisbon in May\n- Kyoto in autumn\n')
  await seed(cairn, 'food.md', 'Allergic to peanuts\n')
  await cairn.open(page)
  const memory = new MemoryPage(page)

  await memory.searchFor('kyoto')
  await expect(memory.searchResults).toContainText('1 match in 1 file')
  await memory.searchResults.getByRole('button', { name: /Kyoto in autumn/ }).click()
  await expect(memory.content('travel.md')).toContainText('Lisbon in May')

  await memory.searchFor('nothing-like-this')
  await expect(memory.searchResults).toContainText('Nothing matches')
})

test('markdown renders without raw HTML, and https links open outside the app', async ({
  page,
  cairn,
}) => {
  await seed(
    cairn,
    'doc.md',
    '# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<div>raw html block</div>\n\n[docs](https://example.com/docs) and [local](file:///etc/passwd)\n',
  )
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('doc.md')
  await memory.fileActions().getByRole('button', { name: 'Preview' }).click()

  const rendered = memory.content('doc.md')
  await expect(rendered.getByRole('heading', { name: 'Title' })).toBeVisible()
  await expect(rendered.getByRole('table')).toContainText('1')
  await expect(rendered.getByText('raw html block')).toHaveCount(0)
  await expect(rendered.getByRole('link', { name: 'local' })).toHaveCount(0)
  await rendered.getByRole('link', { name: 'docs' }).click()
  await expect
    .poll(() => cairn.host.opened)
    .toContainEqual({ kind: 'url', target: 'https://example.com/docs' })
})

test('an image in memory is shown', async ({ page, cairn }) => {
  // A 1×1 PNG written straight into the folder (the history records it on open).
  const png = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  )
  const { writeFile } = await import('node:fs/promises')
  await writeFile(path.join(cairn.dataDir, 'memories', 'dot.png'), png)
  await cairn.core.dispatch('memory:write', { path: '/memories/readme.md', content: 'x\n' })
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('dot.png')
  await expect(memory.content('dot.png').getByRole('img', { name: 'dot.png' })).toBeVisible()
})

test('"Show history" opens the timeline filtered to that file', async ({ page, cairn }) => {
  await seed(cairn, 'a.md', 'one\n')
  await seed(cairn, 'b.md', 'two\n')
  await seed(cairn, 'a.md', 'one, edited\n')
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('a.md')
  await memory.showHistoryOfOpenFile()

  const history = new HistoryPage(page)
  await expect(history.pane.getByRole('combobox', { name: 'Filter by file' })).toHaveValue(
    '/memories/a.md',
  )
  await expect(history.count).toHaveText('2 changes')
  await expect(history.rows).toHaveCount(2)
  await expect(history.row('b.md')).toHaveCount(0)
})

test('the tree updates live when a chat turn writes memory, and the timeline shows Claude', async ({
  page,
  cairn,
  anthropic,
}) => {
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await expect(memory.pane.getByText('No memories yet')).toBeVisible()

  anthropic.script(
    create('/memories/notes.md', '# Notes\n\nThe user is learning Portuguese.\n'),
    reply.text('I will remember that.'),
  )
  const composer = page.getByRole('textbox', { name: 'Message Claude' })
  await composer.fill('I am learning Portuguese.')
  await composer.press('Enter')

  await expect(memory.item('notes.md')).toBeVisible()
  await memory.openFile('notes.md')
  await expect(memory.content('notes.md')).toContainText('learning Portuguese')

  // The chat's "View change" lands on that commit in the timeline.
  await page.getByRole('button', { name: 'View change to /memories/notes.md' }).click()
  const history = new HistoryPage(page)
  const selected = history.timeline.getByRole('row', { selected: true })
  await expect(selected).toContainText('Claude created notes.md')
  await expect(
    history.detail.getByRole('heading', { name: 'Claude created notes.md' }),
  ).toBeVisible()
  await expect(history.detail.getByRole('button', { name: /^From / })).toContainText(
    'I am learning Portuguese.',
  )
})

test('the tree is navigable with the keyboard', async ({ page, cairn }) => {
  await seed(cairn, 'projects/alpha.md', 'alpha\n')
  await seed(cairn, 'zeta.md', 'zeta\n')
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.item('projects').focus()
  await page.keyboard.press('ArrowDown')
  await expect(memory.item('alpha.md')).toBeFocused()
  await expect(memory.content('alpha.md')).toContainText('alpha')
  await page.keyboard.press('ArrowLeft')
  await expect(memory.item('projects')).toBeFocused()
  await page.keyboard.press('ArrowLeft')
  await expect(memory.item('projects')).toHaveAttribute('aria-expanded', 'false')
  await expect(memory.item('alpha.md')).toHaveCount(0)
  await page.keyboard.press('ArrowDown')
  await expect(memory.item('zeta.md')).toBeFocused()
  await expect(memory.content('zeta.md')).toContainText('zeta')
})

test('the editor warns when the file changes while the user edits it', async ({ page, cairn }) => {
  await seed(cairn, 'plan.md', 'Step 1\n')
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('plan.md')
  await memory.fileActions().getByRole('button', { name: 'Edit' }).click()
  await memory.editor('plan.md').fill('Step 1\nStep 2 (mine)\n')
  await seed(cairn, 'plan.md', 'Step 1\nStep 2 (elsewhere)\n')
  await expect(memory.pane.getByRole('alert')).toContainText('changed while you were editing')
  await expect(memory.editor('plan.md')).toHaveValue('Step 1\nStep 2 (mine)\n')
})

for (const scheme of ['light', 'dark'] as const) {
  test(`a folder and a file Cairn may not read are named in the tree, and the rest works (${scheme})`, async ({
    page,
    cairn,
  }) => {
    await seed(cairn, 'notes.md', 'notes: tea\n')
    await seed(cairn, 'topics/cats.md', 'notes on cats\n')
    // Another account's folder and file (mode 000). The core runs in this process as root, who
    // reads everything: it looks like uid 4242, and the disk seam denies them as the system
    // does (review hunt12-story D3).
    const memories = path.join(cairn.dataDir, 'memories')
    await mkdir(path.join(memories, 'backup-tool'))
    await writeFile(path.join(memories, 'backup-tool', 'state.md'), 'notes of a tool\n')
    await writeFile(path.join(memories, 'private.md'), 'private notes\n')
    // Cairn's own files belong to the account it runs as (here, the one it looks like).
    execFileSync('chown', ['-R', '4242:4242', memories])
    await chmod(path.join(memories, 'backup-tool'), 0o000)
    await chmod(path.join(memories, 'private.md'), 0o000)
    const hooked = hookDisk(
      nodeDisk,
      asTheAccount((call) => {
        if (call.name !== 'openSync' && call.name !== 'readdirSync') return undefined
        const target = String(call.args[0])
        if (target.endsWith('/private.md') || target.endsWith('/backup-tool')) {
          return errnoError(call, 'EACCES')
        }
        return undefined
      }),
    )
    const undoDisk = setDisk(hooked.disk)
    const getuid = process.getuid
    process.getuid = () => 4242
    try {
      await page.emulateMedia({ colorScheme: scheme })
      await cairn.open(page)
      const memory = new MemoryPage(page)
      await expect(memory.item('backup-tool')).toHaveAccessibleName(/Cannot be read/)
      // No expander: it lists nothing, like the unreadable file (review12-story item 3).
      await expect(memory.item('backup-tool')).not.toHaveAttribute('aria-expanded')
      await expect(memory.item('private.md')).toHaveAccessibleName(/Cannot be read/)
      await expect(memory.item('notes.md')).not.toHaveAccessibleName(/Cannot be read/)
      await expect(memory.item('cats.md')).toBeVisible()
      await expect(memory.tree).not.toContainText(cairn.dataDir)
      await memory.openFile('notes.md')
      await expect(memory.content('notes.md')).toContainText('notes: tea')
      await shoot(page, cairn, `memory-unreadable-${scheme}`)
      await page.screenshot({ path: `/tmp/fix12-story-shots/memory-unreadable-${scheme}.png` })

      await memory.searchFor('notes')
      await expect(memory.searchResults).toContainText('2 matches in 2 files')
    } finally {
      process.getuid = getuid
      undoDisk()
      await chmod(path.join(memories, 'backup-tool'), 0o755)
      await chmod(path.join(memories, 'private.md'), 0o644)
    }
  })
}
