#!/usr/bin/env node
// @ts-check
/**
 * Electronegativity (Doyensec's static scanner for Electron misconfigurations) over src/,
 * without the network: its command line downloads translations and Electron's release list
 * on every run, so this drives its loader, parser and checks directly, with the bundled
 * English texts and without AVAILABLE_SECURITY_FIXES_GLOBAL_CHECK (the one check that asks
 * the network which Electron releases exist; keeping Electron current is the dependency
 * updates' job).
 *
 * `npm run security` prints the findings; test/security/electronegativity.test.ts (in
 * `npm test`) requires each to be fixed or explained in docs/security.md.
 */
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const dist = path.join(
  path.dirname(require.resolve('@doyensec/electronegativity/package.json')),
  'dist',
)
const fromScanner = createRequire(path.join(dist, 'index.js'))

/** Checks left out, by name, and why (see the file comment). */
export const EXCLUDED_CHECKS = ['AvailableSecurityFixesGlobalCheck']

/**
 * @typedef {{ id: string, file: string, line: number, column: number, sample: string,
 *   severity: string, confidence: string, description: string }} Finding
 */

let localized = false
/** The scanner's texts come from its bundled English locale; nothing is fetched. */
function useBundledTexts() {
  if (localized) return
  const i18n = fromScanner('i18n')
  i18n.configure({
    locales: ['en-US'],
    defaultLocale: 'en-US',
    directory: path.join(dist, 'locales'),
    updateFiles: false,
    objectNotation: true,
    retryInDefaultLocale: true,
    register: globalThis,
  })
  i18n.setLocale('en-US')
  localized = true
}

/**
 * Scans a folder; returns the findings (paths relative to the project) and the files that
 * could not be parsed (a file the scanner cannot read is a file it did not check).
 *
 * @param {{ input?: string, electronVersion?: string }} [options]
 * @returns {Promise<{ findings: Finding[], unparsed: Array<{ file: string, message: string }> }>}
 */
export async function scan(options = {}) {
  useBundledTexts()
  const input = path.resolve(root, options.input ?? 'src')
  const electronVersion =
    options.electronVersion ?? String(require('electron/package.json').version)
  const { LoaderDirectory } = fromScanner('./loader')
  const { Parser } = fromScanner('./parser')
  const { Finder, GlobalChecks } = fromScanner('./finder')

  const loader = new LoaderDirectory()
  await loader.load(input)
  const parser = new Parser(false, true)
  const excluded = EXCLUDED_CHECKS.map((name) => name.toLowerCase())
  const globalChecks = new GlobalChecks([], excluded, undefined)
  const finder = await new Finder([], [], undefined)

  /** @type {any[]} */
  let issues = []
  const unparsed = []
  for (const file of loader.list_files) {
    try {
      const [type, data, content] = parser.parse(file, loader.load_buffer(file))
      if (data === null) continue
      issues.push(...(await finder.find(file, data, type, content, null, electronVersion)))
    } catch (error) {
      unparsed.push({
        file: path.relative(root, file),
        message: error instanceof Error ? error.message : String(error),
      })
    }
  }
  issues = await globalChecks.getResults(issues, undefined)
  const findings = issues
    .filter((issue) => !issue.visibility?.inlineDisabled && !issue.visibility?.globalCheckDisabled)
    .map((issue) => ({
      id: String(issue.id),
      file: path.relative(root, issue.file).split(path.sep).join('/'),
      line: Number(issue.location?.line ?? 0),
      column: Number(issue.location?.column ?? 0),
      sample: String(issue.sample ?? ''),
      severity: String(issue.severity?.name ?? ''),
      confidence: String(issue.confidence?.name ?? ''),
      description: String(issue.description ?? ''),
    }))
    .sort((a, b) => a.id.localeCompare(b.id) || a.file.localeCompare(b.file) || a.line - b.line)
  return { findings, unparsed }
}

async function main() {
  const { findings, unparsed } = await scan()
  for (const finding of findings) {
    console.log(
      `${finding.id}  ${finding.file}:${finding.line}  [${finding.severity}/${finding.confidence}]  ${finding.description}`,
    )
  }
  for (const file of unparsed) console.error(`could not parse ${file.file}: ${file.message}`)
  console.log(`${findings.length} findings; each must be fixed or explained in docs/security.md`)
  if (unparsed.length > 0) process.exitCode = 1
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`The security scan failed: ${error instanceof Error ? error.message : error}`)
    process.exitCode = 1
  })
}
