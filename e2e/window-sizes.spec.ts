/**
 * The window at the smallest size the desktop app allows (880×560, src/main/index.ts) and at a
 * large one, light and dark: every pane's main actions stay on screen and whole, and the window
 * never scrolls sideways. Screenshots go to e2e/artifacts (window-<size>-<screen>-<scheme>).
 */
import type { Locator, Page } from '@playwright/test'
import { claudeTurn, create, reply } from './fixtures/claude-turns'
import { expect, shoot, test } from './fixtures/screens'
import { ChatPage } from './pages/chat.page'
import { HistoryPage } from './pages/history.page'
import { MemoryPage } from './pages/memory.page'
import { SettingsPage } from './pages/settings.page'

const SIZES = [
  { width: 880, height: 560 },
  { width: 2560, height: 1440 },
] as const

/** Each control wholly inside the window once scrolled to (nothing cut off by a pane's edge). */
async function expectWhole(controls: ReadonlyArray<Locator>): Promise<void> {
  for (const control of controls) {
    await control.scrollIntoViewIfNeeded()
    // 0.99: a box's last fraction of a pixel may round off the edge.
    await expect(control).toBeInViewport({ ratio: 0.99 })
  }
}

/** Tab walks the controls in order, each shown whole as it takes the focus. */
async function expectReachableByTab(controls: ReadonlyArray<Locator>): Promise<void> {
  const [first, ...rest] = controls
  if (!first) return
  await first.focus()
  await expect(first).toBeInViewport({ ratio: 0.99 })
  for (const control of rest) {
    await control.page().keyboard.press('Tab')
    await expect(control).toBeFocused()
    await expect(control).toBeInViewport({ ratio: 0.99 })
  }
}

async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const overflow = await page.evaluate(() => {
    const root = document.scrollingElement ?? document.documentElement
    return root.scrollWidth - root.clientWidth
  })
  expect(overflow, 'the window scrolls sideways').toBeLessThanOrEqual(0)
}

for (const size of SIZES) {
  for (const scheme of ['light', 'dark'] as const) {
    test(`at ${size.width}×${size.height} every pane's main actions are whole on screen (${scheme})`, async ({
      page,
      cairn,
      anthropic,
    }) => {
      await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-sizes' })
      const id = await claudeTurn(cairn, anthropic, 'Where is the spare key?', [
        create('/memories/household/spare-key.md', 'Spare key: under the third flowerpot\n'),
        reply.text('Saved where the spare key is, in **household/spare-key.md**.'),
      ])
      await claudeTurn(
        cairn,
        anthropic,
        'Actually it is under the doormat now.',
        [
          create('/memories/household/spare-key.md', 'Spare key: under the doormat\n'),
          reply.text('Updated.'),
        ],
        id,
      )
      await page.setViewportSize(size)
      await page.emulateMedia({ colorScheme: scheme })
      await cairn.open(page)
      const chat = new ChatPage(page)
      const name = `window-${size.width}x${size.height}`

      await chat.openConversation('Where is the spare key?')
      await expect(chat.lastReply()).toContainText('Updated.')
      await expectWhole([
        chat.sidebar.getByRole('button', { name: /^New chat/ }),
        chat.search,
        chat.sidebar.getByRole('button', { name: /^Settings/ }),
        chat.composer,
        chat.sendButton,
        page.getByRole('tab', { name: 'Memory' }),
        page.getByRole('tab', { name: 'History' }),
      ])
      await expectNoSidewaysScroll(page)
      await shoot(page, cairn, `${name}-chat-${scheme}`)

      const memory = new MemoryPage(page)
      await memory.openFile('spare-key.md')
      await expect(memory.content('spare-key.md')).toContainText('under the doormat')
      await expectWhole(
        ['Edit', 'Rename', 'Delete', 'Show history'].map((action) =>
          memory.fileActions().getByRole('button', { name: action, exact: true }),
        ),
      )
      await expectWhole([memory.search, memory.pane.getByRole('button', { name: 'New file' })])
      await expectNoSidewaysScroll(page)
      await shoot(page, cairn, `${name}-memory-${scheme}`)

      const history = new HistoryPage(page)
      await history.open()
      await history.select(history.rows.nth(1))
      await expect(history.detail).toContainText('under the third flowerpot')
      // The file's own restore is in view as the change opens, without scrolling its pane.
      const restoreFile = history.detail.getByRole('button', { name: 'Restore this version' })
      await expect(restoreFile).toBeVisible()
      const [button, pane] = await Promise.all([
        restoreFile.boundingBox(),
        history.pane.locator('.hist-detail-area').boundingBox(),
      ])
      expect(button!.y, 'Restore this version starts in the detail pane').toBeGreaterThanOrEqual(
        pane!.y,
      )
      expect(
        button!.y + button!.height,
        'Restore this version ends in the detail pane',
      ).toBeLessThanOrEqual(pane!.y + pane!.height)
      await expectWhole([history.rows.first(), history.rows.nth(1)])
      // The change's actions, by mouse and by keyboard: at 880×560 its header is taller than
      // its pane, so it must scroll away with the files rather than stay pinned over them.
      const actions = history.detail.getByRole('toolbar', { name: 'Change actions' })
      const controls = [
        actions.getByRole('button', { name: 'Restore all memory to this point' }),
        actions.getByRole('button', { name: 'Export this version (.zip)' }),
        ...['Unified', 'Side by side', 'Blame'].map((mode) =>
          actions.getByRole('button', { name: mode, exact: true }),
        ),
        history.detail.getByText('Details', { exact: true }),
      ]
      await expectWhole(controls)
      await expectReachableByTab(controls)
      await expectNoSidewaysScroll(page)
      await shoot(page, cairn, `${name}-history-${scheme}`)

      const settings = new SettingsPage(page)
      await settings.open()
      await expect(settings.keyStatus).toContainText('Set')
      await expectWhole([
        settings.dialog.getByRole('button', { name: 'Close settings' }),
        settings.keyStatus,
        settings.model,
        settings.theme,
        settings.save,
      ])
      await expectNoSidewaysScroll(page)
      await shoot(page, cairn, `${name}-settings-${scheme}`)
    })
  }
}
