import { readFile, writeFile } from 'node:fs/promises'
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
  const editor = await memory.typeAtEnd('win.md', 'line four')
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
    const editor = await memory.typeAtEnd('a.md', 'careful notes')
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
  const editor = await memory.typeAtEnd('prefs.md', 'Milk: none')

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

// Review hunt12-story D4: the editor was unmounted, and its text dropped without a word, when
// the open file was renamed or deleted under it (Claude, sync, a restore) or stopped being text.
for (const scheme of ['light', 'dark'] as const) {
  test(`text typed while Claude renames the file stays, and Save writes it back (${scheme})`, async ({
    page,
    cairn,
    anthropic,
  }) => {
    await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-editor' })
    await cairn.core.dispatch('memory:write', {
      path: '/memories/prefs.md',
      content: 'Tea: green\n',
    })
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const memory = new MemoryPage(page)
    const editor = await memory.typeAtEnd('prefs.md', 'Milk: none')

    await claudeTurn(cairn, anthropic, 'Tidy my notes.', [
      reply.toolUse({
        input: {
          command: 'rename',
          old_path: '/memories/prefs.md',
          new_path: '/memories/archive/prefs.md',
        },
      }),
      reply.text('Moved.'),
    ])
    await expect(memory.item('archive')).toBeVisible()
    await expect(memory.pane.getByRole('alert')).toContainText(
      'prefs.md was renamed or deleted while you were editing',
    )
    await expect(editor).toHaveValue('Tea: green\nMilk: none')
    await shoot(page, cairn, `memory-editor-file-gone-${scheme}`)

    await memory.pane.getByRole('button', { name: 'Save', exact: true }).click()
    await expect(memory.notice).toContainText('Saved prefs.md')
    const onDisk = (name: string) => readFile(path.join(cairn.dataDir, 'memories', name), 'utf8')
    expect(await onDisk('prefs.md')).toBe('Tea: green\nMilk: none')
    expect(await onDisk('archive/prefs.md')).toBe('Tea: green\n')
  })
}

test('text typed while the file turns binary stays, and can be saved as a new file', async ({
  page,
  cairn,
}) => {
  await cairn.core.dispatch('memory:write', { path: '/memories/prefs.md', content: 'Tea: green\n' })
  await cairn.open(page)
  const memory = new MemoryPage(page)
  const editor = await memory.typeAtEnd('prefs.md', 'Milk: none')

  // Another program replaces it with bytes that are not text; Cairn sees the outside change.
  const file = path.join(cairn.dataDir, 'memories', 'prefs.md')
  await writeFile(file, Buffer.from([0x89, 0x00, 0xff, 0xfe, 0x00, 0x01]))
  await expect(memory.pane.getByRole('alert')).toContainText('is no longer text', {
    timeout: 20_000,
  })
  await expect(editor).toHaveValue('Tea: green\nMilk: none')

  await memory.pane.getByRole('button', { name: 'Save as new file' }).click()
  await expect(memory.notice).toContainText('Saved your text as prefs (your edit).md')
  await expect(memory.content('prefs (your edit).md')).toContainText('Milk: none')
  expect(await readFile(path.join(cairn.dataDir, 'memories', 'prefs (your edit).md'), 'utf8')).toBe(
    'Tea: green\nMilk: none',
  )
  expect((await readFile(file)).includes(0)).toBe(true)
})

// Review12-story item 6: the draft banner keeps a draft when Claude renames or deletes the open
// file, but closing or reloading the window lost typed text without a word. The page refuses
// its unload while the editor holds unsaved text (Electron's shell then asks, naming the file).
test('closing the window with unsaved editor text asks first, and not once it is saved', async ({
  page,
  cairn,
}) => {
  await cairn.core.dispatch('memory:write', { path: '/memories/x.md', content: 'alpha\n' })
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('x.md')
  await memory.fileActions().getByRole('button', { name: 'Edit' }).click()
  const editor = memory.editor('x.md')
  await editor.press('ControlOrMeta+End')
  await editor.pressSequentially('typed, not saved')
  await expect(memory.pane.getByText('Unsaved changes')).toBeVisible()
  await expect.poll(() => cairn.host.unsaved.at(-1)).toBe('/memories/x.md')

  // The browser asks; Keep editing (dismiss) keeps the page and the text.
  const asked: string[] = []
  page.once('dialog', (dialog) => {
    asked.push(dialog.type())
    void dialog.dismiss()
  })
  await page.close({ runBeforeUnload: true })
  await expect.poll(() => asked).toEqual(['beforeunload'])
  expect(page.isClosed()).toBe(false)
  await expect(editor).toHaveValue('alpha\ntyped, not saved')

  // Saved, nothing is at stake: the window closes without a question.
  await editor.press('ControlOrMeta+s')
  await expect(memory.notice).toContainText('Saved x.md')
  await expect.poll(() => cairn.host.unsaved.at(-1)).toBeNull()
  page.on('dialog', (dialog) => {
    asked.push(dialog.type())
    void dialog.dismiss()
  })
  await page.close({ runBeforeUnload: true })
  await expect.poll(() => page.isClosed()).toBe(true)
  expect(asked).toEqual(['beforeunload'])
})
