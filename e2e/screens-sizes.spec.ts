/**
 * The Memory tab's sizes at a unit's edge: a file of 1,048,525 bytes (within the 1 MiB a file
 * may hold) rounds to 1024.0 KB, and is shown as 1.0 MB, as the Memory tool's listing says.
 */
import { expect, shoot, test } from './fixtures/screens'
import { MemoryPage } from './pages/memory.page'

for (const scheme of ['light', 'dark'] as const) {
  test(`a size that rounds to 1024.0 KB reads 1.0 MB (${scheme})`, async ({ page, cairn }) => {
    const write = (path: string, content: string) =>
      cairn.core.dispatch('memory:write', { path, content })
    expect((await write('/memories/edge.md', `${'x'.repeat(1_048_524)}\n`)).ok).toBe(true)
    expect((await write('/memories/below.md', `${'x'.repeat(1_048_523)}\n`)).ok).toBe(true)
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const memory = new MemoryPage(page)
    await memory.open()
    await expect(memory.item('edge.md')).toHaveAccessibleName(/, 1\.0 MB/)
    await expect(memory.item('below.md')).toHaveAccessibleName(/, 1023\.9 KB/)
    await expect(memory.tree).not.toContainText('1024.0')
    await shoot(page, cairn, `memory-sizes-${scheme}`)
  })
}
