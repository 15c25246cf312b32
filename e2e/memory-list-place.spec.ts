/**
 * The memory tree and the By last read list keep the person's place when Claude creates a file
 * above the one they have open: the list jumped back to the open file (its row's number had
 * changed, which read as a new selection) and lost the rows they were reading.
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Locator } from '@playwright/test'
import { expect, test } from './fixtures/screens'
import { MemoryPage } from './pages/memory.page'

/** Scrolls the Memory tab's list to its end. */
function scrollToEnd(list: Locator): Promise<void> {
  return list.evaluate((element) => {
    const scroller = element.closest('.mem-list')!
    scroller.scrollTop = scroller.scrollHeight
  })
}

test('a file created above the open one leaves the tree and the By last read list where one reads', async ({
  page,
  cairn,
}) => {
  test.setTimeout(120_000)
  const folder = path.join(cairn.dataDir, 'memories')
  for (let i = 100; i < 400; i++) await writeFile(path.join(folder, `note-${i}.md`), `Note ${i}\n`)
  await page.setViewportSize({ width: 1440, height: 900 })
  await cairn.open(page)
  const memory = new MemoryPage(page)

  // The tree: the second file open, the last ones read; Claude creates a file at the top.
  await memory.openFile('note-101.md')
  await expect(memory.content('note-101.md')).toContainText('Note 101')
  await scrollToEnd(memory.tree)
  await expect(memory.item('note-399.md')).toBeInViewport()
  const created = await cairn.core.dispatch('memory:write', {
    path: '/memories/a-first.md',
    content: 'Written by Claude\n',
  })
  expect(created.ok).toBe(true)
  await expect(memory.tree.getByRole('treeitem').last()).toHaveAttribute('aria-setsize', '301')
  await expect(memory.item('note-399.md')).toBeInViewport()
  await expect(memory.item('note-101.md')).not.toBeInViewport()
  await expect(memory.item('note-101.md')).toHaveAttribute('aria-selected', 'true')

  // Scrolled back to the open file, it is followed as files are added above it.
  await memory.tree.evaluate((element) => {
    element.closest('.mem-list')!.scrollTop = 0
  })
  await expect(memory.item('note-101.md')).toBeInViewport()
  expect(
    (await cairn.core.dispatch('memory:write', { path: '/memories/a-second.md', content: 'x\n' }))
      .ok,
  ).toBe(true)
  await expect(memory.item('a-second.md')).toBeVisible()
  await expect(memory.item('note-101.md')).toBeInViewport()

  // The By last read list (every file unread, so by name): the same.
  await memory.pane.getByRole('combobox', { name: 'Sort files' }).selectOption('By last read')
  const list = memory.pane.getByRole('list', { name: 'Memory files by use' })
  const row = (name: string) =>
    list.getByRole('button', { name: new RegExp(`^${name.replace('.', '\\.')},`) })
  await expect(row('note-101.md')).toHaveAttribute('aria-current', 'true')
  await scrollToEnd(list)
  await expect(row('note-399.md')).toBeInViewport()
  expect(
    (await cairn.core.dispatch('memory:write', { path: '/memories/a-third.md', content: 'x\n' }))
      .ok,
  ).toBe(true)
  await expect(list.getByRole('listitem').last()).toHaveAttribute('aria-setsize', '303')
  await expect(row('note-399.md')).toBeInViewport()
  await expect(row('note-101.md')).not.toBeInViewport()
})
