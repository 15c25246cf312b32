/**
 * fix14-review's screens, in light and dark: a conversation whose file another program changed
 * (Cairn takes that version up and says so, naming the copy it kept), and three long changes
 * waiting at once, of which one list carries the text of the first only (the others' come on
 * demand, and their cards show and edit them as any other).
 */
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { ConversationSearchHit } from '../src/shared/types'
import { reply } from './fixtures/claude-turns'
import { expect, shoot, test } from './fixtures/screens'
import { ChatPage } from './pages/chat.page'
import { allMode, ReviewPanel } from './pages/review.page'

for (const scheme of ['light', 'dark'] as const) {
  test(`a conversation changed by another program is taken up, and said so (${scheme})`, async ({
    page,
    cairn,
    anthropic,
  }) => {
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-screens' })
    anthropic.script(reply.text('Lisbon in May: light clothes, one jacket.'))
    await cairn.open(page)
    const chat = new ChatPage(page)
    await chat.send('Packing for Lisbon')
    await expect(chat.transcript).toContainText('one jacket')
    const listed = await cairn.core.dispatch('conversations:list', {})
    if (!listed.ok) throw new Error(listed.error.message)
    const id = (listed.value as ReadonlyArray<ConversationSearchHit>)[0]!.conversation.id
    const file = path.join(cairn.dataDir, 'conversations', `${id}.json`)
    // An editor saves an older buffer, with a line of its own, over the file.
    const stored = JSON.parse(await readFile(file, 'utf8'))
    await writeFile(
      file,
      JSON.stringify({
        ...stored,
        messages: [
          {
            ...stored.messages[0],
            content: [{ type: 'text', text: 'Packing for Lisbon (edited)' }],
          },
        ],
      }),
    )
    // Coming back to the window looks again.
    await page.evaluate(() => window.dispatchEvent(new Event('focus')))
    const notice = page.locator('.banner').filter({ hasText: 'Changed by another program' })
    await expect(notice).toBeVisible()
    await expect(notice).toContainText(`conversations/cairn-replaced/${id}.json`)
    await expect(chat.transcript).toContainText('Packing for Lisbon (edited)')
    await expect(chat.transcript).not.toContainText('one jacket')
    await shoot(page, cairn, `conversation-changed-outside-${scheme}`)
    // The copy Cairn had is there, whole.
    const kept = JSON.parse(
      await readFile(
        path.join(cairn.dataDir, 'conversations', 'cairn-replaced', `${id}.json`),
        'utf8',
      ),
    )
    expect(kept.messages).toHaveLength(2)
  })

  test(`long changes beyond one list's text come on demand, shown and editable (${scheme})`, async ({
    page,
    cairn,
    anthropic,
  }) => {
    // Three files of 900,000 characters through the fake API and the gate, on a loaded machine.
    test.setTimeout(180_000)
    await page.setViewportSize({ width: 1280, height: 800 })
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.core.dispatch('settings:setApiKey', { key: 'sk-ant-e2e-screens' })
    await allMode(cairn)
    const filler = '- a line of notes about the trailhead project\n'.repeat(19_000)
    for (const k of [1, 2, 3]) {
      await writeFile(path.join(cairn.dataDir, 'memories', `part${k}.md`), `# Part ${k}\n${filler}`)
    }
    anthropic.script(
      reply.toolUses(
        [1, 2, 3].map((k) => ({
          input: {
            command: 'str_replace',
            path: `/memories/part${k}.md`,
            old_str: `# Part ${k}`,
            new_str: `# Trailhead, part ${k}`,
          },
        })),
      ),
      reply.text('Noted.'),
    )
    await cairn.open(page)
    const chat = new ChatPage(page)
    await chat.send('Title my notes')
    for (const k of [1, 2, 3]) {
      const card = chat.toolCard('str_replace', `/memories/part${k}.md`)
      await expect(card).toContainText('Waiting for you', { timeout: 60_000 })
      const review = new ReviewPanel(page, card, `/memories/part${k}.md`)
      await expect(review.diff(`/memories/part${k}.md`)).toContainText(`# Trailhead, part ${k}`, {
        timeout: 30_000,
      })
      await expect(review.region.getByRole('button', { name: 'Edit' })).toBeVisible()
    }
    const third = chat.toolCard('str_replace', '/memories/part3.md')
    await third.scrollIntoViewIfNeeded()
    await shoot(page, cairn, `review-long-list-${scheme}`)
    // Edited on the card (a few keys: filling 900,000 characters by hand is no one's way).
    const review = new ReviewPanel(page, third, '/memories/part3.md')
    await review.region.getByRole('button', { name: 'Edit' }).click()
    const editor = review.region.getByRole('textbox', { name: /^Edit the text of/ })
    await editor.press('Control+Home')
    await editor.pressSequentially('By hand: ')
    await review.region.getByRole('button', { name: 'Approve edited text' }).click()
    await expect(third).not.toContainText('Waiting for you', { timeout: 60_000 })
    expect(
      (await readFile(path.join(cairn.dataDir, 'memories', 'part3.md'), 'utf8')).startsWith(
        'By hand: # Trailhead, part 3\n',
      ),
    ).toBe(true)
  })
}
