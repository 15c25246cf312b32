import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Core } from '../src/main/core'
import { REPEATED_SYNC_FAILURES } from '../src/shared/types'
import { expect, test } from './fixtures/harness'
import { shoot } from './fixtures/screens'
import { call, conflictOn, otherMachine, syncSpec } from './fixtures/machines'
import { HistoryPage } from './pages/history.page'
import { SyncPage } from './pages/sync.page'

const hub = syncSpec('e2e')
// No periodic sync: these tests sync on changes and "Sync now" only.
const remoteOf = (repo: string) => hub.remoteOf(repo, 0)

test('Sync settings say plainly what failed, then turn sync on', async ({ page, cairn }) => {
  const repo = hub.newRepo()
  await cairn.core.dispatch('memory:write', { path: '/memories/notes.md', content: 'hello\n' })
  await cairn.open(page)
  const sync = new SyncPage(page)
  await sync.openSettings()
  await expect(sync.state()).toContainText('Sync off')

  await sync.fill({
    url: 'http://127.0.0.1:1/memory.git',
    username: hub.server.user,
    token: hub.server.token,
  })
  await sync.testConnection()
  await expect(sync.testResult()).toContainText('could not be reached')

  await sync.fill({ url: hub.server.url(repo), token: 'wrong-token' })
  await sync.testConnection()
  await expect(sync.testResult()).toContainText('refused the username or token')

  await sync.fill({ url: hub.server.url('no-such-repository'), token: hub.server.token })
  await sync.testConnection()
  await expect(sync.testResult()).toContainText('No git repository was found')

  await sync.fill({ url: 'ssh://git@example.com/memory.git' })
  await sync.testConnection()
  await expect(sync.testResult()).toContainText('HTTPS')

  await sync.fill({ url: hub.server.url(repo), token: hub.server.token })
  await sync.testConnection()
  await expect(sync.testResult()).toContainText('The repository is empty')

  await sync.turnOn()
  await expect(sync.state()).toContainText('Synced')
  await expect(sync.token).toHaveValue('')
  expect(await page.content()).not.toContain(hub.server.token)
  await expect(sync.indicator).toContainText('Synced')
  expect(hub.server.git(repo, 'ls-tree', '--name-only', 'main').trim()).toBe('notes.md')
})

test('the token form follows the address being typed', async ({ page, cairn }) => {
  const repo = hub.newRepo()
  await call(cairn.core, 'sync:configure', remoteOf(repo))
  await call(cairn.core, 'sync:now')
  await cairn.open(page)
  const sync = new SyncPage(page)
  await sync.openSettings()
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme })
    await sync.fill({ url: hub.server.url(repo) })
    await expect(sync.token).toHaveAccessibleName('Replace the access token')
    await expect(sync.settings.dialog).not.toContainText('not encrypted')

    // Another server, over plain http: warned while typing, before anything is saved or sent.
    await sync.fill({ url: 'http://memory.example.com/me/memory.git' })
    await expect(sync.settings.dialog).toContainText(
      'This address is not encrypted (http): the token travels in the clear.',
    )
    await expect(sync.token).toHaveAccessibleName('Access token')
    await expect(sync.token).toHaveAttribute('placeholder', 'The token for this address')
    await expect(sync.settings.dialog).toContainText(
      'The saved token is only ever sent to the server it was given for',
    )
    await sync.token.evaluate((input) => input.scrollIntoView({ block: 'center' }))
    await shoot(page, cairn, `sync-address-changed-${scheme}`)

    // Another repository on the same server keeps the saved token.
    await sync.fill({ url: hub.server.url(`${repo}-moved`) })
    await expect(sync.token).toHaveAccessibleName('Replace the access token')
    await expect(sync.settings.dialog).not.toContainText('not encrypted')
  }
})

