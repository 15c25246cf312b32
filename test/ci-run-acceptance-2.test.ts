/**
 * `.ci/run`, issue 2's CI entry point, run the unkind way: from a copy in a folder whose path
 * holds spaces, with `CI` unset, and with the programs it looks for present or missing. The
 * copy runs under bash with a PATH of stand-ins only: `npm` records how it was called (and
 * never installs or tests anything), `apt-get` is there or not, and `git` and `setfacl` are
 * the real ones or absent. Every refusal must be said in words before npm runs, and exit
 * non-zero.
 */
import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

const script = path.resolve('.ci/run')
const folders: string[] = []
afterEach(() => {
  for (const folder of folders.splice(0))
    rmSync(folder, { recursive: true, force: true, maxRetries: 10 })
})

interface Machine {
  /** The real programs on PATH besides the stand-ins. */
  readonly real?: ReadonlyArray<'git' | 'setfacl'>
  /** `apt-get` as a stand-in that exits with this code, or absent (undefined). */
  readonly aptGet?: number
  /** The code the `npm test` stand-in exits with. */
  readonly npmTest?: number
  /** The version the `node` stand-in says it is (22.12.0 unless told), or null for none. */
  readonly node?: string | null
  /** Whether there is an `npm` (the stand-in) at all. */
  readonly npm?: boolean
  readonly env?: Readonly<Record<string, string>>
}

interface Run {
  readonly status: number | null
  readonly stderr: string
  readonly stdout: string
  /** Each npm call: its working folder, its arguments, and the CI variable it saw. */
  readonly npm: ReadonlyArray<{ cwd: string; args: string; ci: string; noBrowser: string }>
  readonly aptGet: ReadonlyArray<string>
  readonly root: string
}

function which(name: string): string {
  const found = spawnSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' })
  return found.stdout.trim()
}

function standIn(file: string, body: string): void {
  writeFileSync(file, `#!/bin/bash\n${body}\n`)
  chmodSync(file, 0o755)
}

function runCi(machine: Machine): Run {
  const top = mkdtempSync(path.join(os.tmpdir(), 'cairn-ci-run-'))
  folders.push(top)
  const root = path.join(top, 'a checkout with spaces')
  mkdirSync(path.join(root, '.ci'), { recursive: true })
  copyFileSync(script, path.join(root, '.ci', 'run'))
  const bin = path.join(top, 'bin')
  mkdirSync(bin)
  const npmLog = path.join(top, 'npm.log')
  const aptLog = path.join(top, 'apt.log')
  symlinkSync(which('dirname'), path.join(bin, 'dirname'))
  for (const name of machine.real ?? []) symlinkSync(which(name), path.join(bin, name))
  const node = machine.node === undefined ? '22.12.0' : machine.node
  if (node !== null) standIn(path.join(bin, 'node'), `echo v${node}`)
  if (machine.npm !== false)
    standIn(
      path.join(bin, 'npm'),
      `printf '%s|%s|%s|%s\\n' "$PWD" "$*" "\${CI-<unset>}" "\${PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD-}" >> '${npmLog}'
if [ "$1" = test ]; then exit ${machine.npmTest ?? 0}; fi`,
    )
  if (machine.aptGet !== undefined) {
    standIn(path.join(bin, 'apt-get'), `echo "$*" >> '${aptLog}'\nexit ${machine.aptGet}`)
  }
  const chromium = path.join(top, 'chromium')
  standIn(chromium, 'exit 0')
  const result = spawnSync('/bin/bash', [path.join(root, '.ci', 'run')], {
    encoding: 'utf8',
    env: { PATH: bin, HOME: top, PLAYWRIGHT_CHROMIUM_PATH: chromium, ...machine.env },
  })
  const lines = (file: string) =>
    existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []
  return {
    status: result.status,
    stderr: result.stderr,
    stdout: result.stdout,
    npm: lines(npmLog).map((line) => {
      const [cwd = '', args = '', ci = '', noBrowser = ''] = line.split('|')
      return { cwd, args, ci, noBrowser }
    }),
    aptGet: lines(aptLog),
    root,
  }
}

