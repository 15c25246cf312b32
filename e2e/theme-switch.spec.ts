/**
 * A theme switch (Settings, or the system's own) repaints the window at once: the buttons'
 * hover fades (their colour transitions) do not run on it, so nothing is left half-way between
 * the two themes, on the screen or in a screenshot taken then. The page's animations are held
 * still through the DevTools protocol, so a transition the switch started stays running and
 * is seen, however fast or slow the machine.
 */
import type { Page } from '@playwright/test'
import { expect, test } from './fixtures/harness'
import { ChatPage } from './pages/chat.page'

/** The CSS transitions running in the page, with what they change. */
function runningTransitions(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    document
      .getAnimations()
      .filter((animation) => animation instanceof CSSTransition)
      .filter((animation) => animation.playState === 'running')
      .map((animation) => `${(animation as CSSTransition).transitionProperty}`),
  )
}

test('a theme switch, by Settings or by the system, runs no colour transition', async ({
  page,
  cairn,
}) => {
  await page.emulateMedia({ colorScheme: 'light' })
  await cairn.open(page)
  await expect(new ChatPage(page).composer).toBeVisible()
  const devtools = await page.context().newCDPSession(page)
  await devtools.send('Animation.enable')
  await devtools.send('Animation.setPlaybackRate', { playbackRate: 0 })
  expect(await runningTransitions(page)).toEqual([])

  // The system's theme (Settings follow it by default).
  await page.emulateMedia({ colorScheme: 'dark' })
  await expect.poll(() => runningTransitions(page)).toEqual([])
  await page.screenshot({ path: test.info().outputPath('switched-system-dark.png') })

  // Pinned in Settings.
  await cairn.core.dispatch('settings:update', { theme: 'light' })
  await expect
    .poll(() => page.evaluate(() => document.documentElement.dataset['theme']))
    .toBe('light')
  await expect.poll(() => runningTransitions(page)).toEqual([])
  await page.screenshot({ path: test.info().outputPath('switched-pinned-light.png') })
  await cairn.core.dispatch('settings:update', { theme: 'dark' })
  await expect
    .poll(() => page.evaluate(() => document.documentElement.dataset['theme']))
    .toBe('dark')
  await expect.poll(() => runningTransitions(page)).toEqual([])
  await page.screenshot({ path: test.info().outputPath('switched-pinned-dark.png') })

  // A hover still fades as before (and is seen running here): only the switch is instant.
  await page.getByRole('button', { name: 'New chat' }).first().hover()
  await expect.poll(() => runningTransitions(page)).toContain('background-color')
  await devtools.send('Animation.setPlaybackRate', { playbackRate: 1 })
  await devtools.detach()
})
