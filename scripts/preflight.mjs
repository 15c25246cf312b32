#!/usr/bin/env node
// @ts-check
/**
 * The check `npm start` and `npm run dev` run first: is Node.js recent enough, and is
 * Electron's program (not just its npm package) installed? When something is missing it says
 * what, why and the command that fixes it, in one plain paragraph each, and exits non-zero,
 * never with a stack trace.
 *
 * electron@45 installs without its binary: the binary is downloaded from Electron's releases
 * the first time it is needed. Where it is missing and a download is allowed, this check
 * fetches it once (as `electron` itself would), and explains the failure if that fails.
 */
import { spawnSync } from 'node:child_process'
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** What electron@45 and its installer (`@electron/get`) require. */
export const REQUIRED_NODE = '22.12.0'

/**
 * @param {string} version `process.version`, e.g. `v20.20.2`
 * @returns {boolean}
 */
export function nodeIsRecentEnough(version) {
  const parse = (/** @type {string} */ text) =>
    text
      .replace(/^v/, '')
      .split('.')
      .map((part) => Number.parseInt(part, 10) || 0)
  const have = parse(version)
  const need = parse(REQUIRED_NODE)
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) !== (need[i] ?? 0)) return (have[i] ?? 0) > (need[i] ?? 0)
  }
  return true
}

/**
 * @typedef {{ installed: false, damaged?: boolean } | {
 *   installed: true, packageDir: string, version: string, binary: string | null, present: boolean
 * }} ElectronInstall
 */

/**
 * Finds the `electron` package the project resolves and the binary it would run (the same
 * lookup as `electron/index.js`: `path.txt` names the executable inside `dist/`, or inside
 * `ELECTRON_OVERRIDE_DIST_PATH`).
 *
 * @param {string} projectDir
 * @param {Readonly<Record<string, string | undefined>>} env
 * @returns {ElectronInstall}
 */
export function locateElectron(projectDir, env) {
  const require = createRequire(path.join(projectDir, 'package.json'))
  let manifest
  try {
    manifest = require.resolve('electron/package.json')
  } catch {
    // A folder whose package.json cannot be read (an install cut short) is no package either.
    return {
      installed: false,
      damaged: existsSync(path.join(projectDir, 'node_modules', 'electron')),
    }
  }
  const packageDir = path.dirname(manifest)
  const version = String(JSON.parse(readFileSync(manifest, 'utf8')).version ?? '')
  const pathFile = path.join(packageDir, 'path.txt')
  // Read as electron/index.js reads it, untrimmed: a name it would not find (a line break
  // after it, say) is a missing program here too, which its installer then writes again.
  const executable = existsSync(pathFile) ? readFileSync(pathFile, 'utf8') : ''
  const override = env['ELECTRON_OVERRIDE_DIST_PATH']
  let binary = null
  if (override) binary = path.join(override, executable || 'electron')
  else if (executable) binary = path.join(packageDir, 'dist', executable)
  return { installed: true, packageDir, version, binary, present: !!binary && isProgram(binary) }
}

/**
 * Whether `file` is a program that can be run: a file (not a folder), executable where the
 * system has such a mark. What only exists there would fail in `electron .` with a raw error.
 *
 * @param {string} file
 * @returns {boolean}
 */
