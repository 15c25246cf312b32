import { expect, test } from './fixtures/harness'
import { SettingsPage } from './pages/settings.page'

// Review hunt11-agent D2: with ANTHROPIC_API_KEY set, a key saved in Settings was never used,
// though the dialog said "API key saved." A saved key now wins, and the dialog says which key
// is in use.
test.use({ cairnOptions: { env: { ANTHROPIC_API_KEY: 'sk-ant-e2e-from-the-environment' } } })

for (const scheme of ['light', 'dark'] as const) {
  test(`Settings says which API key is in use: the environment's, then the saved one (${scheme})`, async ({
    page,
    cairn,
  }) => {
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const settings = new SettingsPage(page)
    await settings.open()
    await expect(settings.keyStatus).toContainText(
      'The key from the ANTHROPIC_API_KEY environment variable is in use. A key saved here would be used instead.',
    )
    await expect(settings.dialog.getByLabel('Save a key to use instead')).toBeVisible()
    await page.screenshot({ path: `e2e/artifacts/api-key-env-${scheme}.png` })

    await settings.enterKey('sk-ant-e2e-saved-in-settings-0123')
    await expect(settings.keyNotice()).toContainText(
      'API key saved. It is used from now on instead of the ANTHROPIC_API_KEY environment variable.',
    )
    await expect(settings.keyStatus).toContainText('The key saved here is in use.')
    await expect(settings.keyStatus).toContainText(
      'ANTHROPIC_API_KEY is also set in the environment; it is used only while no key is saved here.',
    )
    expect(await cairn.core.dispatch('settings:get', undefined)).toMatchObject({
      ok: true,
      value: { apiKeySource: 'memory', envApiKey: true },
    })
    await page.screenshot({ path: `e2e/artifacts/api-key-saved-over-env-${scheme}.png` })

    await settings.removeKey()
    await expect(settings.keyNotice()).toContainText(
      'The key from the ANTHROPIC_API_KEY environment variable is used now.',
    )
    await expect(settings.keyStatus).toContainText('environment variable is in use')
  })
}
