/**
 * The Memory tab's "By last read" list, over 1,500 files: every file is in it as a screen
 * reader counts it, only the rows in view are drawn (it drew every file, so a large memory
 * froze the tab), and the far end is reached by scrolling and opens.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createCore } from '../src/main/core'
import { attachCore, expect, test } from './fixtures/harness'
import { shootBoth } from './fixtures/screens'
import { MemoryPage } from './pages/memory.page'

test('the By last read list of 1,500 files draws only what is in view, and reaches its end', async ({
  page,
  rendererServer,
}) => {
  test.setTimeout(240_000)
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-use-'))
  const folder = path.join(dataDir, 'memories')
  await mkdir(folder, { recursive: true })
  for (let i = 0; i < 1500; i++) {
    const name = `note-${String(i).padStart(4, '0')}.md`
    await writeFile(path.join(folder, name), `# Note ${i}\n`)
  }
  // The files were put there before Cairn opened: the open saves them to the history.
  const core = await createCore({ dataDir })
  const detach = await attachCore(page, core)
  try {
    await page.goto(rendererServer.url)
    const memory = new MemoryPage(page)
    await memory.pane
      .getByRole('combobox', { name: 'Sort files' })
      .selectOption('By last read', { timeout: 120_000 })
    const list = memory.pane.getByRole('list', { name: 'Memory files by use' })
    const rows = list.getByRole('listitem')
    await expect(rows.first()).toHaveAttribute('aria-setsize', '1500')
    await expect(rows.first()).toHaveAttribute('aria-posinset', '1')
    expect(await rows.count()).toBeLessThan(100)
    await shootBoth(page, { dataDir }, 'file-use-windowed')

    // Scrolled to its end, the last file is drawn, in view, and opens.
    await list.evaluate((element) => {
      const scroller = element.closest('.mem-list')!
      scroller.scrollTop = scroller.scrollHeight
    })
    const last = rows.last()
    await expect(last).toHaveAttribute('aria-posinset', '1500')
    await expect(last).toBeInViewport()
    expect(await rows.count()).toBeLessThan(100)
    const button = last.getByRole('button')
    const name = (await button.getAttribute('aria-label'))!.split(',')[0]!
    await button.click()
    await expect(button).toHaveAttribute('aria-current', 'true')
    await expect(memory.content(name.replace(/^\/memories\//, ''))).toContainText('# Note')
  } finally {
    detach()
    await core.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})
