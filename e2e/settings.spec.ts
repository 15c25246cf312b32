import { expect, test } from './fixtures/harness'
import { SettingsPage } from './pages/settings.page'

const themeOf = (page: import('@playwright/test').Page) =>
  page.evaluate(() => document.documentElement.dataset['theme'] ?? 'system')
const background = (page: import('@playwright/test').Page) =>
  page.evaluate(() => getComputedStyle(document.body).backgroundColor)

test('the API key is saved and removed, and never reaches the page', async ({ page, cairn }) => {
  const key = 'sk-ant-e2e-never-shown-0123456789'
  await cairn.open(page)
  const settings = new SettingsPage(page)
  await settings.open()
  await expect(settings.keyStatus).toContainText('Not set')

  await settings.enterKey(key)
  await expect(settings.keyNotice()).toContainText('API key saved.')
  await expect(settings.keyStatus).toContainText('Set')
  await expect(settings.keyField).toHaveValue('')
  expect(await page.content()).not.toContain(key)
  expect(await cairn.core.dispatch('settings:get', undefined)).toMatchObject({
    ok: true,
    value: { hasApiKey: true },
  })

  // Reopened, it still shows only that a key is set.
  await settings.close()
  await settings.open()
  await expect(settings.keyStatus).toContainText('Set')
  expect(await page.content()).not.toContain(key)

  await settings.removeKey()
  await expect(settings.keyNotice()).toContainText('API key removed')
  await expect(settings.keyStatus).toContainText('Not set')
  expect(await cairn.core.dispatch('settings:get', undefined)).toMatchObject({
    ok: true,
    value: { hasApiKey: false },
  })
})

test('settings are saved and shown again after reopening', async ({ page, cairn }) => {
  await cairn.open(page)
  const settings = new SettingsPage(page)
  await settings.open()
  await expect(settings.save).toBeDisabled()

  await settings.maxTokens.fill('0')
  await expect(settings.dialog).toContainText('Enter a whole number from 1 to 128,000.')
  await expect(settings.save).toBeDisabled()

  await settings.maxTokens.fill('2048')
  await settings.instructions.fill('Answer in short sentences.')
  await settings.overwritePolicy.selectOption('error')
  await settings.secretScanning.uncheck()
  await settings.save.click()
  await expect(settings.saveNotice()).toContainText('Settings saved.')

  expect(await cairn.core.dispatch('settings:get', undefined)).toMatchObject({
    ok: true,
    value: {
      maxTokens: 2048,
      customInstructions: 'Answer in short sentences.',
      createExisting: 'error',
      secretScanning: false,
    },
  })

  await page.reload()
  await settings.open()
  await expect(settings.maxTokens).toHaveValue('2048')
  await expect(settings.instructions).toHaveValue('Answer in short sentences.')
  await expect(settings.overwritePolicy).toHaveValue('error')
  await expect(settings.secretScanning).not.toBeChecked()
})

test('the model list offers the models the API reports', async ({ page, cairn }) => {
  await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-models' })
  await cairn.open(page)
  const settings = new SettingsPage(page)
  await settings.open()
  await expect(settings.model.getByRole('option', { name: 'Claude Haiku 4.5' })).toBeAttached()
  await settings.model.selectOption('claude-haiku-4-5')
  await settings.save.click()
  await expect(settings.saveNotice()).toContainText('Settings saved.')
  expect(await cairn.core.dispatch('settings:get', undefined)).toMatchObject({
    ok: true,
    value: { model: 'claude-haiku-4-5' },
  })
})

test('the theme applies at once and System follows the OS', async ({ page, cairn }) => {
  await cairn.open(page)
  const settings = new SettingsPage(page)
  await settings.open()
  await page.emulateMedia({ colorScheme: 'dark' })
  await settings.chooseTheme('Dark')
  await expect.poll(() => themeOf(page)).toBe('dark')
  const dark = await background(page)
  await settings.chooseTheme('Light')
  await expect.poll(() => themeOf(page)).toBe('light')
  // Light is pinned: the OS asking for dark does not change it.
  const light = await background(page)
  expect(light).not.toBe(dark)
  await settings.chooseTheme('System')
  await expect.poll(() => themeOf(page)).toBe('system')
  // System follows the OS both ways.
  await expect.poll(() => background(page)).toBe(dark)
  await page.emulateMedia({ colorScheme: 'light' })
  await expect.poll(() => background(page)).toBe(light)
  expect(await cairn.core.dispatch('settings:get', undefined)).toMatchObject({
    ok: true,
    value: { theme: 'system' },
  })
})

test('the data folder is shown and Open folder asks the desktop to open it', async ({
  page,
  cairn,
}) => {
  await cairn.open(page)
  const settings = new SettingsPage(page)
  await settings.open()
  await expect(settings.dialog).toContainText(cairn.dataDir)
  await settings.dialog.getByRole('button', { name: 'Open folder' }).click()
  await expect.poll(() => cairn.host.opened).toContainEqual({ kind: 'path', target: cairn.dataDir })
})