test('the sync indicator shows syncing, failure and recovery', async ({ page, cairn }) => {
  const repo = hub.newRepo()
  await call(cairn.core, 'memory:write', { path: '/memories/a.md', content: 'a\n' })
  await call(cairn.core, 'sync:configure', remoteOf(repo))
  await call(cairn.core, 'sync:now')
  await cairn.open(page)
  const sync = new SyncPage(page)
  await expect(sync.indicator).toContainText('Synced just now')

  await call(cairn.core, 'memory:write', { path: '/memories/a.md', content: 'a\nb\n' })
  await hub.server.stop()
  try {
    await sync.syncNow()
    await expect(sync.indicator).toContainText('Could not reach the remote')
    await expect(sync.indicator.getByRole('button').first()).toHaveAttribute(
      'title',
      /1 change not synced yet/,
    )
  } finally {
    await hub.server.start()
  }
  await sync.syncNow()
  await expect(sync.indicator).toContainText('Synced just now')
  expect(hub.server.git(repo, 'show', 'main:a.md')).toBe('a\nb\n')

  // Clicking it opens Settings, where the same state is told.
  await sync.indicator.getByRole('button', { name: /Synced/ }).click()
  await expect(sync.state()).toContainText('Synced')
})

for (const scheme of ['light', 'dark'] as const) {
  test(`a sync that keeps failing the same way says so, and what to do (${scheme})`, async ({
    page,
    cairn,
  }) => {
    const repo = hub.newRepo()
    await call(cairn.core, 'memory:write', { path: '/memories/a.md', content: 'a\n' })
    await call(cairn.core, 'sync:configure', remoteOf(repo))
    await call(cairn.core, 'sync:now')
    await call(cairn.core, 'memory:write', { path: '/memories/a.md', content: 'a\nb\n' })
    await page.emulateMedia({ colorScheme: scheme })
    const sync = new SyncPage(page)
    await hub.server.stop()
    try {
      for (let n = 0; n < REPEATED_SYNC_FAILURES; n++) await call(cairn.core, 'sync:now')
      await cairn.open(page)
      await expect(sync.indicator).toContainText('Sync keeps failing')
      await expect(sync.indicator.getByRole('button').first()).toHaveAttribute(
        'title',
        new RegExp(`^The last ${REPEATED_SYNC_FAILURES} syncs, since .+, failed the same way\\.`),
      )
      await sync.openSettings()
      const banner = sync.settings.dialog.getByRole('alert', { name: 'Sync error' })
      await expect(banner).toContainText('Sync keeps failing')
      await expect(banner).toContainText(`The last ${REPEATED_SYNC_FAILURES} syncs, since`)
      await expect(banner).toContainText('The remote could not be reached.')
      await expect(banner).toContainText('If the server is your own, check that it is running')
      await expect(banner).toContainText('Cairn keeps trying by itself')
      await sync.state().scrollIntoViewIfNeeded()
      await shoot(page, cairn, `sync-keeps-failing-${scheme}`)
    } finally {
      await hub.server.start()
    }
    await call(cairn.core, 'sync:now')
    await expect(sync.state()).toContainText('Synced')
    await expect(sync.settings.dialog.getByRole('alert', { name: 'Sync error' })).toHaveCount(0)
    expect(hub.server.git(repo, 'show', 'main:a.md')).toBe('a\nb\n')
  })
}

