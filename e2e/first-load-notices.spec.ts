/**
 * The first reads that used to fail in silence (the changes waiting for review, the recovery
 * reports, the memory notices, the memory sizes, the turns already running): each now says what
 * failed, with Retry, as the other screens do (first-load.spec.ts).
 */
import { attachCore } from './fixtures/harness'
import { expect, test } from './fixtures/claude-turns'
import { refusing } from './fixtures/refusing'
import { ChatPage } from './pages/chat.page'
import { MemoryPage } from './pages/memory.page'

test('each first read that fails says so, and its Retry brings it', async ({
  page,
  cairn,
  rendererServer,
}) => {
  await cairn.core.dispatch('memory:write', { path: '/memories/plans.md', content: 'Lisbon\n' })
  const failing = new Set([
    'review:list',
    'app:recoveries',
    'memory:notices',
    'hygiene:stats',
    'chat:running',
  ])
  const detach = await attachCore(page, refusing(cairn.core, failing))
  try {
    await page.goto(rendererServer.url)
    const chat = new ChatPage(page)
    const memory = new MemoryPage(page)
    await expect(memory.item('plans.md')).toBeVisible()

    const banners = [
      { channel: 'review:list', title: 'Could not load the changes waiting for review' },
      { channel: 'app:recoveries', title: 'Could not check whether Cairn repaired anything' },
      { channel: 'memory:notices', title: 'Could not load what Cairn noticed about memory' },
      { channel: 'hygiene:stats', title: 'Could not load memory sizes' },
      { channel: 'chat:running', title: 'Could not tell whether Claude is answering' },
    ]
    for (const { channel, title } of banners) {
      await expect(page.getByRole('alert', { name: title })).toContainText(`(${channel})`)
    }
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme })
      await page.screenshot({
        path: test.info().outputPath(`first-reads-failed-${colorScheme}.png`),
      })
    }
    await expect(memory.pane).not.toContainText('1 file · 7 B')

    for (const { channel, title } of banners) {
      failing.delete(channel)
      const banner = page.getByRole('alert', { name: title })
      await banner.getByRole('button', { name: 'Retry' }).click()
      await expect(banner).toHaveCount(0)
    }
    // What the reads bring now shows: the size meter.
    await expect(memory.pane).toContainText('1 file · 7 B')
    await expect(chat.composer).toBeEnabled()
  } finally {
    await detach()
  }
})
