import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundleSizes, bundleSources, type BundleSizes } from './bundle-sizes'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
let outDir = ''
let sizes: BundleSizes
let atStart: ReadonlyArray<string> = []
let later: ReadonlyArray<string> = []
const BUILD_TIMEOUT_MS = 280_000

// The renderer as the app ships it, built once into a temp folder with source maps (a build
// beside the rest of the suite on 2 cores can take minutes, hence the long wait).
beforeAll(async () => {
  outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bundle-'))
  const built = spawnSync(
    'npx',
    ['electron-vite', 'build', '--sourcemap', '--outDir', outDir, '--logLevel', 'error'],
    // Under the hook's 300 s: spawnSync blocks the worker, so only its own timeout can end a
    // build that hangs (the hook's timer never gets to fire).
    { cwd: repoRoot, encoding: 'utf8', timeout: BUILD_TIMEOUT_MS, killSignal: 'SIGKILL' },
  )
  if (built.error && (built.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') {
    throw new Error(`electron-vite build did not finish within ${BUILD_TIMEOUT_MS / 1000} s`)
  }
  if (built.status !== 0) throw new Error(`electron-vite build failed: ${built.stderr}`)
  const renderer = path.join(outDir, 'renderer')
  sizes = await bundleSizes(renderer)
  atStart = await bundleSources(renderer, sizes.initial, repoRoot)
  later = await bundleSources(renderer, sizes.lazy, repoRoot)
}, 300_000)
afterAll(() => fs.rmSync(outDir, { recursive: true, force: true, maxRetries: 10 }))

const renderer = 'src/renderer/src/'
/** What only later screens show: none of it may load with the first screen. */
const laterOnly = [
  `${renderer}features/history/FullHistoryView.tsx`,
  `${renderer}features/history/HistoryPane.tsx`,
  `${renderer}features/memory/ComparePanel.tsx`,
  `${renderer}components/DiffView.tsx`,
  `${renderer}components/BlameView.tsx`,
  `${renderer}components/PendingChangeView.tsx`,
  `${renderer}features/settings/SettingsDialog.tsx`,
  `${renderer}features/sync/SyncSettings.tsx`,
  `${renderer}features/sync/ConflictDialog.tsx`,
  `${renderer}features/sync/JoinDialog.tsx`,
  'node_modules/diff/',
  'node_modules/rehype-highlight/',
  'node_modules/highlight.js/',
]

describe('the renderer bundle (issue #15)', () => {
  it('starts the first screen: the chat and its conversation list load at start', () => {
    expect(sizes.initial.length).toBeGreaterThan(0)
    expect(atStart).toContain(`${renderer}features/chat/ChatPane.tsx`)
    expect(atStart).toContain(`${renderer}features/chat/ConversationSidebar.tsx`)
  })

  it.each(laterOnly)('leaves %s to the screen that needs it', (source) => {
    expect(atStart.filter((file) => file.startsWith(source))).toEqual([])
    expect(later.some((file) => file.startsWith(source))).toBe(true)
  })
})
