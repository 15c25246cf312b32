import { claudeTurn, create, expect, reply, strReplace, test } from './fixtures/claude-turns'
import { FullHistoryPage } from './pages/full-history.page'
import { shootBoth } from './fixtures/screens'

// Acceptance of issue #12 the hostile way: a line holding a bidi override or a zero-width
// space reads in the history's diff and blame as it reads in review, with each invisible
// character marked, never drawn as the reordered or run-together text it would make.

test('the history diff and blame mark invisible characters, as review does', async ({
  page,
  cairn,
  anthropic,
}) => {
  await claudeTurn(cairn, anthropic, 'Remember the payment note.', [
    create('/memories/pay.md', 'Pay \u202eevil\u202c now.\nzero\u200bwidth\nPlain line.\n'),
    reply.text('Saved.'),
  ])
  await claudeTurn(cairn, anthropic, 'Mark the plain line.', [
    strReplace('/memories/pay.md', 'Plain line.', 'Plain \u2066x\u2069 line.'),
    reply.text('Done.'),
  ])
  await page.setViewportSize({ width: 1280, height: 800 })
  await cairn.open(page)
  const history = new FullHistoryPage(page)
  await history.openWithKeyboard()
  await history.row('Claude edited pay.md').click()

  const diff = history.diffTable('/memories/pay.md')
  const added = diff.getByRole('row').filter({ hasText: 'Plain' }).last()
  await expect(added.getByTitle('An invisible character')).toHaveText(['U+2066', 'U+2069'])
  // The cell draws no invisible character itself.
  expect(await added.evaluate((row) => /[\u2066\u2069]/.test(row.textContent ?? ''))).toBe(false)

  await history.showAs('Blame')
  const blame = history.blame('/memories/pay.md')
  const bidi = blame.getByRole('row').filter({ hasText: 'Pay' })
  await expect(bidi.getByTitle('An invisible character')).toHaveText(['U+202E', 'U+202C'])
  await expect(bidi).toContainText('Pay U+202Eevil')
  const zero = blame.getByRole('row').filter({ hasText: 'zero' })
  await expect(zero.getByTitle('An invisible character')).toHaveText('U+200B')
  expect(
    await blame.evaluate((table) =>
      /[\u202e\u202c\u200b\u2066\u2069]/.test(table.textContent ?? ''),
    ),
  ).toBe(false)

  await shootBoth(page, cairn, 'history-hidden-blame')
})
