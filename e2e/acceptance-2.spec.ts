/**
 * Issue 2's harness, checked the unkind way: a page that throws or logs an error must fail
 * its test (never a silent pass), and the `window.api` the page is given holds exactly the
 * contract's channels, as named functions, and nothing else.
 */
import { requestChannels } from '../src/shared/channels'
import { expect, test } from './fixtures/harness'
import { AppPage } from './pages/app.page'

/** Makes the page throw outside any handler, reject a promise no one awaits, and log an error. */
async function misbehave(page: import('@playwright/test').Page): Promise<void> {
  await page.evaluate(() => {
    setTimeout(() => {
      throw new TypeError('thrown by the page')
    })
    void Promise.reject(new RangeError('rejected by the page'))
    console.error('logged by the page')
  })
}

test('records what the page throws, rejects unhandled and logs as an error', async ({
  page,
  cairn,
}) => {
  await cairn.open(page)
  await expect(new AppPage(page).about).toContainText('Cairn')
  expect(cairn.pageErrors).toEqual([])
  await misbehave(page)
  await expect.poll(() => cairn.pageErrors.length).toBe(3)
  expect([...cairn.pageErrors].sort()).toEqual([
    'console error: logged by the page',
    'uncaught RangeError: rejected by the page',
    'uncaught TypeError: thrown by the page',
  ])
  // Taken out after checking them, as a spec that provokes errors on purpose does.
  cairn.pageErrors.length = 0
})

test.describe('a page that throws and whose test does nothing about it', () => {
  // Expected to fail: the harness's own check at the end of the test must catch it.
  test.fail()
  test('fails its test', async ({ page, cairn }) => {
    await cairn.open(page)
    // Counted here, not through the harness, so the test body itself cannot fail.
    let seen = 0
    page.on('pageerror', () => seen++)
    page.on('console', (message) => {
      if (message.type() === 'error') seen++
    })
    await misbehave(page)
    await expect.poll(() => seen).toBe(3)
  })
})

test('window.api holds the contract’s channels as named functions, plus on, and nothing else', async ({
  page,
  cairn,
}) => {
  await cairn.open(page)
  const shape = await page.evaluate(() => {
    const api = window.api as unknown as Record<string, unknown>
    const domains: Record<string, Record<string, string>> = {}
    for (const [domain, value] of Object.entries(api)) {
      if (typeof value === 'function') {
        domains[domain] = { '': 'function' }
        continue
      }
      domains[domain] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([verb, fn]) => [verb, typeof fn]),
      )
    }
    return { domains, frozen: Object.isFrozen(api) }
  })
  const expected: Record<string, Record<string, string>> = { on: { '': 'function' } }
  for (const channel of requestChannels) {
    const [domain, verb] = channel.split(':') as [string, string]
    ;(expected[domain] ??= {})[verb] = 'function'
  }
  expect(shape).toEqual({ domains: expected, frozen: true })
})

test('the renderer server refuses a malformed address and serves on', async ({
  rendererServer,
}) => {
  for (const malformed of ['%', '%E0%A4%A', 'assets/%zz.js']) {
    const response = await fetch(rendererServer.url + malformed)
    expect(response.status, malformed).toBe(400)
  }
  const climb = await fetch(rendererServer.url + '..%2f..%2fpackage.json')
  expect(climb.status).toBe(403)
  const page = await fetch(rendererServer.url)
  expect(page.status).toBe(200)
  expect(await page.text()).toContain('<div id="root">')
})
