import { expect, test } from './fixtures/harness'
import { AppPage } from './pages/app.page'

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
