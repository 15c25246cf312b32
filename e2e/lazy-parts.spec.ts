import { expect, test } from './fixtures/harness'
import { shoot } from './fixtures/screens'
import { call, otherMachine, syncSpec } from './fixtures/machines'
import { SettingsPage } from './pages/settings.page'
import { SyncPage } from './pages/sync.page'

const hub = syncSpec('lazy')
const chat = (page: import('@playwright/test').Page) => page.getByRole('main', { name: 'Chat' })
const failed = 'This part of Cairn could not be loaded. Retry loads it again.'

/** The refused load, as the browser logs it, and nothing else: taken out once checked. */
async function expectOnlyRefusedLoads(pageErrors: string[]) {
  await expect.poll(() => pageErrors.length).toBeGreaterThan(0)
  for (const error of pageErrors) {
    expect(error).toMatch(/Failed to load resource|Failed to fetch dynamically imported module/)
  }
  pageErrors.length = 0
}

for (const scheme of ['light', 'dark'] as const) {
  test(`Settings whose code cannot be loaded says so in its place; the window stays (${scheme})`, async ({
    page,
    cairn,
  }) => {
    let asked = 0
    await page.route('**/assets/SettingsDialog-*.js', (route) => {
      asked += 1
      return route.abort()
    })
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    await new SettingsPage(page).open()

    const alert = page.getByRole('alert').filter({ hasText: failed })
    await expect(alert).toBeVisible()
    await expect(alert.getByRole('button', { name: 'Retry' })).toBeFocused()
    await expect(page.getByText('Cairn could not show this window')).toHaveCount(0)
    await expect(chat(page).getByRole('textbox').first()).toBeVisible()
    await expect(page.getByRole('navigation', { name: 'Conversations' })).toBeVisible()
    await shoot(page, cairn, `lazy-part-failed-${scheme}`)
    expect(asked).toBe(1)
    await expectOnlyRefusedLoads(cairn.pageErrors)

    // Escape closes it, as it would the dialog; opened again, it asks for the code again (and is
    // refused again) rather than showing the first failure at once.
    await page.keyboard.press('Escape')
    await expect(alert).toHaveCount(0)
    const settings = new SettingsPage(page)
    await settings.open()
    await expect(alert).toBeVisible()
    await expect.poll(() => asked).toBe(2)
    await expectOnlyRefusedLoads(cairn.pageErrors)

    // Retry loads the code again (let through this time), in the same window: no reload.
    await page.evaluate(() => ((window as { sameWindow?: boolean }).sameWindow = true))
    await page.unroute('**/assets/SettingsDialog-*.js')
    await alert.getByRole('button', { name: 'Retry' }).click()
    await expect(alert).toHaveCount(0)
    await expect(settings.dialog).toBeVisible()
    expect(await page.evaluate(() => (window as { sameWindow?: boolean }).sameWindow)).toBe(true)
  })
}

test('the join question loading by itself does not hide Settings, which is open', async ({
  page,
  cairn,
}) => {
  const repo = hub.newRepo()
  const desktop = await otherMachine('desktop')
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  let asked = false
  try {
    await call(desktop.core, 'memory:write', { path: '/memories/desktop.md', content: 'd\n' })
    await call(desktop.core, 'sync:configure', hub.remoteOf(repo, 0))
    await call(desktop.core, 'sync:now')
    await call(cairn.core, 'memory:write', { path: '/memories/laptop.md', content: 'l\n' })
    await page.route('**/assets/JoinDialog-*.js', async (route) => {
      asked = true
      await released
      await route.continue()
    })
    await cairn.open(page)
    const settings = new SettingsPage(page)
    await settings.open()
    await expect(settings.dialog).toBeVisible()
    await settings.instructions.focus()

    // Sync turned on elsewhere opens the join question by itself; its code is held back.
    await call(cairn.core, 'sync:configure', hub.remoteOf(repo, 0))
    await call(cairn.core, 'sync:now')
    await expect.poll(() => asked).toBe(true)
    await expect(settings.dialog).toBeVisible()
    await expect(settings.instructions).toBeFocused()

    release()
    await expect(new SyncPage(page).joinDialog).toBeVisible()
  } finally {
    release()
    await desktop.close()
  }
})
