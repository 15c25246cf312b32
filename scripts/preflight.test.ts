import { spawnSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { nodeIsRecentEnough, preflight, REQUIRED_NODE, wrap } from './preflight.mjs'

const script = path.resolve(__dirname, 'preflight.mjs')
const newNode = 'v22.12.0'

let project = ''
afterEach(async () => {
  if (project) await rm(project, { recursive: true, force: true })
  project = ''
})

/**
 * A project folder like a fresh clone after `npm install` where Electron's binary never came:
 * node_modules/electron holds the package (and an installer), no path.txt, no dist/.
 */
async function freshInstall(options: { installer?: string; binary?: boolean } = {}) {
  project = await mkdtemp(path.join(os.tmpdir(), 'cairn-preflight-'))
  await writeFile(path.join(project, 'package.json'), '{"name":"cairn","type":"module"}\n')
  await mkdir(path.join(project, 'scripts'))
  await copyFile(script, path.join(project, 'scripts', 'preflight.mjs'))
  const electron = path.join(project, 'node_modules', 'electron')
  await mkdir(electron, { recursive: true })
  await writeFile(
    path.join(electron, 'package.json'),
    '{"name":"electron","version":"45.5.0","main":"index.js"}\n',
  )
  if (options.installer !== undefined) {
    await writeFile(path.join(electron, 'install.js'), options.installer)
  }
  if (options.binary) {
    await mkdir(path.join(electron, 'dist'))
    await writeFile(path.join(electron, 'dist', 'electron'), '#!/bin/sh\n')
    await chmod(path.join(electron, 'dist', 'electron'), 0o755)
    await writeFile(path.join(electron, 'path.txt'), 'electron')
  }
  return electron
}

// What Electron's installer prints when github.com cannot be reached.
const failingInstaller = `console.error(new TypeError('fetch failed').stack); process.exit(1)\n`

describe('the preflight of npm start / npm run dev', () => {
  it('with no Electron binary: exits non-zero with the plain message and no stack', async () => {
    await freshInstall()
    const env: NodeJS.ProcessEnv = { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1' }
    delete env['ELECTRON_OVERRIDE_DIST_PATH']
    const run = spawnSync(process.execPath, [path.join(project, 'scripts', 'preflight.mjs')], {
      cwd: project,
      env,
      encoding: 'utf8',
    })
    expect(run.status).toBe(1)
    const said = run.stderr.replace(/\s+/g, ' ')
    expect(said).toContain('Cairn cannot start yet.')
    expect(said).toContain("Electron's program is missing")
    expect(said).toContain("downloaded from Electron's releases on GitHub")
    expect(said).toContain('ELECTRON_SKIP_BINARY_DOWNLOAD is set')
    expect(said).toContain('run `npx install-electron` in this folder')
    // Commands are never broken across lines.
    expect(run.stderr).toContain('`npx install-electron`')
    if (nodeIsRecentEnough(process.version)) expect(said).not.toContain('Node.js 22.12')
    else expect(said).toContain(`Cairn needs Node.js ${REQUIRED_NODE} or newer`)
    expect(run.stderr).not.toMatch(/^\s+at /m)
    expect(run.stderr).not.toMatch(/Error:|node:internal|\.js:\d+/)
    expect(run.stdout).toBe('')
  })

  it('passes quietly where Node is recent enough and the binary is there', async () => {
    const electron = await freshInstall({ binary: true })
    expect(
      preflight({ nodeVersion: newNode, projectDir: project, env: {}, download: () => 'unused' }),
    ).toEqual([])
    // ELECTRON_OVERRIDE_DIST_PATH points elsewhere, as electron/index.js honours it.
    expect(
      preflight({
        nodeVersion: newNode,
        projectDir: project,
        env: { ELECTRON_OVERRIDE_DIST_PATH: path.join(electron, 'nowhere') },
        download: () => 'offline',
      }),
    ).toHaveLength(1)
  })

  it('downloads the missing binary once and then passes', async () => {
    const electron = await freshInstall()
    const downloads: string[] = []
    const problems = preflight({
      nodeVersion: newNode,
      projectDir: project,
      env: {},
      download: (packageDir) => {
        downloads.push(packageDir)
        mkdirSync(path.join(packageDir, 'dist'))
        writeFileSync(path.join(packageDir, 'dist', 'electron'), '', { mode: 0o755 })
        writeFileSync(path.join(packageDir, 'path.txt'), 'electron')
        return null
      },
    })
    expect(problems).toEqual([])
    expect(downloads).toEqual([electron])
  })

  it('explains a failed download by its reason, without the installer’s stack', async () => {
    await freshInstall({ installer: failingInstaller })
    const said: string[] = []
    // The real installer path: Electron's install.js (here one that fails like it does offline).
    const problems = preflight({
      nodeVersion: newNode,
      projectDir: project,
      env: {},
      say: (text) => said.push(text),
    })
    expect(said).toEqual(['Downloading Electron 45.5.0 (once, about 100 MB)…'])
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain('Cairn just tried to download it, and that failed (fetch failed)')
    expect(problems[0]).toContain(
      'Run `npx install-electron` in this folder where github.com can be reached',
    )
    expect(problems[0]).not.toMatch(/TypeError|\bat /)
  })

  it('asks for npm install when the electron package itself is absent', async () => {
    project = await mkdtemp(path.join(os.tmpdir(), 'cairn-preflight-'))
    await writeFile(path.join(project, 'package.json'), '{}\n')
    const problems = preflight({ nodeVersion: newNode, projectDir: project, env: {} })
    expect(problems).toEqual([
      "Cairn's dependencies are not installed: there is no node_modules/electron. Run `npm install` in this folder, then `npm start` again.",
    ])
  })

  it('names the Node.js version it needs, and does not try a download with an older one', async () => {
    await freshInstall({ installer: failingInstaller })
    const problems = preflight({
      nodeVersion: 'v20.20.2',
      projectDir: project,
      env: {},
      download: () => {
        throw new Error('must not download')
      },
    })
    expect(problems).toHaveLength(2)
    expect(problems[0]).toContain(
      'Cairn needs Node.js 22.12.0 or newer, and this is Node.js 20.20.2',
    )
    expect(problems[0]).toContain('`nvm install 22`')
    expect(problems[1]).toContain('Its installer needs the newer Node.js too.')
    expect(problems[1]).toContain('Once Node.js is updated, `npm start` downloads it by itself.')
  })
})

describe('nodeIsRecentEnough', () => {
  it('compares major, minor and patch', () => {
    for (const ok of ['v22.12.0', 'v22.12.1', 'v22.13.0', 'v23.0.0', 'v24.4.1', 'v100.0.0']) {
      expect(nodeIsRecentEnough(ok), ok).toBe(true)
    }
    for (const old of ['v20.20.2', 'v22.11.9', 'v22.2.0', 'v18.0.0', 'v9.99.99']) {
      expect(nodeIsRecentEnough(old), old).toBe(false)
    }
  })
})

describe('wrap', () => {
  it('breaks a paragraph into lines of at most the width, keeping every word', () => {
    const text = 'one two three four five six seven eight nine ten eleven twelve'
    const wrapped = wrap(text, 20)
    expect(wrapped.split('\n').every((line) => line.length <= 20)).toBe(true)
    expect(wrapped.replace(/\n/g, ' ')).toBe(text)
  })

  it('keeps a `command` on one line', () => {
    const wrapped = wrap('then run `npm install && npm start` again.', 16)
    expect(wrapped.split('\n')).toContain('`npm install && npm start`')
  })
})
