import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { EventName, EventMap } from '../src/shared/contract'
import { createCore, type Core } from '../src/main/core'
import { attachCore, expect, test } from './fixtures/harness'
import { call } from './fixtures/machines'

// Issue #15: a history of thousands of commits put in place with git while the window is open
// took seconds to follow, the window silent. The sidebar now says how far Cairn is, and the
// line goes when the follow ends.

/**
 * The core as the page sees it, with the follow's reports held back once one has counted
 * some commits, until `release`: the window then stays on a count part way, long enough to
 * look at, whatever the speed of this machine. Every other event passes as it comes.
 */
function holdingFollow(core: Core): { readonly core: Core; release(): void } {
  let holding = false
  let released = false
  const held: Array<() => void> = []
  const gated: Core = {
    ...core,
    dispatch: core.dispatch,
    close: () => core.close(),
    events: {
      emit: (name, data) => core.events.emit(name, data),
      on: (listener) =>
        core.events.on(<E extends EventName>(name: E, data: EventMap[E]) => {
          if (name !== 'history:following' || released) return listener(name, data)
          if (holding) return void held.push(() => listener(name, data))
          const progress = data as EventMap['history:following']
          if (progress.done > 0 && !progress.ended) holding = true
          listener(name, data)
        }),
    },
  }
  return {
    core: gated,
    release() {
      released = true
      for (const tell of held.splice(0)) tell()
    },
  }
}

/** Adds `count` commits on top of `main` with `git fast-import`, as someone at a terminal. */
function gitAdds(dataDir: string, count: number): void {
  const chunks: string[] = []
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`
  for (let i = 1; i <= count; i++) {
    const person = `Ann Smith <ann@example.com> ${1_700_000_000 + i} +0000`
    chunks.push(
      `commit refs/heads/main\nauthor ${person}\ncommitter ${person}\n`,
      data(`note ${i}\n`),
      i === 1 ? 'from refs/heads/main^0\n' : '',
      `M 100644 inline notes/n-${i % 40}.md\n`,
      data(`revision ${i}\n`),
    )
  }
  execFileSync('git', ['--git-dir', path.join(dataDir, 'history.git'), 'fast-import', '--quiet'], {
    input: chunks.join(''),
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir },
  })
}

for (const scheme of ['light', 'dark'] as const) {
  test(`the sidebar counts the commits git added while Cairn takes them in (${scheme})`, async ({
    page,
    rendererServer,
  }) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-follow-'))
    try {
      const core = await createCore({ appVersion: '0.1.0-e2e', env: {}, dataDir })
      const gate = holdingFollow(core)
      const stop = await attachCore(page, gate.core)
      try {
        await call(core, 'memory:write', { path: '/memories/plan.md', content: 'plan\n' })
        await page.setViewportSize({ width: 1280, height: 800 })
        await page.emulateMedia({ colorScheme: scheme })
        await page.goto(rendererServer.url)
        await expect(page.getByRole('main', { name: 'Chat' })).toBeVisible()
        const line = page
          .getByRole('navigation', { name: 'Conversations' })
          .getByRole('status', { name: 'Taking in commits made with git' })
        await expect(line).toHaveCount(0)

        // With the window open, 2,000 commits are put on main with git; the next change
        // takes them in first.
        gitAdds(dataDir, 2_000)
        const saved = call(core, 'memory:write', { path: '/memories/after.md', content: 'x\n' })
        await expect(line).toHaveText(/^Reading [\d,]+ of 2,000 commits git added…$/)
        const [, done] = /Reading ([\d,]+) of/.exec((await line.textContent()) ?? '')!
        expect(Number(done!.replace(/,/g, ''))).toBeGreaterThan(0)
        await page.screenshot({ path: `e2e/artifacts/follow-progress-${scheme}.png` })

        gate.release()
        await saved
        await expect(line).toHaveCount(0)
        const count = execFileSync(
          'git',
          ['--git-dir', path.join(dataDir, 'history.git'), 'rev-list', '--count', 'main'],
          { encoding: 'utf8' },
        )
        expect(Number(count.trim())).toBeGreaterThanOrEqual(2_002)
      } finally {
        stop()
        await core.close()
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true })
    }
  })
}