test('the conflict dialog shows both versions and commits the choice', async ({ page, cairn }) => {
  const repo = hub.newRepo()
  const desktop = await otherMachine('desktop')
  try {
    const base = '# Prefs\nEditor: Helix\nTheme: dark\n'
    await conflictOn(cairn.core, desktop.core, remoteOf(repo), '/memories/prefs.md', base, {
      desktop: base.replace('Helix', 'Vim'),
      laptop: base.replace('Helix', 'Zed'),
    })

    await cairn.open(page)
    const sync = new SyncPage(page)
    await expect(sync.indicator).toContainText('1 conflict to resolve')
    await sync.indicator.getByRole('button', { name: /conflict/ }).click()
    const dialog = sync.conflictDialog
    await expect(dialog).toBeVisible()
    await expect(dialog.getByRole('heading', { name: 'prefs.md' })).toBeVisible()
    await expect(dialog.getByRole('figure', { name: /This machine · laptop/ })).toContainText(
      'Editor: Zed',
    )
    await expect(dialog.getByRole('figure', { name: /Other machine · desktop/ })).toContainText(
      'Editor: Vim',
    )
    await dialog.getByRole('button', { name: 'Keep desktop’s' }).click()
    await expect(dialog).toContainText('No conflicts left')
    await dialog.getByRole('button', { name: 'Close' }).first().click()
    await expect(dialog).toBeHidden()
    const file = await call(cairn.core, 'memory:read', { path: '/memories/prefs.md' })
    expect(file.text).toBe(base.replace('Helix', 'Vim'))

    // The choice is a commit by You, in the timeline with the desktop's change beside it.
    const history = new HistoryPage(page)
    await history.open()
    await expect(history.row('You resolved the conflict in prefs.md')).toBeVisible()
    await expect(history.row('You on desktop edited prefs.md')).toContainText('desktop')
    await expect(history.row('Cairn merged the memory of desktop')).toBeVisible()
  } finally {
    await desktop.close()
  }
})

for (const scheme of ['light', 'dark'] as const) {
  test(`the conflict dialog shows the start of very long versions (${scheme})`, async ({
    page,
    cairn,
  }) => {
    const repo = hub.newRepo()
    const desktop = await otherMachine('desktop')
    try {
      const base = '# Notes\nSummary: short\nTheme: dark\n'
      // Each side rewrites one line as 100,000 characters.
      const summary = (word: string) => `Summary: ${`${word} `.repeat(20_000)}`
      const status = await conflictOn(
        cairn.core,
        desktop.core,
        remoteOf(repo),
        '/memories/notes.md',
        base,
        {
          desktop: base.replace('Summary: short', summary('tide')),
          laptop: base.replace('Summary: short', summary('moss')),
        },
      )
      expect(status.conflicts).toEqual([
        expect.objectContaining({ path: '/memories/notes.md', blockCount: 1, cut: true }),
      ])
      expect(JSON.stringify(status).length).toBeLessThan(40_000)

      await page.emulateMedia({ colorScheme: scheme })
      await cairn.open(page)
      const sync = new SyncPage(page)
      await sync.indicator.getByRole('button', { name: /conflict/ }).click()
      const dialog = sync.conflictDialog
      await expect(dialog).toContainText(
        'Only the start of the versions is shown here; the file holds them whole.',
      )
      await expect(dialog.getByRole('figure', { name: /This machine · laptop/ })).toContainText(
        'Summary: moss moss',
      )
      await shoot(page, cairn, `sync-conflict-cut-${scheme}`)
      // Choosing still writes the whole version.
      await dialog.getByRole('button', { name: 'Keep desktop’s' }).click()
      await expect(dialog).toContainText('No conflicts left')
      const file = await call(cairn.core, 'memory:read', { path: '/memories/notes.md' })
      expect(file.text).toBe(base.replace('Summary: short', summary('tide')))
    } finally {
      await desktop.close()
    }
  })
}

