import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, shoot, test } from './fixtures/screens'
import { reply } from '../test/fixtures/fake-anthropic'
import { claudeTurn, create } from './fixtures/claude-turns'
import { ChatPage } from './pages/chat.page'
import { MemoryPage } from './pages/memory.page'

// Review hunt10-app D2: the memory editor turned a CRLF file into LF on one keystroke, so
// History showed every line changed and blame gave every line to "You".
test('an edit in the memory browser keeps a CRLF file CRLF', async ({ page, cairn }) => {
  const original = 'line one\r\nline two\r\nline three\r\n'
  await cairn.core.dispatch('memory:write', { path: '/memories/win.md', content: original })
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('win.md')
  await memory.fileActions().getByRole('button', { name: 'Edit' }).click()
  const editor = memory.editor('win.md')
  await editor.press('ControlOrMeta+End')
  await editor.pressSequentially('line four')
  await editor.press('ControlOrMeta+s')
  await expect(memory.notice).toContainText('Saved win.md')
  expect(await readFile(path.join(cairn.dataDir, 'memories', 'win.md'), 'utf8')).toBe(
    `${original}line four`,
  )
})

// Review hunt10-app D3: text typed in the memory editor was dropped without a word when the
// person opened another file (a click, the arrow keys in the tree, a tool card's link).
for (const scheme of ['light', 'dark'] as const) {
  test(`switching file with unsaved text asks first (${scheme})`, async ({ page, cairn }) => {
    for (const [name, text] of [
      ['a.md', 'alpha\n'],
      ['b.md', 'beta\n'],
    ] as const) {
      await cairn.core.dispatch('memory:write', { path: `/memories/${name}`, content: text })
    }
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const memory = new MemoryPage(page)
    const onDisk = (name: string) => readFile(path.join(cairn.dataDir, 'memories', name), 'utf8')
    await memory.openFile('a.md')
    await memory.fileActions().getByRole('button', { name: 'Edit' }).click()
    const editor = memory.editor('a.md')
    await editor.press('ControlOrMeta+End')
    await editor.pressSequentially('careful notes')
    await expect(memory.pane.getByText('Unsaved changes')).toBeVisible()

    // A click on another file asks; Escape cancels and keeps the draft.
    await memory.openFile('b.md')
    const ask = page.getByRole('dialog', { name: 'Save your changes to a.md?' })
    await expect(ask).toBeVisible()
    await shoot(page, cairn, `memory-unsaved-dialog-${scheme}`)
    await page.keyboard.press('Escape')
    await expect(ask).toBeHidden()
    await expect(editor).toHaveValue('alpha\ncareful notes')

    // The arrow keys in the tree ask too; Discard drops the draft, as asked.
    await memory.item('a.md').focus()
    await page.keyboard.press('ArrowDown')
    await expect(ask).toBeVisible()
    await ask.getByRole('button', { name: 'Discard' }).click()
    await expect(memory.content('b.md')).toContainText('beta')
    expect(await onDisk('a.md')).toBe('alpha\n')

    // Save keeps the text as a change by You, then opens the other file.
    await memory.openFile('a.md')
    await memory.fileActions().getByRole('button', { name: 'Edit' }).click()
    await editor.press('ControlOrMeta+End')
    await editor.pressSequentially('kept')
    await memory.openFile('b.md')
    await ask.getByRole('button', { name: 'Save' }).click()
    await expect(memory.content('b.md')).toContainText('beta')
    await expect(memory.notice).toContainText('Saved a.md')
    expect(await onDisk('a.md')).toBe('alpha\nkept')
  })
}

test('"Memory at this reply" waits for unsaved text to be dealt with', async ({
  page,
  cairn,
  anthropic,
}) => {
  await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-editor' })
  await claudeTurn(cairn, anthropic, 'I drink green tea.', [
    create('/memories/prefs.md', 'Tea: green\n'),
    reply.text('Noted.'),
  ])
  await cairn.open(page)
  await page
    .getByRole('navigation', { name: 'Conversations' })
    .getByText('I drink green tea.')
    .click()
  const chat = new ChatPage(page)
  const memory = new MemoryPage(page)
  await memory.open()
  await memory.openFile('prefs.md')
  await memory.fileActions().getByRole('button', { name: 'Edit' }).click()
  const editor = memory.editor('prefs.md')
  await editor.press('ControlOrMeta+End')
  await editor.pressSequentially('Milk: none')

  const atReply = chat.lastReply().getByRole('button', { name: 'Memory at this reply' })
  const banner = memory.pane.getByRole('status', { name: 'Memory at this reply' })
  const ask = page.getByRole('dialog', { name: 'Save your changes to prefs.md?' })
  await atReply.click()
  await expect(ask).toBeVisible()
  await ask.getByRole('button', { name: 'Cancel' }).click()
  await expect(banner).toBeHidden()
  await expect(editor).toHaveValue('Tea: green\nMilk: none')

  await atReply.click()
  await ask.getByRole('button', { name: 'Save' }).click()
  await expect(banner).toContainText('Memory was empty when this reply began')
  expect(await readFile(path.join(cairn.dataDir, 'memories', 'prefs.md'), 'utf8')).toBe(
    'Tea: green\nMilk: none',
  )
})
