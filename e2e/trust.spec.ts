import { chmod, open, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { expect, test } from './fixtures/harness'
import { ChatPage } from './pages/chat.page'
import { HistoryPage } from './pages/history.page'
import { MemoryPage } from './pages/memory.page'

// Issue #9 on screen: what the person sees when an outside edit brought in a secret, when a
// file is too large to version, and when a version's stored copy is damaged.

const GITHUB_TOKEN = ['ghp', 'wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx'].join('_')

for (const scheme of ['light', 'dark'] as const) {
  test(`a secret edited in from outside can be removed from the file (${scheme})`, async ({
    page,
    cairn,
  }) => {
    await cairn.core.dispatch('memory:write', { path: '/memories/notes.md', content: 'notes\n' })
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const chat = new ChatPage(page)
    await expect(chat.composer).toBeFocused()
    // Another editor writes a token into the file; the watcher commits and scans the edit.
    const file = path.join(cairn.dataDir, 'memories', 'notes.md')
    await writeFile(file, `notes\ndeploy token: ${GITHUB_TOKEN}\n`)
    const notice = chat.pane.getByRole('status', { name: 'A secret was found in your memory' })
    await expect(notice).toContainText('/memories/notes.md was changed outside Cairn')
    await expect(notice).toContainText('GitHub Token')
    await expect(notice).not.toContainText(GITHUB_TOKEN)
    // A file too large to version, appearing while Cairn runs, is reported too.
    const big = await open(path.join(cairn.dataDir, 'memories', 'recording.wav'), 'w')
    await big.truncate(40 * 1024 * 1024)
    await big.close()
    const tooLarge = chat.pane.getByRole('status', { name: 'A file is not versioned' })
    await expect(tooLarge).toContainText('not versioned: too large')
    await page.screenshot({ path: `e2e/artifacts/notices-${scheme}.png` })

    await notice.getByRole('button', { name: 'Remove it from the file' }).click()
    const removed = chat.pane.getByRole('status', { name: 'Secret removed' })
    await expect(removed).toContainText('Removed the secret from /memories/notes.md')
    const { readFile } = await import('node:fs/promises')
    expect(await readFile(file, 'utf8')).toBe('notes\ndeploy token: [secret removed]\n')
    await tooLarge.getByRole('button', { name: 'Dismiss' }).click()
    await expect(tooLarge).toBeHidden()

    const memory = new MemoryPage(page)
    await memory.openFile('recording.wav')
    await expect(memory.pane).toContainText('This file is too large to show here')
  })

  test(`a version whose stored copy is damaged shows as damaged (${scheme})`, async ({
    page,
    cairn,
  }) => {
    await cairn.core.dispatch('memory:write', { path: '/memories/plan.md', content: 'step one\n' })
    await cairn.core.dispatch('memory:write', { path: '/memories/plan.md', content: 'step two\n' })
    // The stored copy of the first version is lost (a bad disk sector, a careless cleanup).
    const gitdir = path.join(cairn.dataDir, 'history.git')
    const blob = execFileSync('git', ['--git-dir', gitdir, 'rev-parse', 'main~1:plan.md'], {
      encoding: 'utf8',
    }).trim()
    const object = path.join(gitdir, 'objects', blob.slice(0, 2), blob.slice(2))
    await chmod(object, 0o644)
    await rm(object)

    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const history = new HistoryPage(page)
    await history.open()
    await history.select(history.row('plan.md').last())
    const diff = history.fileDiff('plan.md')
    await expect(diff.getByRole('note')).toContainText('damaged (missing or corrupt)')
    await page.screenshot({ path: `e2e/artifacts/history-damaged-${scheme}.png` })
  })
}
