import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Core } from '../src/main/core'
import { expect, test } from './fixtures/harness'
import type { FakeAnthropic } from '../test/fixtures/fake-anthropic'
import { call, claudeWrites, otherMachine, syncSpec } from './fixtures/machines'
import { FullHistoryPage } from './pages/full-history.page'
import { HistoryPage } from './pages/history.page'
import { SyncPage } from './pages/sync.page'

const hub = syncSpec('screens')

const NOTES = '# Preferences\n\nEditor: Helix\nTheme: dark\nShell: fish\n'

/**
 * The laptop (the page's core) and a desktop, with one conflict in preferences.md: Claude
 * wrote the notes on the laptop and edited them on the desktop, the person edited the same
 * line on the laptop.
 */
async function twoMachinesWithConflict(cairn: { core: Core }, anthropic: FakeAnthropic) {
  const remote = hub.remoteOf(hub.newRepo(), 10)
  const machine = await otherMachine('desktop', anthropic)
  const desktop = machine.core
  const at = (file: string) => `/memories/${file}`
  await claudeWrites(
    cairn.core,
    anthropic,
    'Remember my setup, and that trailhead is a Rust CLI.',
    { command: 'create', path: at('preferences.md'), file_text: NOTES },
    {
      command: 'create',
      path: at('projects/trailhead.md'),
      file_text: '# trailhead\n\nA Rust CLI for trail maps.\n',
    },
  )
  await call(cairn.core, 'sync:configure', remote)
  await call(cairn.core, 'sync:now')
  await call(desktop, 'sync:configure', remote)
  await call(desktop, 'sync:now')
  await claudeWrites(
    desktop,
    anthropic,
    'I switched to Zed and zsh; I am reading The Overstory.',
    { command: 'str_replace', path: at('preferences.md'), old_str: 'Helix', new_str: 'Zed' },
    { command: 'str_replace', path: at('preferences.md'), old_str: 'fish', new_str: 'zsh' },
    {
      command: 'create',
      path: at('reading.md'),
      file_text: 'Currently reading: The Overstory\n',
    },
  )
  await call(desktop, 'sync:now')
  await call(cairn.core, 'memory:write', {
    path: at('preferences.md'),
    content: NOTES.replace('Helix', 'Neovim'),
  })
  await call(cairn.core, 'sync:now')
  return machine
}

for (const scheme of ['light', 'dark'] as const) {
  test(`sync screens (${scheme})`, async ({ page, cairn, anthropic }) => {
    const desktop = await twoMachinesWithConflict(cairn, anthropic)
    try {
      await page.emulateMedia({ colorScheme: scheme })
      await cairn.open(page)
      const sync = new SyncPage(page)
      await expect(sync.indicator).toContainText('1 conflict to resolve')
      await page.screenshot({ path: `e2e/artifacts/sync-indicator-${scheme}.png` })

      await sync.indicator.getByRole('button', { name: /conflict/ }).click()
      await expect(sync.conflictDialog.getByRole('figure').first()).toBeVisible()
      await page.screenshot({ path: `e2e/artifacts/sync-conflict-${scheme}.png` })
      await sync.conflictDialog.getByRole('button', { name: 'Keep both' }).click()
      await expect(sync.conflictDialog).toContainText('No conflicts left')
      await sync.conflictDialog.getByRole('button', { name: 'Close' }).first().click()

      const history = new HistoryPage(page)
      await history.open()
      await history.select(history.row('Cairn merged the memory of desktop'))
      await expect(history.detail).toContainText('Joined:')
      await expect(history.detail.getByRole('note')).toContainText(
        'Both versions of preferences.md were kept',
      )
      await expect(history.row('Claude on desktop edited preferences.md').first()).toBeVisible()
      await page.screenshot({ path: `e2e/artifacts/sync-history-${scheme}.png` })

      // The full view of the synced history: the merge, then its lines' provenance.
      await page.setViewportSize({ width: 1440, height: 900 })
      const full = new FullHistoryPage(page)
      await history.pane.getByRole('button', { name: 'Open full history' }).click()
      await expect(full.title()).toHaveText(/Cairn merged the memory of desktop/)
      await page.screenshot({ path: `e2e/artifacts/sync-full-history-${scheme}.png` })
      await full.showAs('Blame')
      const blame = full.blame('/memories/preferences.md')
      await expect(blame.getByRole('row', { name: /<<<<<<< laptop/ })).toContainText('Cairn')
      await expect(blame.getByRole('row', { name: /Editor: Zed/ })).toContainText('desktop')
      await page.screenshot({ path: `e2e/artifacts/sync-full-history-blame-${scheme}.png` })
      await page.keyboard.press('Escape')
      await page.setViewportSize({ width: 1280, height: 800 })

      await sync.openSettings()
      await sync.url.scrollIntoViewIfNeeded()
      await sync.testConnection()
      await expect(sync.testResult()).toContainText('this memory’s history')
      await sync.state().scrollIntoViewIfNeeded()
      await page.screenshot({ path: `e2e/artifacts/sync-settings-${scheme}.png` })
      const transfer = sync.settings.dialog.getByRole('button', { name: 'Whole history (.bundle)' })
      const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-screens-export-'))
      try {
        cairn.host.answerDialog(path.join(dir, 'cairn-history.bundle'))
        await transfer.click()
        await expect(sync.settings.dialog.getByLabel('Export or import result')).toBeVisible()
        await transfer.scrollIntoViewIfNeeded()
        await page.screenshot({ path: `e2e/artifacts/sync-transfer-${scheme}.png` })
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    } finally {
      await desktop.close()
    }
  })

  test(`join question (${scheme})`, async ({ page, cairn }) => {
    const remote = hub.remoteOf(hub.newRepo())
    const machine = await otherMachine('desktop')
    const desktop = machine.core
    try {
      await call(desktop, 'memory:write', { path: '/memories/me.md', content: 'Name: Sam\n' })
      await call(desktop, 'memory:write', { path: '/memories/work.md', content: 'Cairn\n' })
      await call(desktop, 'sync:configure', remote)
      await call(desktop, 'sync:now')
      await call(cairn.core, 'memory:write', { path: '/memories/laptop.md', content: 'Mine\n' })
      await page.emulateMedia({ colorScheme: scheme })
      await cairn.open(page)
      await call(cairn.core, 'sync:configure', remote)
      await call(cairn.core, 'sync:now')
      const sync = new SyncPage(page)
      await expect(sync.joinDialog).toBeVisible()
      await page.screenshot({ path: `e2e/artifacts/sync-join-${scheme}.png` })
    } finally {
      await machine.close()
    }
  })
}
