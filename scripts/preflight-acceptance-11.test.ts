/**
 * The preflight against what Electron itself will do next: where the preflight passes,
 * `electron/index.js` (the real one, copied into the fake install) finds its program; where a
 * `path.txt` or the program is broken so that Electron would fail with its raw stack, the
 * preflight says so in a plain paragraph first.
 */
import { spawnSync } from 'node:child_process'
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { preflight } from './preflight.mjs'

const newNode = 'v22.12.0'
const realElectronIndex = path.resolve(__dirname, '..', 'node_modules', 'electron', 'index.js')

let project = ''
afterEach(async () => {
  if (project) await rm(project, { recursive: true, force: true })
  project = ''
})

/** A project whose node_modules/electron has Electron's own index.js and an offline installer. */
async function installWithBinary(): Promise<string> {
  project = await mkdtemp(path.join(os.tmpdir(), 'cairn-preflight-11-'))
  await writeFile(path.join(project, 'package.json'), '{"name":"cairn"}\n')
  const electron = path.join(project, 'node_modules', 'electron')
  await mkdir(path.join(electron, 'dist'), { recursive: true })
  await writeFile(
    path.join(electron, 'package.json'),
    '{"name":"electron","version":"45.5.0","main":"index.js"}\n',
  )
  await copyFile(realElectronIndex, path.join(electron, 'index.js'))
  await writeFile(
    path.join(electron, 'install.js'),
    `console.error(new TypeError('fetch failed').stack); process.exit(1)\n`,
  )
  await writeFile(path.join(electron, 'dist', 'electron'), '#!/bin/sh\n')
  await chmod(path.join(electron, 'dist', 'electron'), 0o755)
  await writeFile(path.join(electron, 'path.txt'), 'electron')
  return electron
}

/** What Electron's own lookup makes of the install: the program's path, or its failure. */
function electronLookup(electron: string): { ok: boolean; said: string } {
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env['ELECTRON_OVERRIDE_DIST_PATH']
  const run = spawnSync(
    process.execPath,
    ['-e', `console.log(require(${JSON.stringify(electron)}))`],
    { env, encoding: 'utf8' },
  )
  return { ok: run.status === 0, said: `${run.stdout}${run.stderr}` }
}

function check(download: (dir: string) => string | null = () => 'offline'): string[] {
  return preflight({ nodeVersion: newNode, projectDir: project, env: {}, download })
}

describe('the preflight agrees with Electron’s own lookup', () => {
  it('passes an intact install, which Electron’s lookup finds too', async () => {
    const electron = await installWithBinary()
    expect(check()).toEqual([])
    expect(electronLookup(electron)).toEqual({
      ok: true,
      said: `${path.join(electron, 'dist', 'electron')}\n`,
    })
  })

  it('takes a path.txt with a line break after the name as Electron does: the program is missing, so it tries the download', async () => {
    const electron = await installWithBinary()
    await writeFile(path.join(electron, 'path.txt'), 'electron\n')
    // Electron would fail here with its stack ("Electron failed to install correctly").
    const lookup = electronLookup(electron)
    expect(lookup.ok).toBe(false)
    expect(lookup.said).toContain('Electron failed to install correctly')
    const downloads: string[] = []
    const problems = check((dir) => {
      downloads.push(dir)
      return 'fetch failed'
    })
    expect(downloads).toEqual([electron])
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain("Electron's program is missing")
    expect(problems[0]).toContain('that failed (fetch failed)')
  })

  it.each([
    ['a folder', async (binary: string) => mkdir(binary)],
    [
      'a file without permission to run',
      async (binary: string) => writeFile(binary, '#!/bin/sh\n', { mode: 0o644 }),
    ],
  ])('says a program that is %s is damaged, and to install it again', async (_kind, make) => {
    const electron = await installWithBinary()
    const binary = path.join(electron, 'dist', 'electron')
    await rm(binary)
    await make(binary)
    const downloads: string[] = []
    const problems = check((dir) => {
      downloads.push(dir)
      return null
    })
    // Electron's installer takes what is there for installed: a download would change nothing.
    expect(downloads).toEqual([])
    expect(problems).toEqual([
      "Electron's program is damaged: node_modules/electron/dist/electron is there but is not a program that can run (a folder, or a file without permission to run). Delete the node_modules/electron folder, then run `npm install && npm start` again.",
    ])
  })

  it('calls an electron package whose package.json is cut short damaged, not missing, and says to install again', async () => {
    const electron = await installWithBinary()
    await writeFile(path.join(electron, 'package.json'), '{"name":"electron","vers')
    await mkdir(path.join(project, 'scripts'))
    const script = path.join(project, 'scripts', 'preflight.mjs')
    await copyFile(path.resolve(__dirname, 'preflight.mjs'), script)
    const run = spawnSync(process.execPath, [script], { cwd: project, encoding: 'utf8' })
    expect(run.status).toBe(1)
    const said = run.stderr.replace(/\s+/g, ' ')
    expect(said).toContain(
      "Cairn's dependencies are damaged: node_modules/electron/package.json cannot be read",
    )
    expect(said).toContain('`npm install && npm start`')
    expect(run.stderr).not.toMatch(/JSON|position|Error|^\s+at /m)
  })
})
