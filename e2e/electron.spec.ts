import { _electron as electron, expect, test } from '@playwright/test'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

/** The Electron binary the `electron` package would run, if one was ever downloaded here. */
function electronBinary(): string | null {
  const packageDir = path.resolve('node_modules/electron')
  const pathFile = path.join(packageDir, 'path.txt')
  if (!existsSync(pathFile)) return null
  const binary = path.join(packageDir, 'dist', readFileSync(pathFile, 'utf8').trim())
  return existsSync(binary) ? binary : null
}

const binary = electronBinary()

if (binary === null) {
  // Reported as a skip, never a silent pass: this machine cannot run Electron.
  test.skip('Electron app launch: SKIPPED, no Electron binary on this machine', () => {})
} else {
  test('launches the real Electron app and shows the shell with data from main', async () => {
    const userData = await mkdtemp(path.join(os.tmpdir(), 'cairn-electron-'))
    const app = await electron.launch({
      executablePath: binary,
      args: ['.', '--no-sandbox'],
      env: { ...process.env, CAIRN_DATA_DIR: userData } as Record<string, string>,
    })
    try {
      const window = await app.firstWindow()
      await expect(window.getByRole('region', { name: 'About' })).toContainText('Cairn')
      const nodeInPage = await window.evaluate(
        () => typeof (window as unknown as { require?: unknown }).require,
      )
      expect(nodeInPage).toBe('undefined')
    } finally {
      await app.close()
      await rm(userData, { recursive: true, force: true })
    }
  })
}
