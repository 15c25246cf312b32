import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createCore, type Core } from '../src/main/core'
import type { AgentEvent } from '../src/shared/types'
import { reply } from '../test/fixtures/fake-anthropic'
import { attachCore, expect, test } from './fixtures/harness'
import { ChatPage } from './pages/chat.page'
import { HistoryPage } from './pages/history.page'

// Review hunt13-tool D4: a conversation file cut short vanished from the list without a sign,
// and could be neither opened nor deleted in the app.
for (const scheme of ['light', 'dark'] as const) {
  test(`an unreadable conversation is listed, says so, and Delete keeps its file aside (${scheme})`, async ({
    page,
    rendererServer,
    anthropic,
  }) => {
    // Two cores opened and two Claude turns run before the page loads.
    test.slow()
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-damaged-'))
    const logger = { info: () => {}, warn: () => {}, error: () => {} }
    const open = () =>
      createCore({
        appVersion: '0.1.0-e2e',
        env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: anthropic.url },
        anthropicMaxRetries: 0,
        dataDir,
        logger,
      })
    let core: Core | null = await open()
    let stop = () => {}
    try {
      // Two conversations made through the core; the first writes a memory file.
      const finished = new Set<string>()
      core.events.on((name, data) => {
        const event = data as AgentEvent
        if (name === 'agent:event' && event.type === 'turn-finished') finished.add(event.turnId)
      })
      const turn = async (text: string): Promise<string> => {
        const result = await core!.dispatch('chat:send', {
          conversationId: null,
          text,
          clientId: text,
        })
        if (!result.ok) throw new Error(result.error.message)
        const started = result.value as { conversationId: string; turnId: string }
        await expect.poll(() => finished.has(started.turnId)).toBe(true)
        return started.conversationId
      }
      anthropic.script(
        reply.toolUse({
          input: { command: 'create', path: '/memories/lisbon.md', file_text: 'Trip in May.\n' },
        }),
        reply.text('Noted.'),
      )
      const damagedId = await turn('Trip to Lisbon')
      anthropic.script(reply.text('ok'))
      await turn('Tax notes')
      await core.close()
      core = null
      const file = path.join(dataDir, 'conversations', `${damagedId}.json`)
      const cut = (await readFile(file, 'utf8')).slice(0, 200)
      await writeFile(file, cut)

      core = await open()
      stop = await attachCore(page, core)
      await page.emulateMedia({ colorScheme: scheme })
      await page.goto(rendererServer.url)
      const chat = new ChatPage(page)

      // Listed, under the title recovered from the file, with a word that it cannot be read.
      const entry = chat.conversation('Trip to Lisbon')
      await expect(entry).toBeVisible()
      await expect(entry).toHaveAccessibleDescription('Could not be read')
      await expect(chat.conversation('Tax notes')).toBeVisible()
      await expect(chat.sidebar.getByRole('button', { name: 'Rename Trip to Lisbon' })).toHaveCount(
        0,
      )

      // Opening it says what happened and offers Delete; there is no composer to type into.
      await entry.click()
      const problem = chat.transcript.getByRole('status', {
        name: 'This conversation could not be read',
      })
      await expect(problem).toContainText('damaged')
      await expect(chat.title).toHaveText('Trip to Lisbon')
      await expect(chat.composer).toHaveCount(0)
      await page.screenshot({ path: `e2e/artifacts/conversation-unreadable-${scheme}.png` })

      // The memory change it made is still linked to it in History, by its title.
      await chat.pane.getByRole('button', { name: 'Memory changes' }).click()
      const history = new HistoryPage(page)
      const row = history.row('lisbon.md')
      await expect(row).toHaveCount(1)
      await expect(row.getByRole('button', { name: 'Trip to Lisbon' })).toBeVisible()

      // Delete from the pane, then cancel: nothing changes.
      await problem.getByRole('button', { name: 'Delete conversation' }).click()
      await expect(chat.dialog).toContainText('conversations/cairn-damaged')
      await page.screenshot({ path: `e2e/artifacts/conversation-unreadable-delete-${scheme}.png` })
      await chat.dialog.getByRole('button', { name: 'Cancel' }).click()
      await expect(chat.dialog).toBeHidden()

      // The keyboard path in the list: Delete on the focused row asks, Tab reaches the
      // confirm button, Enter deletes.
      await entry.focus()
      await page.keyboard.press('Delete')
      await expect(chat.dialog).toContainText('“Trip to Lisbon” could not be read')
      await expect(chat.dialog.getByRole('button', { name: 'Cancel' })).toBeFocused()
      await page.keyboard.press('Tab')
      await expect(chat.dialog.getByRole('button', { name: 'Delete conversation' })).toBeFocused()
      await page.keyboard.press('Enter')
      await expect(chat.conversation('Trip to Lisbon')).toHaveCount(0)
      await expect(chat.title).toHaveText('New chat')
      await expect(chat.conversation('Tax notes')).toBeVisible()
      // Kept aside, byte for byte.
      const kept = path.join(dataDir, 'conversations', 'cairn-damaged', `${damagedId}.json`)
      expect(await readFile(kept, 'utf8')).toBe(cut)
    } finally {
      stop()
      await core?.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
}