for (const scheme of ['light', 'dark'] as const) {
  test(`the conflict dialog shows what a choice leaves of a conflict made inside another (${scheme})`, async ({
    page,
    cairn,
  }) => {
    const repo = hub.newRepo()
    const desktop = await otherMachine('desktop')
    try {
      const path = '/memories/prefs.md'
      const edit = async (core: Core, from: string, to: string) => {
        const { text } = await call(core, 'memory:read', { path })
        await call(core, 'memory:write', { path, content: text!.replace(from, to) })
      }
      await conflictOn(
        cairn.core,
        desktop.core,
        remoteOf(repo),
        path,
        'Editor: Vim\nTheme: dark\n',
        {
          desktop: 'Editor: Helix\nTheme: dark\n',
          laptop: 'Editor: Zed\nTheme: dark\n',
        },
      )
      await call(desktop.core, 'sync:now')
      // Both edit this machine's version inside the open block: the next merge nests.
      await edit(desktop.core, 'Editor: Zed\n', 'Editor: Zed 0.150\n')
      await call(desktop.core, 'sync:now')
      await edit(cairn.core, 'Editor: Zed\n', 'Editor: Zed, with vim keys\n')
      await call(cairn.core, 'sync:now')

      await page.emulateMedia({ colorScheme: scheme })
      await cairn.open(page)
      const sync = new SyncPage(page)
      await sync.indicator.getByRole('button', { name: /conflict/ }).click()
      const dialog = sync.conflictDialog
      await dialog.getByRole('button', { name: 'Keep laptop’s' }).click()
      await expect(dialog).toContainText(
        'prefs.md still holds a conflict a later sync made inside the version kept',
      )
      await expect(dialog.getByRole('figure', { name: /This machine · laptop/ })).toHaveText(
        /Editor: Zed, with vim keys/,
      )
      await expect(dialog.getByRole('figure', { name: /Other machine · desktop/ })).toHaveText(
        /Editor: Zed 0\.150/,
      )
      await shoot(page, cairn, `sync-conflict-nested-${scheme}`)
      await dialog.getByRole('button', { name: 'Keep laptop’s' }).click()
      await expect(dialog).toContainText('No conflicts left')
      const file = await call(cairn.core, 'memory:read', { path })
      expect(file.text).toBe('Editor: Zed, with vim keys\nTheme: dark\n')
    } finally {
      await desktop.close()
    }
  })
}

test('the conflict dialog saves text written by hand', async ({ page, cairn }) => {
  const repo = hub.newRepo()
  const desktop = await otherMachine('desktop')
  try {
    await conflictOn(cairn.core, desktop.core, remoteOf(repo), '/memories/me.md', 'Likes: tea\n', {
      desktop: 'Likes: coffee\n',
      laptop: 'Likes: green tea\n',
    })

    await cairn.open(page)
    const sync = new SyncPage(page)
    await sync.indicator.getByRole('button', { name: /conflict/ }).click()
    const dialog = sync.conflictDialog
    await dialog.getByRole('button', { name: 'Edit…' }).click()
    const text = dialog.getByRole('textbox', { name: 'The text to keep' })
    await expect(text).toHaveValue(/<<<<<<< laptop/)
    await expect(dialog).toContainText('still holds conflict markers')
    await text.fill('Likes: green tea, and coffee in the morning\n')
    await dialog.getByRole('button', { name: 'Save this text' }).click()
    await expect(dialog).toContainText('No conflicts left')
    const file = await call(cairn.core, 'memory:read', { path: '/memories/me.md' })
    expect(file.text).toBe('Likes: green tea, and coffee in the morning\n')
  } finally {
    await desktop.close()
  }
})

test('joining asks first, and merging keeps both memories', async ({ page, cairn }) => {
  const repo = hub.newRepo()
  const desktop = await otherMachine('desktop')
  try {
    await call(desktop.core, 'memory:write', { path: '/memories/desktop.md', content: 'd\n' })
    await call(desktop.core, 'sync:configure', remoteOf(repo))
    await call(desktop.core, 'sync:now')
    await call(cairn.core, 'memory:write', { path: '/memories/laptop.md', content: 'l\n' })
    await cairn.open(page)
    const sync = new SyncPage(page)
    await call(cairn.core, 'sync:configure', remoteOf(repo))
    await call(cairn.core, 'sync:now')
    // The question opens by itself; nothing has changed yet.
    await expect(sync.joinDialog).toBeVisible()
    await expect(sync.joinDialog).toContainText('desktop’s memory (1 file)')
    expect((await call(cairn.core, 'memory:tree')).map((e) => e.path)).toEqual([
      '/memories/laptop.md',
    ])
    await sync.joinDialog
      .getByRole('button', { name: /Merge this machine’s memory into it/ })
      .click()
    await expect(sync.joinDialog).toBeHidden()
    await expect(sync.indicator).toContainText('Synced')
    const files = (await call(cairn.core, 'memory:tree')).map((e) => e.path)
    expect(files.sort()).toEqual(['/memories/desktop.md', '/memories/laptop.md'])
  } finally {
    await desktop.close()
  }
})

