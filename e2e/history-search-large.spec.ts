/**
 * Issue #12's promise for a history search longer than a moment: on 10,000 commits the full
 * history view shows how far the search has got while it runs, Stop ends it at once (what was
 * found is kept, no further page is asked for), and a search left to finish agrees with
 * `git log -S`. The search's second page is held at a gate until the progress and the Stop
 * have been checked, so the test does not depend on how fast this machine searches.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import type { Core } from '../src/main/core'
import { expect, test } from './fixtures/claude-turns'
import { withLargeHistory } from './fixtures/large-history'
import { FullHistoryPage } from './pages/full-history.page'

test('a search of 10,000 commits shows its progress, stops at once, and agrees with git log -S', async ({
  page,
  rendererServer,
}) => {
  test.setTimeout(120_000)
  let searches = 0
  let release: () => void = () => {}
  let gate: Promise<void> | null = new Promise<void>((resolve) => (release = resolve))
  // Settles when the page held at the gate has been answered.
  let heldAnswered: Promise<unknown> = Promise.resolve()
  const gated = (core: Core): Core => ({
    ...core,
    dispatch: async (channel, payload) => {
      if (channel === 'history:search') {
        searches++
        // Every page after the first waits while the gate is up.
        if (searches > 1 && gate) {
          const answer = gate.then(() => core.dispatch(channel, payload))
          heldAnswered = answer.catch(() => {})
          return answer
        }
      }
      return core.dispatch(channel, payload)
    },
  })
  const options = { commits: 10_000, prefix: 'cairn-e2e-search-large-', wrap: gated }
  await withLargeHistory(page, options, async (dataDir) => {
    try {
      await page.goto(rendererServer.url)
      // The app mounts once the core says the memory is open: a key pressed before that would
      // reach no one (as the harness's own `open` waits).
      await page.waitForFunction(() => {
        const root = document.getElementById('root')
        return root?.firstElementChild != null && root.querySelector('.opening') === null
      })
      const history = new FullHistoryPage(page)
      await history.openWithKeyboard()
      await expect(history.view).toBeVisible()

      // The newest commit wrote "Revision 9999." and no commit removed it.
      await history.find('Revision 9999.')
      const searched = history.view.getByRole('progressbar', { name: 'Searched' })
      await expect(history.searchProgress).toHaveText(
        /^Searching… [\d,]+ of 10,000 changes looked at$/,
      )
      const scanned = Number(await searched.getAttribute('value'))
      expect(scanned).toBeGreaterThan(0)
      expect(scanned).toBeLessThan(10_000)
      await expect(searched).toHaveAttribute('max', '10000')
      await expect(history.hits.getByRole('option')).toHaveCount(1)

      // Stop, by keyboard: the search says where it stopped and asks for nothing more.
      const stop = history.view.getByRole('button', { name: 'Stop', exact: true })
      await stop.focus()
      await stop.press('Enter')
      await expect(history.searchProgress).toHaveText(
        `Stopped after ${scanned.toLocaleString('en-US')} of 10,000 changes: 1 change so far add or remove “Revision 9999.”.`,
      )
      await expect(searched).toHaveCount(0)
      const asked = searches
      gate = null
      release()
      await heldAnswered
      // The held page's answer reaches the page, which must not ask for the next one.
      await page.waitForTimeout(300)
      expect(searches).toBe(asked)
      await expect(history.searchProgress).toContainText('Stopped after')

      // Searched again and left to finish: the commits git log -S names, and only those.
      await history.find('Revision 99')
      await expect(history.searchProgress).toHaveText(
        /changes? added or removed “Revision 99”\.$/,
        {
          timeout: 90_000,
        },
      )
      const git = execFileSync(
        'git',
        ['--git-dir', path.join(dataDir, 'history.git'), 'log', '-SRevision 99', '--format=%H'],
        { encoding: 'utf8' },
      )
        .split('\n')
        .filter(Boolean)
      const hits = history.hits.getByRole('option')
      await expect(hits).toHaveCount(git.length)
      const shown = await hits.evaluateAll((options) =>
        options.map((option) => option.getAttribute('data-oid')),
      )
      expect(shown).toEqual(git)
    } finally {
      // A page still held at the gate is answered before the core closes.
      release()
    }
  })
})
