import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Core } from '../src/main/core'
import { createRecordingLogger } from '../src/main/lib/logger'
import { startGitServer, type GitServer } from '../test/fixtures/git-server'
import { expect, test } from './fixtures/harness'
import { call, otherMachine } from './fixtures/machines'
import { HistoryPage } from './pages/history.page'
import { SyncPage } from './pages/sync.page'

let server: GitServer
let count = 0

test.beforeAll(async () => {
  server = await startGitServer()
})
test.afterAll(async () => {
  await server.close()
})

test.use({
  cairnOptions: {
    hostName: () => 'laptop',
    syncDebounceMs: 3_600_000,
    logger: createRecordingLogger(),
  },
})

const NOTES = '# Preferences\n\nEditor: Helix\nTheme: dark\nShell: fish\n'

/** The laptop (the page's core) and a desktop, with one conflict in preferences.md. */
async function twoMachinesWithConflict(cairn: { core: Core }) {
  const repo = `screens-${++count}`
  server.createRepo(repo)
  const remote = {
    url: server.url(repo),
    username: server.user,
    token: server.token,
    intervalMinutes: 10,
  }
  const machine = await otherMachine('desktop')
  const desktop = machine.core
  const write = (core: Core, file: string, content: string) =>
    call(core, 'memory:write', { path: `/memories/${file}`, content })
  await write(cairn.core, 'preferences.md', NOTES)
  await write(cairn.core, 'projects/trailhead.md', '# trailhead\n\nA Rust CLI for trail maps.\n')
  await call(cairn.core, 'sync:configure', remote)
  await call(cairn.core, 'sync:now')
  await call(desktop, 'sync:configure', remote)
  await call(desktop, 'sync:now')
  await write(desktop, 'preferences.md', NOTES.replace('Helix', 'Zed').replace('fish', 'zsh'))
  await write(desktop, 'reading.md', 'Currently reading: The Overstory\n')
  await call(desktop, 'sync:now')
  await write(cairn.core, 'preferences.md', NOTES.replace('Helix', 'Neovim'))
  await call(cairn.core, 'sync:now')
  return machine
}

for (const scheme of ['light', 'dark'] as const) {
  test(`sync screens (${scheme})`, async ({ page, cairn }) => {
    const desktop = await twoMachinesWithConflict(cairn)
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
      await history.select(history.row('merge'))
      await expect(page.getByRole('region', { name: 'Change details' })).toContainText('Joins')
      await page.screenshot({ path: `e2e/artifacts/sync-history-${scheme}.png` })

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
    const repo = `screens-${++count}`
    server.createRepo(repo)
    const remote = { url: server.url(repo), username: server.user, token: server.token }
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
