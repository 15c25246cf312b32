import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createCore } from '../src/main/core'
import { attachCore, expect, test } from './fixtures/harness'

// Review hunt10-app D5: the start-up report (a damaged history set aside, and where) was
// replaced by the next report, a moment later, when an editor saved a file in the memory
// folder: the only place that said where the old history went was gone before it was read.
for (const scheme of ['light', 'dark'] as const) {
  test(`the start-up recovery notice stays when outside edits are saved (${scheme})`, async ({
    page,
    rendererServer,
  }) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-recovery-'))
    await mkdir(path.join(dataDir, 'memories'))
    await writeFile(path.join(dataDir, 'memories', 'notes.md'), 'old notes\n')
    // A history that cannot be read: it is set aside and a new one begins.
    await mkdir(path.join(dataDir, 'history.git'))
    await writeFile(path.join(dataDir, 'history.git', 'HEAD'), 'garbage')
    // Quiet: the damaged history is expected here, not a fault to print.
    const logger = { warn: () => {}, error: () => {} }
    const core = await createCore({ appVersion: '0.1.0-e2e', env: {}, dataDir, logger })
    const stop = await attachCore(page, core)
    try {
      await page.emulateMedia({ colorScheme: scheme })
      await page.goto(rendererServer.url)
      const chat = page.getByRole('main', { name: 'Chat' })
      const rebuilt = chat.getByRole('status', { name: 'Memory history was rebuilt' })
      await expect(rebuilt).toContainText('set aside')

      await writeFile(path.join(dataDir, 'memories', 'todo.md'), 'buy milk\n')
      const outside = chat.getByRole('status', { name: 'Edits made outside Cairn saved' })
      await expect(outside).toBeVisible()
      await expect(rebuilt).toContainText('set aside')
      await page.screenshot({ path: `e2e/artifacts/recovery-notices-${scheme}.png` })

      // Each is dismissed on its own.
      await outside.getByRole('button', { name: 'Dismiss' }).click()
      await expect(outside).toBeHidden()
      await expect(rebuilt).toBeVisible()
      // A dismissal is kept by the core: reloaded, the window shows the report still standing
      // (the same answer that would bring the other back) and not the dismissed one.
      await expect
        .poll(async () => core.dispatch('app:recoveries', undefined))
        .toMatchObject({ ok: true, value: [{ kind: 'history-rebuilt' }] })
      await page.reload()
      await expect(rebuilt).toContainText('set aside')
      await expect(outside).toHaveCount(0)
      await rebuilt.getByRole('button', { name: 'Dismiss' }).click()
      await expect(rebuilt).toBeHidden()
      await expect
        .poll(async () => core.dispatch('app:recoveries', undefined))
        .toEqual({ ok: true, value: [] })
    } finally {
      stop()
      await core.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
}

// An edit made outside Cairn and saved before the window listened (in the first moments, as
// the window loads) was told only as an event no page heard: its banner never showed. The
// window asks the core for the reports so far when it starts.
test('outside edits saved before the window listens are still told', async ({ page, cairn }) => {
  const told = new Promise<void>((resolve) => {
    const stop = cairn.core.events.on((name) => {
      if (name !== 'app:recovery') return
      stop()
      resolve()
    })
  })
  await writeFile(path.join(cairn.dataDir, 'memories', 'early.md'), 'saved before the window\n')
  await told
  await cairn.open(page)
  const chat = page.getByRole('main', { name: 'Chat' })
  const outside = chat.getByRole('status', { name: 'Edits made outside Cairn saved' })
  await expect(outside).toContainText(
    'early.md was edited outside Cairn and saved to the history as its own change.',
  )
  // Told once, and a later one of the same kind takes its place.
  await writeFile(path.join(cairn.dataDir, 'memories', 'later.md'), 'saved while it listens\n')
  await expect(outside).toContainText('later.md was edited outside Cairn')
  await expect(outside).toHaveCount(1)
  await outside.getByRole('button', { name: 'Dismiss' }).click()
  await expect(outside).toBeHidden()
})
