/**
 * The review card's screens that hunt13-review changed, in light and dark: an edit with typed
 * text (Escape no longer drops it; the hint says how to let it go) and a change too long to
 * send at once (its size, the whole diff on demand).
 */
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { reply } from './fixtures/claude-turns'
import { expect, shoot, test } from './fixtures/screens'
import { ChatPage } from './pages/chat.page'
import { allMode, ReviewPanel } from './pages/review.page'

for (const scheme of ['light', 'dark'] as const) {
  test(`review drafts and long changes (${scheme})`, async ({ page, cairn, anthropic }) => {
    // A megabyte of text through the fake API and the gate, on a loaded machine.
    test.setTimeout(180_000)
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-screens' })
    await allMode(cairn)
    // A file over the 1,000,000 characters a pending change carries (written by another
    // editor), and Claude's one-line insert into it.
    const long = `${'- a long line of notes about the trailhead project\n'.repeat(20_000)}`
    await writeFile(path.join(cairn.dataDir, 'memories', 'long.md'), long)
    anthropic.script(
      reply.toolUses([
        { input: { command: 'create', path: '/memories/prefs.md', file_text: 'Editor: Vim\n' } },
        {
          input: {
            command: 'insert',
            path: '/memories/long.md',
            insert_line: 0,
            insert_text: '# Trailhead notes',
          },
        },
      ]),
      reply.text('Noted.'),
    )
    await cairn.open(page)
    const chat = new ChatPage(page)
    await chat.send('Remember my editor and my notes')
    const card = chat.toolCard('create', '/memories/prefs.md')
    await expect(card).toContainText('Waiting for you')
    const review = new ReviewPanel(page, card, '/memories/prefs.md')
    await review.region.getByRole('button', { name: 'Edit' }).click()
    const editor = review.region.getByRole('textbox', { name: /^Edit the text of/ })
    await editor.fill('Editor: Helix\nTheme: dark\n')
    await editor.press('Escape')
    await expect(review.region).toContainText('Cancel edit lets your text go')
    await card.scrollIntoViewIfNeeded()
    await shoot(page, cairn, `review-draft-kept-${scheme}`)

    const longCard = chat.toolCard('insert', '/memories/long.md')
    const longReview = new ReviewPanel(page, longCard, '/memories/long.md')
    await expect(longReview.region).toContainText('too long to show at once')
    await expect(longReview.region.getByRole('button', { name: 'Edit' })).toHaveCount(0)
    await longCard.scrollIntoViewIfNeeded()
    await shoot(page, cairn, `review-long-change-${scheme}`)
    await longReview.region.getByRole('button', { name: 'Show the whole change' }).click()
    await expect(longReview.diff('/memories/long.md')).toBeVisible()
    await shoot(page, cairn, `review-long-change-shown-${scheme}`)
  })
}
