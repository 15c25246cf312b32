import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createCore } from '../src/main/core'
import { attachCore, expect, test } from './fixtures/harness'
import { shootBoth } from './fixtures/screens'
import { call } from './fixtures/machines'
import { FullHistoryPage } from './pages/full-history.page'

// Issue #12's acceptance probe: a commit made with git in Cairn's repository read as
// "Cairn saved g.md, found changed when it started", and blame gave its line to Cairn. The
// History screen names its author, outside Cairn.
for (const scheme of ['light', 'dark'] as const) {
  test(`a commit made with git reads as its author's, outside Cairn (${scheme})`, async ({
    page,
    rendererServer,
  }) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-outside-'))
    const options = { appVersion: '0.1.0-e2e', env: {}, dataDir }
    try {
      const first = await createCore(options)
      await call(first, 'memory:write', { path: '/memories/g.md', content: 'first\nsecond\n' })
      await first.close()
      // Someone commits straight into Cairn's repository with git, Cairn closed.
      const work = path.join(dataDir, 'memories')
      await writeFile(path.join(work, 'g.md'), 'first\nsecond, as Ann had it\n')
      const git = (...args: string[]) =>
        execFileSync(
          'git',
          ['--git-dir', path.join(dataDir, 'history.git'), '--work-tree', work, ...args],
          { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir } },
        )
      git('add', 'g.md')
      git('-c', 'user.name=Ann Smith', '-c', 'user.email=ann@example.com', 'commit', '-qm', 'Fix')

      const core = await createCore(options)
      const stop = await attachCore(page, core)
      try {
        await page.setViewportSize({ width: 1280, height: 800 })
        await page.emulateMedia({ colorScheme: scheme })
        await page.goto(rendererServer.url)
        const history = new FullHistoryPage(page)
        await expect(page.getByRole('main', { name: 'Chat' })).toBeVisible()
        await history.openWithKeyboard()
        const row = history.row('Ann Smith edited g.md outside Cairn')
        await expect(row).toHaveCount(1)
        await expect(history.row(/found changed when it started/)).toHaveCount(0)
        await row.click()
        await expect(history.title()).toHaveText('Ann Smith edited g.md outside Cairn')
        await history.showAs('Blame')
        const blame = history.blame('/memories/g.md')
        await expect(blame.getByRole('row').nth(1)).toContainText('Ann Smith (outside Cairn)')
        await expect(blame.getByRole('row').nth(0)).toContainText('You')
        await page.screenshot({ path: `e2e/artifacts/history-outside-author-${scheme}.png` })
      } finally {
        stop()
        await core.close()
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })
}

// Issue #15: an author with an email but no name (git refuses one; other tools write them)
// read as "Outside Cairn", as if nobody were known. The email stands for the name.
test('a commit whose author has only an email is shown by that email', async ({
  page,
  rendererServer,
}) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-nameless-'))
  const options = { appVersion: '0.1.0-e2e', env: {}, dataDir }
  try {
    const first = await createCore(options)
    await call(first, 'memory:write', { path: '/memories/g.md', content: 'first\n' })
    await first.close()
    const work = path.join(dataDir, 'memories')
    await writeFile(path.join(work, 'g.md'), 'first\nfrom a tool\n')
    const git = (args: string[], input?: string) =>
      execFileSync(
        'git',
        ['--git-dir', path.join(dataDir, 'history.git'), '--work-tree', work, ...args],
        { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir }, input },
      )
        .toString()
        .trim()
    git(['add', 'g.md'])
    const tree = git(['write-tree'])
    const parent = git(['rev-parse', 'main'])
    const when = `${Math.floor(Date.now() / 1000)} +0000`
    // `git commit` refuses an empty name, so the commit is written as such a tool writes it.
    const commit = git(
      ['hash-object', '-w', '--literally', '-t', 'commit', '--stdin'],
      `tree ${tree}\nparent ${parent}\nauthor  <tool@example.com> ${when}\ncommitter  <tool@example.com> ${when}\n\nSync\n`,
    )
    git(['update-ref', 'refs/heads/main', commit])
    expect(git(['log', '-1', '--format=%an|%ae'])).toBe('|tool@example.com')

    const core = await createCore(options)
    const stop = await attachCore(page, core)
    try {
      await page.setViewportSize({ width: 1280, height: 800 })
      await page.goto(rendererServer.url)
      const history = new FullHistoryPage(page)
      await expect(page.getByRole('main', { name: 'Chat' })).toBeVisible()
      await history.openWithKeyboard()
      const row = history.row('tool@example.com edited g.md outside Cairn')
      await expect(row).toHaveCount(1)
      await row.click()
      await expect(history.title()).toHaveText('tool@example.com edited g.md outside Cairn')
      await shootBoth(page, { dataDir }, 'history-nameless-author')
    } finally {
      stop()
      await core.close()
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
})
