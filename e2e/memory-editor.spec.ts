import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, test } from './fixtures/harness'
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
