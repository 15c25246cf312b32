/**
 * Issue #13's chat card checked the unkind way in real Chromium, in a small window (880×560),
 * by keyboard alone: an approval the memory refuses (the file became a folder while the change
 * waited) says why in a plain sentence with no host path, and the focus stays on the card;
 * deciding goes on to the next change, which is scrolled into view.
 */
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import type { Page } from '@playwright/test'
import { expect, reply, test } from './fixtures/claude-turns'
import { ChatPage } from './pages/chat.page'
import { tabTo } from './fixtures/keyboard'
import { allMode, ReviewPanel } from './pages/review.page'

async function shoot(page: Page, name: string): Promise<void> {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme })
    await page.screenshot({ path: test.info().outputPath(`${name}-${colorScheme}.png`) })
  }
}

test.use({ viewport: { width: 880, height: 560 } })

test('an approval refused because the file became a folder: a plain sentence, the focus kept', async ({
  page,
  cairn,
  anthropic,
}) => {
  test.slow()
  await allMode(cairn)
  anthropic.script(
    reply.toolUses([
      {
        id: 'toolu_a1',
        input: { command: 'create', path: '/memories/plan.md', file_text: 'step 1\n' },
      },
      {
        id: 'toolu_a2',
        input: { command: 'create', path: '/memories/next.md', file_text: 'step 2\n' },
      },
    ]),
    reply.text('Noted.'),
  )
  await cairn.open(page)
  const chat = new ChatPage(page)
  await chat.composer.focus()
  await page.keyboard.type('Plan it')
  await page.keyboard.press('Enter')

  const plan = new ReviewPanel(page, chat.toolCard('create', '/memories/plan.md'), 'plan.md')
  const next = new ReviewPanel(page, chat.toolCard('create', '/memories/next.md'), 'next.md')
  await expect(next.region).toBeVisible()
  // Another program makes a folder where the new file would go.
  await mkdir(path.join(cairn.dataDir, 'memories', 'plan.md', 'inside'), { recursive: true })

  const approve = plan.region.getByRole('button', { name: 'Approve', exact: true })
  await tabTo(page, approve)
  await expect(approve).toBeInViewport()
  await page.keyboard.press('Enter')
  const alert = plan.region.getByRole('alert')
  await expect(alert).toBeVisible()
  await expect(alert).not.toContainText(cairn.dataDir)
  await expect(alert).not.toContainText('/tmp/')
  await expect(alert).toHaveText(/[.!?]$/)
  // The focus is never dropped to the top of the page: it stays on the card, on the first
  // decision it can still take.
  await expect(plan.region.getByRole('button', { name: 'Check again' })).toBeFocused()
  await expect(plan.region.getByRole('button', { name: 'Approve', exact: true })).toBeDisabled()
  await shoot(page, 'refused-approval')

  // Decline it by keyboard: the focus goes on to the next change, in view.
  await tabTo(page, plan.region.getByRole('button', { name: 'Decline', exact: true }))
  await page.keyboard.press('Enter')
  await page.keyboard.press('Enter')
  await expect(chat.toolCard('create', '/memories/plan.md')).toContainText('Declined')
  const approveNext = next.region.getByRole('button', { name: 'Approve', exact: true })
  await expect(approveNext).toBeFocused()
  await expect(approveNext).toBeInViewport()
  await page.keyboard.press('Enter')
  await expect(chat.toolCard('create', '/memories/next.md')).toContainText('Done')
  await expect(chat.lastReply()).toContainText('Noted.')
  await expect(chat.composer).toBeFocused()
  await shoot(page, 'decided-small')
  await rm(path.join(cairn.dataDir, 'memories', 'plan.md'), { recursive: true, force: true })
})
