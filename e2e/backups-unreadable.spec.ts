import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, test } from './fixtures/harness'
import { shoot } from './fixtures/screens'
import { SyncPage } from './pages/sync.page'

// The list of memory kept aside cannot be read (a file where refs/cairn goes): Settings → Sync
// says so as an error, rather than showing no backups.
for (const scheme of ['light', 'dark'] as const) {
  test(`an unreadable list of memory kept aside is said (${scheme})`, async ({ page, cairn }) => {
    const refs = path.join(cairn.dataDir, 'history.git', 'refs', 'cairn')
    await rm(refs, { recursive: true, force: true })
    await writeFile(refs, 'not a folder\n')
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const sync = new SyncPage(page)
    await sync.openSettings()
    const said = sync.settings.dialog.getByLabel('Memory kept aside')
    await expect(said).toContainText('cannot be listed because a file is in the way of a folder')
    await said.scrollIntoViewIfNeeded()
    await shoot(page, cairn, `backups-unreadable-${scheme}`)
  })
}
