import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createCore } from '../src/main/core'
import { nodeDisk, setDisk } from '../src/main/lib/disk'
import { createFileSecretStore } from '../src/main/settings'
import { attachCore, expect, test } from './fixtures/harness'
import { SettingsPage } from './pages/settings.page'

// rdisk30: a disk that failed the read of the saved key or of settings.json was taken for no
// key and an unreadable file. Settings now says each could not be read, asks for no key, and a
// change leaves settings.json as it was.
for (const scheme of ['light', 'dark'] as const) {
  test(`a key and settings the disk fails to read are said so, and kept (${scheme})`, async ({
    page,
    rendererServer,
  }) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-settings-eio-'))
    const keyFile = path.join(dataDir, 'secrets.json')
    const settingsFile = path.join(dataDir, 'settings.json')
    const written = JSON.stringify({ customInstructions: 'Always answer in French.' })
    await writeFile(settingsFile, written)
    await createFileSecretStore({ file: keyFile }).set('sk-ant-api03-saved')
    const restore = setDisk({
      ...nodeDisk,
      promises: {
        ...nodeDisk.promises,
        async open(at, flags, mode) {
          if (at === keyFile || at === settingsFile) {
            throw Object.assign(new Error('EIO: i/o error, open'), { code: 'EIO' })
          }
          return nodeDisk.promises.open(at, flags, mode)
        },
      },
    })
    const logger = { warn: () => {}, error: () => {} }
    const core = await createCore({
      appVersion: '0.1.0-e2e',
      env: {},
      dataDir,
      logger,
      secretStore: createFileSecretStore({ file: keyFile }),
    })
    const stop = await attachCore(page, core)
    try {
      await page.emulateMedia({ colorScheme: scheme })
      await page.goto(rendererServer.url)
      const settings = new SettingsPage(page)
      await settings.open()
      await expect(
        settings.dialog.getByRole('status', { name: 'Your saved API key could not be read' }),
      ).toContainText('because the disk reported a read or write error')
      await expect(
        settings.dialog.getByRole('status', { name: 'Your settings file could not be read' }),
      ).toContainText('It was left as it is and is read again next time')
      await page.screenshot({ path: `e2e/artifacts/settings-read-fault-${scheme}.png` })
      // A refused save puts the choice back, so the radio is clicked, not checked (check() asserts it stays).
      await settings.theme.getByRole('radio', { name: 'Dark' }).click()
      await expect(settings.dialog).toContainText('Settings were not saved')
      expect(await readFile(settingsFile, 'utf8')).toBe(written)
    } finally {
      restore()
      stop()
      await core.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
}
