import type { Core } from '../src/main/core'
import { attachCore } from './fixtures/harness'
import { claudeTurn, expect, reply, test } from './fixtures/claude-turns'
import { refusing } from './fixtures/refusing'
import { ChatPage } from './pages/chat.page'
import { MemoryPage } from './pages/memory.page'
import { SettingsPage } from './pages/settings.page'
import { SyncPage } from './pages/sync.page'

// What each screen's first load reads: a memory file, and a conversation with one reply.
test.beforeEach(async ({ cairn, anthropic }) => {
  await cairn.core.dispatch('memory:write', { path: '/memories/plans.md', content: 'Lisbon\n' })
  await claudeTurn(cairn, anthropic, 'Hello there', [reply.text('Hi, I am here.')])
})

test('every screen whose first load fails says what failed, and its Retry brings it', async ({
  page,
  cairn,
  rendererServer,
}) => {
  const failing = new Set([
    'conversations:list',
    'conversations:get',
    'memory:tree',
    'memory:read',
    'settings:get',
    'sync:status',
  ])
  const detach = await attachCore(page, refusing(cairn.core, failing))
  try {
    await page.goto(rendererServer.url)
    const chat = new ChatPage(page)
    const memory = new MemoryPage(page)

    // The conversation list: a titled error with Retry, never an empty list that says "none".
    const listError = chat.sidebar.getByRole('alert', { name: 'Could not load conversations' })
    await expect(listError).toContainText('The disk did not answer (conversations:list).')
    await expect(chat.sidebar).not.toContainText('No conversations yet')
    failing.delete('conversations:list')
    await listError.getByRole('button', { name: 'Retry' }).click()
    await expect(listError).toHaveCount(0)

    // Opening a conversation whose file cannot be read.
    await chat.openConversation('Hello there')
    const openError = chat.transcript.getByRole('alert', {
      name: 'Could not open this conversation',
    })
    await expect(openError).toContainText('(conversations:get)')
    failing.delete('conversations:get')
    await openError.getByRole('button', { name: 'Retry' }).click()
    await expect(chat.lastReply()).toContainText('Hi, I am here.')
    await expect(openError).toHaveCount(0)

    // The memory tree, then a file in it.
    const treeError = memory.pane.getByRole('alert').filter({ hasText: '(memory:tree)' })
    await expect(treeError).toBeVisible()
    failing.delete('memory:tree')
    await treeError.getByRole('button', { name: 'Retry' }).click()
    await memory.openFile('plans.md')
    const fileError = memory.pane.getByRole('alert').filter({ hasText: '(memory:read)' })
    await expect(fileError).toBeVisible()
    failing.delete('memory:read')
    await fileError.getByRole('button', { name: 'Retry' }).click()
    await expect(memory.content('plans.md')).toContainText('Lisbon')
    await expect(memory.pane.getByRole('alert')).toHaveCount(0)

    // Settings, then its Sync section (shown once the settings are read).
    const settings = new SettingsPage(page)
    await settings.open()
    const settingsError = settings.dialog.getByRole('alert', { name: 'Could not load settings' })
    await expect(settingsError).toContainText('(settings:get)')
    failing.delete('settings:get')
    await settingsError.getByRole('button', { name: 'Retry' }).click()
    await expect(settings.keyStatus).toContainText('Set')
    const syncError = settings.dialog.getByRole('alert', {
      name: 'Could not read the sync settings',
    })
    await expect(syncError).toContainText('(sync:status)')
    failing.delete('sync:status')
    // Without a Retry here, turning sync on or off waited for the window to be reloaded.
    await syncError.getByRole('button', { name: 'Retry' }).click()
    await expect(new SyncPage(page).url).toBeVisible()
    await expect(syncError).toHaveCount(0)
  } finally {
    detach()
  }
})

test('slow first loads show what is loading, and the window works meanwhile', async ({
  page,
  cairn,
  rendererServer,
}) => {
  let release: () => void = () => {}
  const answer = new Promise<void>((resolve) => (release = resolve))
  const held = new Set(['conversations:list', 'memory:tree', 'settings:get'])
  const slow: Core = {
    ...cairn.core,
    dispatch: async (channel, payload) => {
      if (held.has(channel as string)) await answer
      return cairn.core.dispatch(channel, payload)
    },
  }
  const detach = await attachCore(page, slow)
  try {
    await page.goto(rendererServer.url)
    const chat = new ChatPage(page)
    const memory = new MemoryPage(page)
    await expect(chat.sidebar.getByRole('status', { name: 'Loading conversations…' })).toBeVisible()
    await expect(memory.pane.getByRole('status', { name: 'Loading memory…' })).toBeVisible()
    // Not frozen: the message box takes text and the side pane switches.
    await chat.composer.fill('A draft typed while loading')
    await expect(chat.composer).toHaveValue('A draft typed while loading')
    await page.keyboard.press('ControlOrMeta+2')
    await expect(page.getByRole('tab', { name: 'History' })).toHaveAttribute(
      'aria-selected',
      'true',
    )
    await page.keyboard.press('ControlOrMeta+1')
    const settings = new SettingsPage(page)
    await page.keyboard.press('ControlOrMeta+Comma')
    await expect(settings.dialog.getByRole('status', { name: 'Loading settings…' })).toBeVisible()
    await page.keyboard.press('Escape')
    await expect(settings.dialog).toBeHidden()

    release()
    await expect(chat.conversation('Hello there')).toBeVisible()
    await expect(memory.item('plans.md')).toBeVisible()
    await expect(page.getByRole('status', { name: /^Loading/ })).toHaveCount(0)
    await expect(chat.composer).toHaveValue('A draft typed while loading')
  } finally {
    release()
    detach()
  }
})