describe('.ci/run', () => {
  it('runs npm ci, then exactly npm test, from a folder with spaces, with CI set when it was not', () => {
    const run = runCi({ real: ['git', 'setfacl'] })
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    // CI set: a `.only` left in a test fails Vitest and Playwright instead of narrowing them.
    expect(run.npm).toEqual([
      { cwd: run.root, args: 'ci --no-audit --no-fund', ci: 'true', noBrowser: '1' },
      { cwd: run.root, args: 'test', ci: 'true', noBrowser: '1' },
    ])
    expect(run.aptGet).toEqual([])
  })

  it('keeps a CI value the machine set', () => {
    const run = runCi({ real: ['git', 'setfacl'], env: { CI: '1' } })
    expect(run.status).toBe(0)
    expect(run.npm.map((call) => call.ci)).toEqual(['1', '1'])
  })

  it('exits non-zero when the tests fail', () => {
    const run = runCi({ real: ['git', 'setfacl'], npmTest: 3 })
    expect(run.status).toBe(3)
  })

  it.each([
    ['a path where nothing is', 'no-chromium-here'],
    ['a folder', '.'],
    ['a file that is not a program', 'not-a-program'],
  ])('refuses a PLAYWRIGHT_CHROMIUM_PATH naming %s before anything runs', (_what, name) => {
    const top = mkdtempSync(path.join(os.tmpdir(), 'cairn-ci-chromium-'))
    folders.push(top)
    writeFileSync(path.join(top, 'not-a-program'), 'text\n')
    const given = path.join(top, name)
    const run = runCi({ real: ['git', 'setfacl'], env: { PLAYWRIGHT_CHROMIUM_PATH: given } })
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain(`PLAYWRIGHT_CHROMIUM_PATH is set to "${given}"`)
    expect(run.stderr).toContain('not a program')
    expect(run.stderr).not.toMatch(/command not found|line \d+/)
    expect(run.npm).toEqual([])
  })

  it.each([
    ['no node', { node: null }, 'this machine has no node.'],
    ['Debian bookworm’s Node.js', { node: '18.19.0' }, 'this machine has Node.js v18.19.0.'],
    ['a Node.js 20 older than Vite takes', { node: '20.10.0' }, 'has Node.js v20.10.0.'],
    ['a Node.js 22 older than Vite takes', { node: '22.11.0' }, 'has Node.js v22.11.0.'],
    ['no npm', { npm: false }, 'this machine has Node.js v22.12.0 and no npm.'],
    ['neither', { node: null, npm: false }, 'this machine has no node and no npm.'],
  ] as const)(
    'says in words which Node.js and npm the tests need, on %s, before anything runs',
    (_what, machine, has) => {
      const run = runCi({ real: ['git', 'setfacl'], aptGet: 0, ...machine })
      expect(run.status).not.toBe(0)
      expect(run.stderr).toContain(
        'the tests need Node.js 20.19 or newer (22.12 or newer on the 22 line), with npm',
      )
      expect(run.stderr).toContain(has)
      expect(run.stderr).not.toMatch(/command not found|line \d+/)
      expect(run.npm).toEqual([])
      expect(run.aptGet).toEqual([])
    },
  )

  it.each(['20.19.0', '22.12.0', '24.1.0'])('runs the tests on Node.js %s', (node) => {
    const run = runCi({ real: ['git', 'setfacl'], node })
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    expect(run.npm.map((call) => call.args)).toEqual(['ci --no-audit --no-fund', 'test'])
  })

  it('says what is missing when it has no apt-get to install it, and runs nothing', () => {
    const run = runCi({})
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain('the tests need git acl')
    expect(run.stderr).toContain('no apt-get')
    expect(run.stderr).not.toMatch(/command not found|line \d+/)
    expect(run.npm).toEqual([])
  })

  // apt-get installs only as root; anyone else is told so before it is tried.
  const root = process.getuid?.() === 0

  it(`installs what is missing with apt-get, then runs the tests${root ? '' : ' (here: says it takes root)'}`, () => {
    const run = runCi({ real: ['setfacl'], aptGet: 0 })
    if (!root) {
      expect(run.status).not.toBe(0)
      expect(run.stderr).toContain(
        "the tests need git (Debian's package names), and installing them takes root",
      )
      expect(run.aptGet).toEqual([])
      expect(run.npm).toEqual([])
      return
    }
    expect(run.status).toBe(0)
    expect(run.aptGet).toEqual(['update -qq', 'install -y -qq git'])
    expect(run.npm.map((call) => call.args)).toEqual(['ci --no-audit --no-fund', 'test'])
  })

  it('stops, non-zero, when the install fails', () => {
    const run = runCi({ real: ['git'], aptGet: 100 })
    expect(run.status).not.toBe(0)
    expect(run.aptGet).toEqual(root ? ['update -qq'] : [])
    expect(run.npm).toEqual([])
  })
})
