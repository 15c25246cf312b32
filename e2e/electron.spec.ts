import { _electron as electron, expect, test } from '@playwright/test'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { locateElectron } from '../scripts/preflight.mjs'
import { reply, startFakeAnthropic } from '../test/fixtures/fake-anthropic'
import { ChatPage } from './pages/chat.page'

/**
 * The real desktop app: Electron's binary running the built bundle (`electron .`), talking to
 * the fake Messages API. It runs wherever an Electron binary is installed and is reported as
 * skipped, with the reason, where none is (machines that cannot download it).
 */
const root = path.resolve('.')
const install = locateElectron(root, process.env)
const binary = install.installed && install.present ? install.binary : null
const noDisplay =
  process.platform === 'linux' && !process.env['DISPLAY'] && !process.env['WAYLAND_DISPLAY']

// The title carries the reason too: the list reporter shows titles, not skip reasons.
const title =
  binary === null
    ? 'the Electron app (SKIPPED: no Electron binary on this machine)'
    : noDisplay
      ? 'the Electron app (SKIPPED: no display)'
      : 'the Electron app'

test.describe(title, () => {
  test.skip(
    binary === null,
    'No Electron binary in node_modules/electron on this machine (run `npx install-electron` where github.com is reachable)',
  )
  test.skip(noDisplay, 'No display for Electron on this Linux machine (run under xvfb-run)')

  test('launches its window, holds a chat with the fake API, and keeps Node out of the page', async () => {
    const anthropic = await startFakeAnthropic({ apiKey: 'sk-ant-electron-e2e' })
    const userData = await mkdtemp(path.join(os.tmpdir(), 'cairn-electron-'))
    anthropic.script(reply.text('Hello from the fake Messages API, inside Electron.'))
    // Chromium refuses to sandbox as root (CI containers) unless told not to.
    const asRoot = process.getuid?.() === 0
    const app = await electron.launch({
      executablePath: binary!,
      args: [root, ...(asRoot ? ['--no-sandbox'] : [])],
      env: {
        ...(process.env as Record<string, string>),
        CAIRN_DATA_DIR: userData,
        ANTHROPIC_API_KEY: 'sk-ant-electron-e2e',
        ANTHROPIC_BASE_URL: anthropic.url,
      },
    })
    try {
      const page = await app.firstWindow()
      await expect(page).toHaveTitle('Cairn')
      expect(page.url()).toBe('app://cairn/index.html')

      const chat = new ChatPage(page)
      await chat.send('Hello from a real window')
      await expect(chat.userMessages().last()).toHaveText('Hello from a real window')
      await expect(chat.lastReply()).toContainText(
        'Hello from the fake Messages API, inside Electron.',
      )
      const [request] = anthropic.messageRequests()
      expect(JSON.stringify(request?.body?.messages)).toContain('Hello from a real window')

      const inPage = await page.evaluate(() => ({
        require: typeof (window as unknown as { require?: unknown }).require,
        process: typeof (globalThis as unknown as { process?: unknown }).process,
        api: Object.keys(window.api).sort(),
      }))
      expect(inPage).toEqual({
        require: 'undefined',
        process: 'undefined',
        api: ['app', 'chat', 'conversations', 'history', 'memory', 'on', 'settings'],
      })

      // Main's own view: one window, on the app's scheme.
      const windows = await app.evaluate(({ BrowserWindow }) =>
        BrowserWindow.getAllWindows().map((window) => window.webContents.getURL()),
      )
      expect(windows).toEqual(['app://cairn/index.html'])
    } finally {
      await app.close()
      await anthropic.close()
      await rm(userData, { recursive: true, force: true })
    }
  })
})