test('export and import from Settings', async ({ page, cairn }) => {
  await call(cairn.core, 'memory:write', { path: '/memories/a.md', content: 'a\n' })
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-export-'))
  try {
    await cairn.open(page)
    const sync = new SyncPage(page)
    await sync.openSettings()
    const dialog = sync.settings.dialog
    cairn.host.answerDialog(path.join(dir, 'memory.bundle'))
    await dialog.getByRole('button', { name: 'Whole history (.bundle)' }).click()
    await expect(dialog.getByLabel('Export or import result')).toContainText(
      'saved as memory.bundle',
    )
    await expect(dialog.getByLabel('Export or import result')).not.toContainText(dir)

    await dialog.getByRole('button', { name: 'Paste a memory export…' }).click()
    const paste = page.getByRole('dialog', { name: 'Paste a memory export' })
    await paste
      .getByRole('textbox', { name: 'Memory export' })
      .fill('- Prefers tea\n- Lives in Lyon\n')
    await paste.getByRole('button', { name: 'Import' }).click()
    await expect(dialog.getByLabel('Export or import result')).toContainText(
      'Saved the pasted memory as /memories/imported-memory.md',
    )
    const file = await call(cairn.core, 'memory:read', { path: '/memories/imported-memory.md' })
    expect(file.text).toContain('- Lives in Lyon')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

for (const scheme of ['light', 'dark'] as const) {
  test(`the conflict dialog writes nothing over a file changed after Edit loaded it (${scheme})`, async ({
    page,
    cairn,
  }) => {
    const repo = hub.newRepo()
    const desktop = await otherMachine('desktop')
    try {
      await conflictOn(
        cairn.core,
        desktop.core,
        remoteOf(repo),
        '/memories/me.md',
        'Likes: tea\n',
        {
          desktop: 'Likes: coffee\n',
          laptop: 'Likes: green tea\n',
        },
      )

      await page.emulateMedia({ colorScheme: scheme })
      await cairn.open(page)
      const sync = new SyncPage(page)
      await sync.indicator.getByRole('button', { name: /conflict/ }).click()
      const dialog = sync.conflictDialog
      await dialog.getByRole('button', { name: 'Edit…' }).click()
      const text = dialog.getByRole('textbox', { name: 'The text to keep' })
      await expect(text).toHaveValue(/<<<<<<< laptop/)
      // Claude adds a line while the person writes.
      const loaded = await call(cairn.core, 'memory:read', { path: '/memories/me.md' })
      await call(cairn.core, 'memory:write', {
        path: '/memories/me.md',
        content: `${loaded.text!}Allergy: peanuts\n`,
      })
      await text.fill('Likes: green tea, and coffee in the morning\n')
      await dialog.getByRole('button', { name: 'Save this text' }).click()
      await expect(dialog).toContainText('changed after you opened it')
      await expect(text).toHaveValue('Likes: green tea, and coffee in the morning\n')
      await page.screenshot({ path: `e2e/artifacts/sync-conflict-changed-${scheme}.png` })
      const file = await call(cairn.core, 'memory:read', { path: '/memories/me.md' })
      expect(file.text).toContain('Allergy: peanuts')
    } finally {
      await desktop.close()
    }
  })
}
