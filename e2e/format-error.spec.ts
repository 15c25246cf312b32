/**
 * A reply whose formatting throws shows as plain text in its place, with a note, and the window
 * stays. The formatter is made to throw where it really can: the code highlighter, which loads
 * the first time a reply holds a code fence, is served broken (its plugin throws as it runs).
 * Screenshots go to e2e/artifacts (format-error-<scheme>).
 */
import { reply } from '../test/fixtures/fake-anthropic'
import { expect, test } from './fixtures/harness'
import { shootBoth } from './fixtures/screens'
import { ChatPage } from './pages/chat.page'

test('a reply the formatter throws on shows as plain text with a note, and the window stays', async ({
  page,
  cairn,
  anthropic,
}) => {
  await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-format-error' })
  // A rehype plugin whose transformer throws, served in place of the highlighter's code.
  await page.route('**/assets/rehype-highlight-*.js', (route) =>
    route.fulfill({
      contentType: 'text/javascript',
      body: "export default function broken() { return () => { throw new Error('formatter broke') } }",
    }),
  )
  anthropic.script(
    reply.text('Plain **bold** words.'),
    reply.text('Some code:\n\n```js\nlet river = "bed"\n```\n\nand **after** it.'),
  )
  await page.setViewportSize({ width: 880, height: 560 })
  await cairn.open(page)
  const chat = new ChatPage(page)

  await chat.send('Say something.')
  await expect(chat.lastReply().getByText('bold', { exact: true })).toBeVisible()
  await chat.send('Show me code.')
  await expect(chat.replies()).toHaveCount(2)
  const broken = chat.lastReply()
  await expect(broken).toContainText('Shown as plain text: it could not be formatted.')
  // The text exactly as written, marks and all.
  await expect(broken).toContainText('let river = "bed"')
  await expect(broken).toContainText('and **after** it.')
  // The rest of the window stays: the earlier reply formatted, the message box usable.
  await expect(chat.replies().first().getByText('bold', { exact: true })).toBeVisible()
  await expect(chat.composer).toBeEnabled()
  await expect(page.getByText('Cairn could not show this window')).toHaveCount(0)
  await shootBoth(page, cairn, 'format-error')
  // Only the thrown error was told (React reports what a boundary caught).
  expect(cairn.pageErrors.length).toBeGreaterThan(0)
  for (const error of cairn.pageErrors) expect(error).toContain('formatter broke')
  cairn.pageErrors.length = 0
})
