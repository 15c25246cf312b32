import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createCore } from '../src/main/core'
import { attachCore } from './fixtures/harness'
import { expect, reply, strReplace, test } from './fixtures/claude-turns'
import { call } from './fixtures/machines'
import { ChatPage } from './pages/chat.page'
import { ReviewPanel } from './pages/review.page'

// Issue #15: a file edited with git by Ann Smith an hour ago was flagged "You edited this
// yourself" (under the title "You edited it recently") when Claude changed it; History names
// her, and so does the flag now, under a title true of anyone but Claude.
test('the review flag names the author of a recent edit made with git', async ({
  page,
  rendererServer,
  anthropic,
}) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-flag-author-'))
  const options = {
    appVersion: '0.1.0-e2e',
    env: { ANTHROPIC_API_KEY: 'sk-ant-test-key', ANTHROPIC_BASE_URL: anthropic.url },
    anthropicMaxRetries: 0,
    dataDir,
  }
  try {
    const first = await createCore(options)
    await call(first, 'memory:write', { path: '/memories/notes.md', content: 'Tea: green\n' })
    await first.close()
    const work = path.join(dataDir, 'memories')
    await writeFile(path.join(work, 'notes.md'), 'Tea: green\nCoffee: none, says Ann\n')
    const git = (...args: string[]) =>
      execFileSync(
        'git',
        ['--git-dir', path.join(dataDir, 'history.git'), '--work-tree', work, ...args],
        { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir } },
      )
    git('add', 'notes.md')
    git('-c', 'user.name=Ann Smith', '-c', 'user.email=ann@example.com', 'commit', '-qm', 'Coffee')

    const core = await createCore(options)
    const stop = await attachCore(page, core)
    try {
      await call(core, 'settings:update', { reviewMode: 'flagged' })
      anthropic.script(
        strReplace('/memories/notes.md', 'Coffee: none, says Ann', 'Coffee: black'),
        reply.text('Updated.'),
      )
      await page.goto(rendererServer.url)
      const chat = new ChatPage(page)
      await chat.send('I drink coffee black now')
      const card = chat.toolCard('str_replace', '/memories/notes.md')
      await expect(card).toContainText('Waiting for you')
      const flags = new ReviewPanel(page, card, '/memories/notes.md').flags()
      await expect(flags).toContainText(/Ann Smith edited this outside Cairn .* before this change/)
      await expect(flags).not.toContainText('You edited')
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme })
        await page.screenshot({ path: `e2e/artifacts/review-flag-outside-author-${scheme}.png` })
      }
    } finally {
      stop()
      await core.close()
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
})