function isProgram(file) {
  try {
    if (!statSync(file).isFile()) return false
    if (process.platform !== 'win32') accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * Runs Electron's own installer once; resolves to null on success or a one-line reason.
 *
 * @param {string} packageDir
 * @param {Readonly<Record<string, string | undefined>>} env
 * @returns {string | null}
 */
export function downloadElectron(packageDir, env) {
  const result = spawnSync(process.execPath, [path.join(packageDir, 'install.js')], {
    cwd: packageDir,
    env: /** @type {NodeJS.ProcessEnv} */ (env),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  if (result.status === 0 && !result.error) return null
  return firstLine(result.error?.message ?? `${result.stderr ?? ''}\n${result.stdout ?? ''}`)
}

/** The first meaningful line of an error report, without the error's class name. */
function firstLine(/** @type {string} */ text) {
  const line = text
    .split('\n')
    .find((candidate) => /\w/.test(candidate) && !/^\s+at /.test(candidate))
  return (line ?? 'no reason given')
    .replace(/^\s*(\w*Error|Error):\s*/, '')
    .trim()
    .slice(0, 200)
}

/**
 * @typedef {{
 *   nodeVersion: string,
 *   projectDir: string,
 *   env: Readonly<Record<string, string | undefined>>,
 *   download?: (packageDir: string, env: Readonly<Record<string, string | undefined>>) => string | null,
 *   say?: (text: string) => void,
 * }} PreflightOptions
 */

/**
 * Checks everything and returns one paragraph per problem (empty: ready to start).
 *
 * @param {PreflightOptions} options
 * @returns {string[]}
 */
export function preflight(options) {
  const { nodeVersion, projectDir, env } = options
  const download = options.download ?? downloadElectron
  const problems = []
  const nodeOk = nodeIsRecentEnough(nodeVersion)
  if (!nodeOk) {
    problems.push(
      `Cairn needs Node.js ${REQUIRED_NODE} or newer, and this is Node.js ${nodeVersion.replace(/^v/, '')}. ` +
        'Electron 45, which runs Cairn, and the tool that downloads it require that version. ' +
        'Install a current Node.js LTS release (from nodejs.org, or with nvm: `nvm install 22`), ' +
        'then run `npm install && npm start` again.',
    )
  }
  const electron = locateElectron(projectDir, env)
  if (!electron.installed && electron.damaged) {
    problems.push(
      "Cairn's dependencies are damaged: node_modules/electron/package.json cannot be read " +
        '(an install that was cut short leaves it so). Delete the node_modules folder, then run ' +
        '`npm install && npm start` again.',
    )
    return problems
  }
  if (!electron.installed) {
    problems.push(
      "Cairn's dependencies are not installed: there is no node_modules/electron. " +
        'Run `npm install` in this folder, then `npm start` again.',
    )
    return problems
  }
  if (electron.present) return problems
  if (electron.binary && existsSync(electron.binary)) {
    // Its installer takes what is there for installed and would download nothing.
    problems.push(
      `Electron's program is damaged: ${path.relative(projectDir, electron.binary)} is there ` +
        'but is not a program that can run (a folder, or a file without permission to run). ' +
        'Delete the node_modules/electron folder, then run `npm install && npm start` again.',
    )
    return problems
  }

  const skip = /^(1|true|yes)$/i.test(env['ELECTRON_SKIP_BINARY_DOWNLOAD'] ?? '')
  let attempt
  let fix
  if (skip) {
    attempt = 'It was not downloaded because ELECTRON_SKIP_BINARY_DOWNLOAD is set. '
    fix =
      'Unset that variable and run `npm start` again, or run `npx install-electron` in this folder.'
  } else if (!nodeOk) {
    attempt = 'Its installer needs the newer Node.js too. '
    fix = 'Once Node.js is updated, `npm start` downloads it by itself.'
  } else {
    options.say?.(`Downloading Electron ${electron.version} (once, about 100 MB)…`)
    const failure = download(electron.packageDir, env)
    const after = locateElectron(projectDir, env)
    if (failure === null && after.installed && after.present) return problems
    attempt = `Cairn just tried to download it, and that failed (${failure ?? 'the program is still missing'}). `
    fix =
      'Run `npx install-electron` in this folder where github.com can be reached (behind a proxy ' +
      'or with a mirror, set ELECTRON_MIRROR first), then `npm start` again.'
  }
  problems.push(
    "Electron's program is missing: node_modules/electron holds only its npm package, not the " +
      `Electron ${electron.version} binary that runs Cairn. npm does not ship that binary; it is ` +
      "downloaded from Electron's releases on GitHub when first needed. " +
      attempt +
      fix,
  )
  return problems
}

/** Wraps a paragraph at about 88 columns for the terminal, never inside a `command`. */
export function wrap(/** @type {string} */ text, width = 88) {
  const words = text.match(/`[^`]*`\S*|\S+/g) ?? []
  const lines = []
  let line = ''
  for (const word of words) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else {
      line = line ? `${line} ${word}` : word
    }
  }
  if (line) lines.push(line)
  return lines.join('\n')
}

function main() {
  const projectDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
  let problems
  try {
    problems = preflight({
      nodeVersion: process.version,
      projectDir,
      env: process.env,
      say: (text) => console.error(text),
    })
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    console.error(`Cairn's start-up check itself failed (${firstLine(reason)}).`)
    process.exitCode = 2
    return
  }
  if (problems.length === 0) return
  console.error(
    `\nCairn cannot start yet.\n\n${problems.map((problem) => wrap(problem)).join('\n\n')}\n`,
  )
  process.exitCode = 1
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
