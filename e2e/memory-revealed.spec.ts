import { readdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, shoot, test } from './fixtures/screens'
import { MemoryPage } from './pages/memory.page'

// Issue #6, left by the last acceptance probe: the Memory tab's plain view drew invisible
// characters raw (a bidi override reordered the line, a zero-width space was not there to
// see) where History's diff and blame mark them; a text file named `.png` drew as a broken
// image; a name in decomposed Unicode gave no hint that Claude cannot see it.

for (const scheme of ['light', 'dark'] as const) {
  test(`the Memory tab's file view marks invisible characters (${scheme})`, async ({
    page,
    cairn,
  }) => {
    await cairn.core.dispatch('memory:write', {
      path: '/memories/pay.md',
      content: 'Pay \u202eevil\u202c now.\nzero\u200bwidth\nPlain line.\n',
    })
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const memory = new MemoryPage(page)
    await memory.openFile('pay.md')
    const content = memory.content('pay.md')
    await expect(content.getByTitle('An invisible character')).toHaveText([
      'U+202E',
      'U+202C',
      'U+200B',
    ])
    await expect(content).toContainText('Pay U+202Eevil')
    // The view draws no invisible character itself.
    expect(
      await content.evaluate((region) => /[\u202e\u202c\u200b]/.test(region.textContent ?? '')),
    ).toBe(false)
    await shoot(page, cairn, `memory-revealed-${scheme}`)

    // The editor keeps the real characters, and says that it does.
    await memory.fileActions().getByRole('button', { name: 'Edit' }).click()
    await expect(memory.editor('pay.md')).toHaveValue(
      'Pay \u202eevil\u202c now.\nzero\u200bwidth\nPlain line.\n',
    )
    await expect(memory.pane.getByText('This text holds invisible characters')).toBeVisible()
    await shoot(page, cairn, `memory-revealed-editor-${scheme}`)
  })
}

test('a text file named like an image shows its text', async ({ page, cairn }) => {
  await cairn.core.dispatch('memory:write', {
    path: '/memories/diagram.png',
    content: 'Not a picture: a text outline.\n',
  })
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile('diagram.png')
  const content = memory.content('diagram.png')
  await expect(content).toContainText('Not a picture: a text outline.')
  await expect(content).toContainText('named like an image, but it holds text')
  await expect(content.getByRole('img')).toHaveCount(0)
})

test('a name Claude cannot see is said to be one', async ({ page, cairn }) => {
  // `café.md` with its accent stored apart from the e, as macOS writes names.
  const decomposed = 'cafe\u0301.md'
  await writeFile(path.join(cairn.dataDir, 'memories', decomposed), 'Flat white.\n')
  await cairn.open(page)
  const memory = new MemoryPage(page)
  await memory.openFile(decomposed)
  await expect(memory.content(decomposed)).toContainText('Flat white.')
  const note = memory.pane.getByRole('note')
  await expect(note).toContainText('Claude cannot see or change this file')
  // A save would be refused (no memory path names it): Edit is not offered, the note says why.
  await expect(memory.fileActions().getByRole('button', { name: 'Edit' })).toHaveCount(0)
  await expect(note).toContainText('It cannot be edited here until then.')
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    await page.screenshot({ path: test.info().outputPath(`other-spelling-${colorScheme}.png`) })
  }

  // Renamed in the tab, keeping its name: written the way memory paths are, one commit by You.
  await note.getByRole('button', { name: 'Rename to edit' }).focus()
  await page.keyboard.press('Enter')
  await expect(memory.dialog.getByRole('textbox', { name: 'New path' })).toHaveValue(
    `/memories/${decomposed}`,
  )
  await memory.dialog.getByRole('button', { name: 'Rename' }).click()
  await expect(memory.dialog).toBeHidden()
  const composed = decomposed.normalize('NFC')
  await expect.poll(() => readdir(path.join(cairn.dataDir, 'memories'))).toEqual([composed])
  await memory.openFile(composed)
  await expect(memory.content(composed)).toContainText('Flat white.')
  await expect(memory.pane.getByRole('note')).toHaveCount(0)
  await expect(memory.fileActions().getByRole('button', { name: 'Edit' })).toBeVisible()
  expect(await cairn.core.dispatch('history:log', { offset: 0, limit: 1 })).toMatchObject({
    ok: true,
    value: { entries: [{ command: 'rename', actor: 'user' }] },
  })

  // And one deleted there: gone, with its commit.
  await writeFile(path.join(cairn.dataDir, 'memories', 'the\u0301.md'), 'Green.\n')
  await page.reload()
  await memory.openFile('the\u0301.md')
  await memory.fileActions().getByRole('button', { name: 'Delete' }).click()
  await memory.dialog.getByRole('button', { name: 'Delete' }).click()
  await expect.poll(() => readdir(path.join(cairn.dataDir, 'memories'))).toEqual([composed])
  expect(await cairn.core.dispatch('history:log', { offset: 0, limit: 1 })).toMatchObject({
    ok: true,
    value: { entries: [{ command: 'delete', actor: 'user' }] },
  })
})
