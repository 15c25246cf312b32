import { mkdir } from 'node:fs/promises'
import type { Core } from '../src/main/core'
import type { OpeningUpdate } from '../src/shared/types'
import { attachCore, expect, test, watchCsp } from './fixtures/harness'
import { ChatPage } from './pages/chat.page'
import { OpeningPage } from './pages/opening.page'

/**
 * The real core behind a stand-in for the opening: until `ready()`, `app:opening` answers how
 * far the opening is and every other channel is refused with `starting`, as the shell does
 * while the memory opens; `tell` sends the shell's `app:opening` event, `ready` its
 * `app:ready`. Every channel the page asks for is recorded.
 */
function opening(core: Core, first: OpeningUpdate) {
  let current: OpeningUpdate | null = first
  const asked: string[] = []
  const gated: Core = {
    ...core,
    dispatch: async (channel, payload) => {
      asked.push(String(channel))
      if (!current) return core.dispatch(channel, payload)
      if (channel === 'app:opening') {
        return { ok: true, value: { state: 'opening', ...current } }
      }
      return {
        ok: false,
        error: {
          code: 'starting',
          message: 'Cairn is still opening your memory. Try again once it is open.',
        },
      }
    },
  }
  return {
    core: gated,
    asked,
    tell(update: OpeningUpdate) {
      current = update
      core.events.emit('app:opening', update)
    },
    ready() {
      current = null
      core.events.emit('app:ready', { state: 'ready' })
    },
  }
}

test('the window shows what the opening does and how far it is, then the app', async ({
  page,
  cairn,
  rendererServer,
}) => {
  await cairn.core.dispatch('memory:write', { path: '/memories/plans.md', content: 'Lisbon\n' })
  const stand = opening(cairn.core, {
    progress: { step: 'rebuilding-index', done: 0, total: null },
    closing: false,
  })
  await watchCsp(page, cairn.cspViolations)
  const detach = await attachCore(page, stand.core)
  try {
    await page.emulateMedia({ colorScheme: 'light' })
    await page.goto(rendererServer.url)
    const screen = new OpeningPage(page)
    await expect(screen.screen).toBeVisible()
    await expect(screen.step).toHaveText('Rebuilding the history’s index — Finding every version…')
    // No count yet: the bar says it is busy without a value.
    await expect(screen.bar).not.toHaveAttribute('value')

    stand.tell({
      progress: { step: 'rebuilding-index', done: 4210, total: 10_000 },
      closing: false,
    })
    await expect(screen.step).toHaveText(
      'Rebuilding the history’s index — 4,210 of 10,000 versions',
    )
    await expect(screen.bar).toHaveAttribute('value', '4210')
    await expect(screen.bar).toHaveAttribute('max', '10000')
    await expect(screen.screen).toContainText('your memory files are not touched')
    await mkdir('e2e/artifacts', { recursive: true })
    await page.screenshot({ path: 'e2e/artifacts/opening-rebuild-light.png' })
    await page.emulateMedia({ colorScheme: 'dark' })
    await page.screenshot({ path: 'e2e/artifacts/opening-rebuild-dark.png' })

    // The person quit meanwhile: Cairn says it closes once the memory is open.
    stand.tell({
      progress: { step: 'updating-index', done: 9999, total: 10_000 },
      closing: true,
    })
    await expect(screen.step).toHaveText(
      'Updating the history’s index to this version of Cairn — 9,999 of 10,000 versions',
    )
    // Its heading says what happens now, and the note what it waits for.
    await expect(screen.heading).toHaveText('Closing…')
    await expect(page.getByRole('main', { name: 'Closing…' })).toBeVisible()
    await expect(screen.closingNote).toHaveText(
      'Cairn is waiting for your memory to finish opening, then closes, so nothing is left half done.',
    )
    await page.screenshot({ path: 'e2e/artifacts/opening-closing-dark.png' })
    await page.emulateMedia({ colorScheme: 'light' })
    await page.screenshot({ path: 'e2e/artifacts/opening-closing-light.png' })

    stand.tell({ progress: { step: 'recovering', done: 0, total: null }, closing: false })
    await expect(screen.step).toHaveText('Recovering after an unclean stop')
    await expect(screen.closingNote).toHaveCount(0)
    await expect(screen.heading).toHaveText('Opening your memory…')
    await page.screenshot({ path: 'e2e/artifacts/opening-recovering-light.png' })

    // Until it is ready, the page asked main for nothing but how far the opening is.
    expect(new Set(stand.asked)).toEqual(new Set(['app:opening']))

    stand.ready()
    const chat = new ChatPage(page)
    await expect(chat.composer).toBeVisible()
    await expect(screen.screen).toHaveCount(0)
    await expect(page.getByRole('complementary', { name: 'Memory and history' })).toBeVisible()
    expect(stand.asked).toContain('conversations:list')
  } finally {
    detach()
  }
})

