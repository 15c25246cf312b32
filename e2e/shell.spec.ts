import { reply } from '../test/fixtures/fake-anthropic'
import { expect, test } from './fixtures/harness'
import { AppPage } from './pages/app.page'
import { ChatPage } from './pages/chat.page'
import { SettingsPage } from './pages/settings.page'

test('the renderer shows data that came from the real core', async ({ page, cairn }) => {
  await cairn.open(page)
  const app = new AppPage(page)
  await expect(app.about).toContainText('Cairn 0.1.0-e2e')
  await expect(app.about).toContainText(cairn.dataDir)
  await expect(app.chat).toBeVisible()
  await expect(app.sidePane).toBeVisible()
  await page.screenshot({ path: 'e2e/artifacts/shell.png' })
})

test('window.api rejects a malformed request with a clear error and no stack', async ({
  page,
  cairn,
}) => {
  await cairn.open(page)
  const result = await page.evaluate(() =>
    (window.api.history.show as (payload: unknown) => Promise<unknown>)({ oid: 'not-an-oid' }),
  )
  expect(result).toMatchObject({ ok: false, error: { code: 'invalid-payload' } })
  expect(JSON.stringify(result)).not.toMatch(/at .*\.ts:\d+/)
})

test('the side pane switches between memory and history', async ({ page, cairn }) => {
  await cairn.open(page)
  const app = new AppPage(page)
  await app.showSidePane('History')
  await expect(app.sideTab('History')).toHaveAttribute('aria-selected', 'true')
  await expect(app.sidePane.getByRole('tabpanel', { name: 'History' })).toBeVisible()
})

test('the page runs under the shipped Content Security Policy: inline script and style are refused', async ({
  page,
  cairn,
}) => {
  await cairn.open(page)
  await expect(new AppPage(page).about).toContainText('Cairn')
  const effects = await page.evaluate(() => {
    const script = document.createElement('script')
    script.textContent = 'document.body.dataset.inlineScript = "ran"'
    document.body.append(script)
    const style = document.createElement('style')
    style.textContent = 'body { --inline-style: applied }'
    document.head.append(style)
    return {
      script: document.body.dataset['inlineScript'] ?? 'refused',
      style: getComputedStyle(document.body).getPropertyValue('--inline-style') || 'refused',
    }
  })
  expect(effects).toEqual({ script: 'refused', style: 'refused' })
  await expect.poll(() => cairn.cspViolations.length).toBe(2)
  expect(cairn.cspViolations.join('\n')).toContain('script-src-elem refused inline')
  expect(cairn.cspViolations.join('\n')).toContain('style-src-elem refused inline')
  cairn.cspViolations.length = 0
  // The browser logs each refusal as a console error: those two, and nothing else.
  await expect.poll(() => cairn.pageErrors.length).toBe(2)
  for (const error of cairn.pageErrors) expect(error).toContain('Content Security Policy')
  cairn.pageErrors.length = 0
})

test('commands from the application menu reach the window as app:command events', async ({
  page,
  cairn,
  anthropic,
}) => {
  await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-menu-key' })
  anthropic.script(reply.text('Hello from the fake API.'))
  await cairn.open(page)
  const app = new AppPage(page)
  const chat = new ChatPage(page)
  await chat.send('Hello there')
  await expect(chat.lastReply()).toContainText('Hello from the fake API.')
  await expect(chat.title).toHaveText('Hello there')
  await app.sideTab('Memory').focus()

  cairn.core.events.emit('app:command', { command: 'new-chat' })
  await expect(chat.userMessages()).toHaveCount(0)
  await expect(chat.welcome).toBeVisible()
  await expect(chat.composer).toBeFocused()

  cairn.core.events.emit('app:command', { command: 'show-history' })
  await expect(app.sideTab('History')).toHaveAttribute('aria-selected', 'true')
  cairn.core.events.emit('app:command', { command: 'show-memory' })
  await expect(app.sideTab('Memory')).toHaveAttribute('aria-selected', 'true')
  cairn.core.events.emit('app:command', { command: 'open-settings' })
  await expect(new SettingsPage(page).dialog).toBeVisible()
})
