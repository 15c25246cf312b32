import { execFileSync } from 'node:child_process'
import { lstatSync } from 'node:fs'
import { chmod, open as openFile, readdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { nodeDisk, setDisk } from '../src/main/lib/disk'
import { asTheAccount, errnoError, hookDisk } from '../src/main/lib/disk-hooks'
import type { Cairn } from './fixtures/harness'
import { expect, shoot, test } from './fixtures/screens'
import { HistoryPage } from './pages/history.page'
import { MemoryPage } from './pages/memory.page'

// Review hunt10-app D1: a delete or restore that keeps aside a file History holds no copy of
// (one over 32 MB) promised "its history is kept" and answered "Nothing changed." or a
// restore's own words. The window now says before and after where the file goes.

/** A sparse file over the 32 MB History versions (instant, takes no disk space). */
async function tooLarge(cairn: Cairn, name: string): Promise<void> {
  const handle = await openFile(path.join(cairn.dataDir, 'memories', name), 'w')
  await handle.truncate(33 * 1024 * 1024)
  await handle.close()
}

for (const scheme of ['light', 'dark'] as const) {
  test(`deleting a file History keeps no copy of says it is kept aside (${scheme})`, async ({
    page,
    cairn,
  }) => {
    await cairn.core.dispatch('memory:write', { path: '/memories/small.md', content: 'x\n' })
    await tooLarge(cairn, 'big.log')
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const memory = new MemoryPage(page)
    await memory.openFile('big.log')
    await memory.fileActions().getByRole('button', { name: 'Delete' }).click()
    await expect(memory.dialog).toContainText('History has no copy of /memories/big.log')
    await expect(memory.dialog).toContainText('kept in its folder as big (not in history).log')
    await expect(memory.dialog).not.toContainText('its history is kept')
    await shoot(page, cairn, `kept-aside-delete-dialog-${scheme}`)
    await memory.dialog.getByRole('button', { name: 'Delete' }).click()
    await expect(memory.notice).toHaveText(
      'History has no copy of big.log, so it was kept as “big (not in history).log”.',
    )
    await expect(memory.notice).not.toContainText('Nothing changed')
    // The notice about the file that cannot be versioned names it where it is now.
    await expect(
      page
        .getByRole('main', { name: 'Chat' })
        .getByRole('status', { name: 'A file is not versioned' }),
    ).toHaveText(/^A file is not versioned\/memories\/big \(not in history\)\.log is not versioned/)
    // No commit was made, yet the tree shows the file under its new name.
    await expect(memory.item('big (not in history).log')).toBeVisible()
    await expect(memory.item('big.log')).toHaveCount(0)
    await shoot(page, cairn, `kept-aside-delete-notice-${scheme}`)
    expect((await readdir(path.join(cairn.dataDir, 'memories'))).sort()).toEqual([
      'big (not in history).log',
      'small.md',
    ])
  })
}

test('a restore over a file History keeps no copy of names where it went', async ({
  page,
  cairn,
}) => {
  await cairn.core.dispatch('memory:write', { path: '/memories/a.md', content: 'v1\n' })
  await cairn.core.dispatch('memory:write', { path: '/memories/a.md', content: 'v2\n' })
  await tooLarge(cairn, 'a.md')
  await cairn.open(page)
  const history = new HistoryPage(page)
  await history.open()
  await expect(history.rows).toHaveCount(2)
  await history.select(history.rows.nth(1))
  await history.fileDiff('a.md').getByRole('button', { name: 'Restore this version' }).click()
  await expect(history.dialog).toContainText('kept beside it as “a (not in history).md”')
  await history.dialog.getByRole('button', { name: 'Restore file' }).click()
  await expect(history.notice).toContainText(
    'History has no copy of a.md, so it was kept as “a (not in history).md”. This can be undone.',
  )
  await shoot(page, cairn, 'kept-aside-restore-notice')
  expect((await readdir(path.join(cairn.dataDir, 'memories'))).sort()).toEqual([
    'a (not in history).md',
    'a.md',
  ])
})

// Review12-story item 4: a file kept aside because Cairn may not read it was said to be one
// "History has no copy of", though its last readable version is there.
for (const scheme of ['light', 'dark'] as const) {
  test(`deleting a file Cairn may not read says so, not "no copy" (${scheme})`, async ({
    page,
    cairn,
  }) => {
    await cairn.core.dispatch('memory:write', { path: '/memories/private.md', content: 'v1\n' })
    const memories = path.join(cairn.dataDir, 'memories')
    await writeFile(path.join(memories, 'private.md'), 'v2, saved by another account\n')
    // Another account's file (mode 000). The core runs in this process as root, who reads
    // everything: it looks like uid 4242, and the disk seam denies what the system would.
    execFileSync('chown', ['-R', '4242:4242', memories])
    await chmod(path.join(memories, 'private.md'), 0o000)
    const hooked = hookDisk(
      nodeDisk,
      asTheAccount((call) => {
        if (call.name !== 'openSync') return undefined
        const target = String(call.args[0])
        const mode = lstatSync(target, { throwIfNoEntry: false })?.mode ?? 0o777
        return mode & 0o444 ? undefined : errnoError(call, 'EACCES')
      }),
    )
    const undoDisk = setDisk(hooked.disk)
    const getuid = process.getuid
    process.getuid = () => 4242
    try {
      await page.emulateMedia({ colorScheme: scheme })
      await cairn.open(page)
      const memory = new MemoryPage(page)
      await memory.item('private.md').click()
      await memory.fileActions().getByRole('button', { name: 'Delete' }).click()
      await expect(memory.dialog).toContainText('Cairn may not read /memories/private.md')
      await expect(memory.dialog).not.toContainText('History has no copy')
      await shoot(page, cairn, `kept-aside-unreadable-dialog-${scheme}`)
      await memory.dialog.getByRole('button', { name: 'Delete' }).click()
      // Its path's last version is in History (the delete is a commit, undoable); what the
      // file holds now was kept aside.
      await expect(memory.notice).toContainText(
        'Cairn may not read private.md (permission denied), so it was kept as “private (unreadable).md”; History keeps its last version Cairn could read.',
      )
      await expect(memory.notice).not.toContainText('History has no copy')
      await shoot(page, cairn, `kept-aside-unreadable-notice-${scheme}`)
    } finally {
      process.getuid = getuid
      undoDisk()
    }
    await chmod(path.join(memories, 'private (unreadable).md'), 0o644)
    expect((await readdir(memories)).sort()).toEqual(['private (unreadable).md'])
  })
}

// notices27: the delete dialog of a file Cairn had kept aside already (`… (not in history).log`,
// Cairn's own label) predicted "will be kept in its folder as" its own name, and the core then
// refused: "kept aside already; Cairn does not delete it". The dialog says so before, and
// offers no Delete that can only fail. Opened and answered with the keyboard.
for (const scheme of ['light', 'dark'] as const) {
  test(`a file Cairn kept aside already is not offered a delete that can only fail (${scheme})`, async ({
    page,
    cairn,
  }) => {
    await cairn.core.dispatch('memory:write', { path: '/memories/small.md', content: 'x\n' })
    await tooLarge(cairn, 'big (not in history).log')
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const memory = new MemoryPage(page)
    await memory.item('big (not in history).log').focus()
    await page.keyboard.press('Enter')
    const remove = memory.fileActions().getByRole('button', { name: 'Delete' })
    await remove.focus()
    await page.keyboard.press('Enter')
    await expect(memory.dialog).toContainText(
      'Cairn kept /memories/big (not in history).log aside already',
    )
    await expect(memory.dialog).toContainText('Cairn does not delete it')
    await expect(memory.dialog).not.toContainText('will be kept')
    await expect(memory.dialog.getByRole('button', { name: 'Delete' })).toHaveCount(0)
    const close = memory.dialog.getByRole('button', { name: 'Close' })
    await expect(close).toBeFocused()
    await shoot(page, cairn, `kept-aside-already-dialog-${scheme}`)
    await page.keyboard.press('Enter')
    await expect(memory.dialog).toHaveCount(0)
    // rnotices27: the keyboard goes on from the Delete button that opened the dialog.
    await expect(remove).toBeFocused()
    // Nothing was asked of the core, so nothing failed and nothing moved.
    await expect(memory.notice).toHaveCount(0)
    expect((await readdir(path.join(cairn.dataDir, 'memories'))).sort()).toEqual([
      'big (not in history).log',
      'small.md',
    ])
  })
}

// Stop 28: the dialog for a file kept aside already gave "too large to version" as the only
// reason History had no copy; a name History cannot track (a tab in it) is kept aside too.
for (const scheme of ['light', 'dark'] as const) {
  test(`a file kept aside already for its name is said to be so for its name (${scheme})`, async ({
    page,
    cairn,
  }) => {
    await writeFile(
      path.join(cairn.dataDir, 'memories', 'tab\tname (not in history).md'),
      'a tab in its name\n',
    )
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const memory = new MemoryPage(page)
    await memory.openFile('tab\\tname (not in history).md')
    await memory.fileActions().getByRole('button', { name: 'Delete' }).click()
    await expect(memory.dialog).toContainText(
      'Cairn kept /memories/tab\\tname (not in history).md aside already: History has no copy of it (its name cannot be tracked: it holds a line break, a tab, another control character or a backslash)',
    )
    await expect(memory.dialog).toContainText('Rename it in your file manager to version it')
    await expect(memory.dialog).not.toContainText('too large')
    await expect(memory.dialog.getByRole('button', { name: 'Delete' })).toHaveCount(0)
    await shoot(page, cairn, `kept-aside-already-name-dialog-${scheme}`)
    await memory.dialog.getByRole('button', { name: 'Close' }).click()
    await expect(memory.dialog).toHaveCount(0)
  })
}
