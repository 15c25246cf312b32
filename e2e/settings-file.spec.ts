import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createCore } from '../src/main/core'
import { attachCore, expect, test } from './fixtures/harness'
import { SettingsPage } from './pages/settings.page'

// Review hunt10-app D6: a settings.json broken by a hand edit read as the defaults without a
// word, and the next change (a theme click) wrote the defaults over it.
for (const scheme of ['light', 'dark'] as const) {
  test(`an unreadable settings.json is said, and kept aside before a change (${scheme})`, async ({
    page,
    rendererServer,
  }) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-settings-'))
    const handWritten = '{ "customInstructions": "Always answer in French.", }'
    await writeFile(path.join(dataDir, 'settings.json'), handWritten)
    const logger = { warn: () => {}, error: () => {} }
    const core = await createCore({ appVersion: '0.1.0-e2e', env: {}, dataDir, logger })
    const stop = await attachCore(page, core)
    try {
      await page.emulateMedia({ colorScheme: scheme })
      await page.goto(rendererServer.url)
      const settings = new SettingsPage(page)
      await settings.open()
      const problem = settings.dialog.getByRole('status', {
        name: 'Your settings file could not be read',
      })
      await expect(problem).toContainText('Changing a setting keeps that file aside first')
      await page.screenshot({ path: `e2e/artifacts/settings-unreadable-${scheme}.png` })

      await settings.chooseTheme('Dark')
      await expect(problem).toContainText('it was kept as settings.json.unreadable-')
      const kept = (await readdir(dataDir)).find((name) => name.includes('.unreadable-'))
      expect(kept).toBeDefined()
      expect(await readFile(path.join(dataDir, kept!), 'utf8')).toBe(handWritten)
      expect(JSON.parse(await readFile(path.join(dataDir, 'settings.json'), 'utf8'))).toMatchObject(
        { theme: 'dark' },
      )
    } finally {
      stop()
      await core.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
}

// Review hunt10-app D7: past their limits, the custom instructions and the key were refused
// with the schema's text ("Invalid request for settings:update: … Too big: …").
test('settings limits are counted and said in words', async ({ page, rendererServer }) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-settings-'))
  const core = await createCore({ appVersion: '0.1.0-e2e', env: {}, dataDir })
  const stop = await attachCore(page, core)
  try {
    await page.goto(rendererServer.url)
    const settings = new SettingsPage(page)
    await settings.open()
    await expect(settings.dialog).toContainText('0 of 20,000 characters')
    await settings.instructions.fill('x'.repeat(20_000))
    await expect(settings.dialog).toContainText(
      '20,000 of 20,000 characters: the most they can hold.',
    )
    await expect(settings.instructions).toHaveAttribute('maxlength', '20000')
    // Typing at the limit adds nothing.
    await settings.instructions.press('End')
    await settings.instructions.pressSequentially('more')
    await expect(settings.instructions).toHaveValue('x'.repeat(20_000))
    await page.screenshot({ path: 'e2e/artifacts/settings-instructions-limit.png' })

    await settings.enterKey('k'.repeat(600))
    // An error is announced (role alert).
    await expect(settings.dialog.getByRole('alert', { name: 'API key result' })).toHaveText(
      'The key was not saved. This is not an API key: Anthropic keys are about 100 characters long, and this text has 600. Copy the key again from the Anthropic Console.',
    )
    await expect(settings.dialog).not.toContainText('Invalid request')
  } finally {
    stop()
    await core.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})
