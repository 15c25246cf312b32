import type http from 'node:http'
import { startProxy, isAdvertisement, type Proxy } from '../test/fixtures/git-proxy'
import { expect, test } from './fixtures/harness'
import { shoot } from './fixtures/screens'
import { call, syncSpec } from './fixtures/machines'
import { SyncPage } from './pages/sync.page'

const hub = syncSpec('stop')

// The advertisement asked with the token: the client's first ask, without it, is answered 401
// and asked again, never read on.
const signedAdvertisement = (req: http.IncomingMessage) =>
  isAdvertisement(req) && req.headers.authorization !== undefined

/**
 * A sync against a server that stalls (its answer's headers and a few bytes, then nothing, for
 * longer than the test) ends only by Stop: from the sidebar, then from Settings, each by the
 * keyboard. The status says "Sync stopped" and what the stop left; Sync now then syncs as usual.
 */
for (const scheme of ['light', 'dark'] as const) {
  test(`a stalled sync is stopped from the sidebar and from Settings (${scheme})`, async ({
    page,
    cairn,
  }) => {
    const repo = hub.newRepo()
    await call(cairn.core, 'memory:write', { path: '/memories/a.md', content: 'a\n' })
    await call(cairn.core, 'sync:configure', hub.remoteOf(repo, 0))
    await call(cairn.core, 'sync:now')
    await call(cairn.core, 'memory:write', { path: '/memories/a.md', content: 'a\nb\n' })
    await page.emulateMedia({ colorScheme: scheme })
    const proxy: Proxy = await startProxy(hub.server)
    try {
      // The next sync's first answer stalls (the settings change below starts that sync).
      proxy.on(signedAdvertisement, { kind: 'stall', bytes: 12 }, 1)
      await call(cairn.core, 'sync:configure', {
        url: proxy.url(repo),
        username: hub.server.user,
        token: hub.server.token,
        intervalMinutes: 0,
      })
      await cairn.open(page)
      const sync = new SyncPage(page)
      await expect(sync.indicator).toContainText('Syncing…')
      const stop = sync.indicator.getByRole('button', { name: 'Stop sync' })
      await stop.focus()
      await page.keyboard.press('Enter')
      await expect(sync.indicator).toContainText('Sync stopped')
      // The same button, now Sync now, keeps the keyboard's focus.
      await expect(sync.indicator.getByRole('button', { name: 'Sync now' })).toBeFocused()
      await expect(sync.indicator.getByRole('button').first()).toHaveAttribute(
        'title',
        /^Sync stopped\. Memory and its history here are as they were before it; nothing was sent to the remote, and the next sync starts again\. 2 changes not synced yet\./,
      )
      await shoot(page, cairn, `sync-stopped-sidebar-${scheme}`)
      await proxy.allClosed()

      // In Settings: Sync now against the stalled server, then Stop sync, by the keyboard.
      proxy.on(signedAdvertisement, { kind: 'stall', bytes: 12 }, 1)
      await sync.openSettings()
      const now = sync.settings.dialog.getByRole('button', { name: 'Sync now' })
      await now.focus()
      await page.keyboard.press('Enter')
      await expect(sync.state()).toContainText('Syncing…')
      const stopInSettings = sync.settings.dialog.getByRole('button', { name: 'Stop sync' })
      await expect(stopInSettings).toBeFocused()
      await page.keyboard.press('Enter')
      await expect(sync.state()).toContainText('Sync stopped')
      const banner = sync.settings.dialog.getByRole('status', { name: 'Sync stopped' })
      await expect(banner).toContainText('Memory and its history here are as they were before it')
      await expect(sync.settings.dialog.getByRole('alert', { name: 'Sync error' })).toHaveCount(0)
      await expect(now).toBeFocused()
      await sync.state().scrollIntoViewIfNeeded()
      await shoot(page, cairn, `sync-stopped-settings-${scheme}`)
      await proxy.allClosed()
      expect(hub.server.git(repo, 'show', 'main:a.md')).toBe('a\n')

      // Nothing stalls now: the next sync runs as usual.
      await now.click()
      await expect(sync.state()).toContainText('Synced')
      await expect(banner).toHaveCount(0)
      expect(hub.server.git(repo, 'show', 'main:a.md')).toBe('a\nb\n')
    } finally {
      await proxy.close()
    }
  })
}
