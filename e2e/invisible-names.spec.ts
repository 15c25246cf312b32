import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, shoot, test } from './fixtures/screens'
import { HistoryPage } from './pages/history.page'
import { MemoryPage } from './pages/memory.page'

// Sync carries names with characters that draw as nothing (a zero-width space, a byte-order
// mark): refusing them refused every sync of another machine. Drawn raw, `notes.md` and
// `notes\u200B.md` looked the same in the Memory tab and in History. They are drawn as Claude's
// messages write them: each such character as its escape.

const ZWSP = '\u200B'
const BOM = '\uFEFF'

for (const scheme of ['light', 'dark'] as const) {
  test(`names with invisible characters are drawn visibly (${scheme})`, async ({ page, cairn }) => {
    const memories = path.join(cairn.dataDir, 'memories')
    await writeFile(path.join(memories, 'notes.md'), 'the plain one\n')
    await writeFile(path.join(memories, `notes${ZWSP}.md`), 'the one with a zero-width space\n')
    await writeFile(path.join(memories, `${BOM}plan.md`), 'the one with a byte-order mark\n')
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)

    const memory = new MemoryPage(page)
    // Two rows that read differently, each with its own name.
    await expect(memory.item('notes.md')).toHaveCount(1)
    await expect(memory.item('notes\\u200B.md')).toHaveCount(1)
    await expect(memory.item('notes\\u200B.md')).toContainText('notes\\u200B.md')
    await expect(memory.item('\\uFEFFplan.md')).toContainText('\\uFEFFplan.md')
    await memory.openFile('notes\\u200B.md')
    const header = memory.pane.locator('.mem-file-name')
    await expect(header).toHaveText('notes\\u200B.md')
    await expect(memory.pane.getByText('the one with a zero-width space')).toBeVisible()
    // Nothing drawn holds the raw character.
    expect(await memory.pane.innerText()).not.toMatch(/[\u200B\uFEFF]/)
    await shoot(page, cairn, `invisible-names-memory-${scheme}`)

    // History: the change that saved them, its sentence and each file's diff header.
    const history = new HistoryPage(page)
    await history.open()
    const row = history.rows.first()
    await expect(row).toContainText('were edited outside Cairn')
    await history.select(row)
    await expect(history.fileDiff('notes\\u200B.md')).toContainText('notes\\u200B.md')
    await expect(history.fileDiff('\\uFEFFplan.md')).toContainText('\\uFEFFplan.md')
    await expect(history.fileDiff('notes.md')).toHaveCount(1)
    expect(await history.pane.innerText()).not.toMatch(/[\u200B\uFEFF]/)
    await shoot(page, cairn, `invisible-names-history-${scheme}`)
  })
}