test('a quick open shows no opening screen at all, not even for a moment', async ({
  page,
  cairn,
}) => {
  // Whether the opening's heading was ever in the page, watched from before the page loads.
  await page.addInitScript({
    content: `window.__openingShown = false
      new MutationObserver(() => {
        if (document.getElementById('opening-title')) window.__openingShown = true
      }).observe(document, { childList: true, subtree: true })`,
  })
  // The real core answers `app:opening` with ready at once: straight to the app.
  await cairn.open(page)
  await expect(new ChatPage(page).composer).toBeVisible()
  expect(await page.evaluate(() => (window as { __openingShown?: boolean }).__openingShown)).toBe(
    false,
  )
})

for (const [pinned, system] of [
  ['dark', 'light'],
  ['light', 'dark'],
] as const) {
  test(`a theme pinned ${pinned} holds from the first frame of the opening, the system being ${system}`, async ({
    page,
    cairn,
    rendererServer,
  }) => {
    await cairn.core.dispatch('settings:update', { theme: pinned })
    // Every value <html data-theme> takes, and the one it had when the page first drew
    // anything in its root, watched from before the page loads.
    await page.addInitScript({
      content: `window.__themes = []
        window.__firstDrawn = undefined
        new MutationObserver(() => {
          const root = document.documentElement
          if (!root) return
          const theme = root.dataset.theme ?? 'none'
          if (window.__themes.at(-1) !== theme) window.__themes.push(theme)
          if (window.__firstDrawn === undefined && document.getElementById('root')?.firstElementChild)
            window.__firstDrawn = theme
        }).observe(document, { childList: true, subtree: true, attributes: true })`,
    })
    const stand = opening(cairn.core, {
      progress: { step: 'rebuilding-index', done: 10, total: 100 },
      closing: false,
    })
    await watchCsp(page, cairn.cspViolations)
    const detach = await attachCore(page, stand.core)
    try {
      await page.emulateMedia({ colorScheme: system })
      // What the shell loads when Settings pins a theme (main-bundle.test checks it does).
      await page.goto(`${rendererServer.url}?theme=${pinned}`)
      const screen = new OpeningPage(page)
      await expect(screen.screen).toBeVisible()
      const background = await page.evaluate(
        () => getComputedStyle(document.querySelector('.opening')!).backgroundColor,
      )
      expect(background).toBe(pinned === 'dark' ? 'rgb(30, 30, 28)' : 'rgb(255, 255, 255)')
      await mkdir('e2e/artifacts', { recursive: true })
      await page.screenshot({ path: `e2e/artifacts/opening-pinned-${pinned}.png` })

      stand.ready()
      await expect(new ChatPage(page).composer).toBeVisible()
      await expect(page.locator('html')).toHaveAttribute('data-theme', pinned)
      const seen = await page.evaluate(() => {
        const w = window as unknown as { __themes: string[]; __firstDrawn?: string }
        return { themes: w.__themes, firstDrawn: w.__firstDrawn }
      })
      // Pinned before anything was drawn, and never let go meanwhile (no flash of the system's).
      expect(seen.firstDrawn).toBe(pinned)
      expect(seen.themes.filter((theme) => theme !== 'none')).toEqual([pinned])
      expect(seen.themes.lastIndexOf('none')).toBeLessThan(seen.themes.indexOf(pinned))
    } finally {
      detach()
    }
  })
}
