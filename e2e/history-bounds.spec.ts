import { execFileSync } from 'node:child_process'
import { chmod, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { call } from './fixtures/machines'
import { expect, shoot, test } from './fixtures/screens'
import { FullHistoryPage } from './pages/full-history.page'

// Issue #12 review: the history's screens on large and damaged histories. A full rewrite of
// an 8,000-line file froze the window for ~20 s; one damaged old version made every search
// and the blame of the file fail; "New file" read "You edited"; a long search text answered
// with a developer's message.

const lines = (tag: string, count: number) =>
  Array.from({ length: count }, (_, i) => `- ${tag} note ${i}: something worth keeping\n`).join('')

/** The loose object file of the version of `file` at `rev`, in the core's history. */
function objectOf(dataDir: string, rev: string, file: string): string {
  const gitDir = path.join(dataDir, 'history.git')
  const oid = execFileSync('git', ['--git-dir', gitDir, 'rev-parse', `${rev}:${file}`], {
    encoding: 'utf8',
  }).trim()
  return path.join(gitDir, 'objects', oid.slice(0, 2), oid.slice(2))
}

for (const scheme of ['light', 'dark'] as const) {
  test(`large changes stay readable: unpaired diff, drawn in parts, blame bounds (${scheme})`, async ({
    page,
    cairn,
  }) => {
    await call(cairn.core, 'memory:write', {
      path: '/memories/log.md',
      content: lines('old', 8_000),
    })
    await call(cairn.core, 'memory:write', {
      path: '/memories/log.md',
      content: lines('new', 8_000),
    })
    await call(cairn.core, 'memory:write', {
      path: '/memories/big.md',
      content: lines('big', 20_001),
      mustNotExist: true,
    })
    await call(cairn.core, 'memory:write', {
      path: '/memories/ideas.md',
      content: 'First idea.\n',
      mustNotExist: true,
    })
    await page.setViewportSize({ width: 1440, height: 900 })
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const history = new FullHistoryPage(page)
    await history.openWithKeyboard()

    // "New file" reads as a creation.
    await expect(history.row('You created ideas.md')).toHaveCount(1)

    await history.row('You edited log.md').click()
    await expect(history.title()).toHaveText('You edited log.md')
    await expect(history.detail.getByLabel('8000 added, 8000 removed')).toBeVisible()
    await expect(history.detail.getByRole('note')).toHaveText(
      'Too many changes to pair line by line: the whole old version is shown removed and the whole new version added.',
    )
    const diff = history.diffTable('/memories/log.md')
    await expect(diff.getByRole('row')).toHaveCount(2_000)
    await expect(history.detail).toContainText('Showing the first 2,000 of 16,000 lines')
    await shoot(page, cairn, `history-unpaired-${scheme}`)
    const more = history.detail.getByRole('button', { name: 'Show 2,000 more lines' })
    await more.scrollIntoViewIfNeeded()
    await shoot(page, cairn, `history-diff-more-${scheme}`)
    await more.click()
    await expect(diff.getByRole('row')).toHaveCount(4_000)
    await expect(history.detail).toContainText('Showing the first 4,000 of 16,000 lines')

    // Blame of the same file: 8,000 lines, drawn 2,000 at a time.
    await history.showAs('Blame')
    const blame = history.blame('/memories/log.md')
    await expect(blame.getByRole('row')).toHaveCount(2_000)
    await expect(history.detail).toContainText('Showing the first 2,000 of 8,000 lines.')

    // A file over the blame bounds says so in plain words.
    await history.row('You created big.md').click()
    // Said as a fact about the file, not as a failure to try again.
    await expect(history.detail.getByText('is too large to trace line by line')).toHaveText(
      '/memories/big.md is too large to trace line by line: Cairn traces files of up to 20,000 lines and 2 MB.',
    )
    await expect(history.detail.getByRole('button', { name: 'Retry' })).toHaveCount(0)

    // A file the change's answer left out (over its 2 MB of text) is traced only when asked.
    await writeFile(
      path.join(cairn.dataDir, 'memories', 'huge.md'),
      `${'x'.repeat(2_100_000)}\nend\n`,
    )
    const huge = history.row('huge.md was edited outside Cairn')
    await expect(huge).toHaveCount(1)
    await huge.click()
    await expect(history.detail).toContainText(
      'This file is large, so its lines were not traced with the others.',
    )
    await shoot(page, cairn, `history-blame-omitted-${scheme}`)
    await history.detail.getByRole('button', { name: 'Trace its lines' }).click()
    await expect(history.detail).toContainText(
      '/memories/huge.md is too large to trace line by line',
    )
    await shoot(page, cairn, `history-blame-too-large-${scheme}`)
  })

  test(`a damaged old version: search and blame go on and say so (${scheme})`, async ({
    page,
    cairn,
  }) => {
    await call(cairn.core, 'memory:write', { path: '/memories/n.md', content: 'one\ntwo\n' })
    await call(cairn.core, 'memory:write', { path: '/memories/n.md', content: 'one\nTWO\n' })
    await call(cairn.core, 'memory:write', { path: '/memories/n.md', content: 'one\nthree\n' })
    const lost = objectOf(cairn.dataDir, 'main~2', 'n.md')
    await chmod(lost, 0o644)
    await rm(lost)
    await page.setViewportSize({ width: 1440, height: 900 })
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const history = new FullHistoryPage(page)
    await history.openWithKeyboard()

    await history.find('three')
    await expect(history.searchProgress).toContainText('1 change added or removed')
    await expect(history.view.getByRole('note')).toHaveText(
      "2 changes could not be searched: the history's copy of a version they touched is damaged, so the text may have been added or removed there.",
    )
    await history.hits.getByRole('option').click()
    await history.showAs('Blame')
    const blame = history.blame('/memories/n.md')
    await expect(blame.getByRole('row')).toHaveCount(2)
    await expect(history.detail.getByRole('note')).toHaveText(
      'An older version of this file is damaged in the history, so tracing stopped there: one line may be older than the change shown beside it.',
    )
    await shoot(page, cairn, `history-damaged-${scheme}`)

    // The search box stops at the limit the search has.
    await history.search.fill('x'.repeat(1_001))
    await expect(history.search).toHaveValue('x'.repeat(1_000))
  })
}
