/**
 * Secret scanning before any write, with secretlint's maintained recommended rule set.
 * The config is built once. Most texts are cleared by a conservative prefilter without running
 * secretlint at all (see `mayHoldSecret`); the rest take well under a millisecond when warm.
 */

import { lintSource } from '@secretlint/core'
import { secretLintProfiler } from '@secretlint/profiler'
import {
  creator as recommendedPreset,
  rules as recommendedRules,
} from '@secretlint/secretlint-rule-preset-recommend'
import { findRuleSecrets } from './secret-rules'

const CONFIG: Parameters<typeof lintSource>[0]['options']['config'] = {
  rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: recommendedPreset }],
}

// secretlint's core puts ~56 performance marks per lint on a process-wide profiler that keeps
// every entry forever (and searches them all on each new one), so each scan made the next one
// slower and the heap bigger. The profiler only feeds the CLI's --profile output: mute it.
muteProfiler(secretLintProfiler)

/** Replaces the profiler's clock with no-ops, if it still has the shape secretlint 12 gives it. */
export function muteProfiler(profiler: unknown): void {
  if (typeof profiler === 'object' && profiler !== null && 'perf' in profiler) {
    ;(profiler as { perf: unknown }).perf = { mark: () => {}, measure: () => {} }
  }
}

/**
 * For each rule of the recommended preset (v12, default options, which is how CONFIG runs them):
 * text that every finding of that rule must contain, read off the rule's own patterns. `exact`
 * needles come from patterns without the `i` flag; `lower` needles are compared with the
 * lower-cased text (patterns with `i`, or alternations of case spellings like
 * `SECRET|secret|Secret`); an array needs all of its parts. `extensions` always scan (the GCP
 * rule parses .json, whose keys may be \u-escaped, and reads .p12 files from disk).
 */
interface RuleNeedles {
  readonly exact?: ReadonlyArray<string | ReadonlyArray<string>>
  readonly lower?: ReadonlyArray<string>
  readonly extensions?: ReadonlyArray<string>
}

const RULE_NEEDLES: Readonly<Record<string, RuleNeedles>> = {
  // Default options run only the secret-access-key pattern: (SECRET|secret|Secret)_?(ACCESS|…).
  '@secretlint/secretlint-rule-aws': { lower: ['secretaccess', 'secret_access'] },
  '@secretlint/secretlint-rule-gcp': { extensions: ['.json', '.p12'] },
  '@secretlint/secretlint-rule-privatekey': { exact: ['PRIVATE KEY'] },
  '@secretlint/secretlint-rule-npm': {
    exact: ['npm_', '_authToken=', ':x-oauth-basic@github.com/'],
  },
  // (https?|ftp|ftps)://user:password@host
  '@secretlint/secretlint-rule-basicauth': { exact: [['://', '@']] },
  '@secretlint/secretlint-rule-slack': {
    exact: ['xoxb-', 'xoxp-', 'xapp-', 'xoxa-', 'xoxo-', 'xoxr-'],
    lower: ['hooks.slack.com/services/'],
  },
  '@secretlint/secretlint-rule-sendgrid': { exact: ['SG.'] },
  '@secretlint/secretlint-rule-shopify': { exact: ['shppa_', 'shpca_', 'shpat_', 'shpss_'] },
  '@secretlint/secretlint-rule-github': {
    exact: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
  },
  '@secretlint/secretlint-rule-gitlab': { exact: ['glpat-'] },
  '@secretlint/secretlint-rule-grafana': { exact: ['glc_', 'glsa_'] },
  // Both alternatives of its pattern contain the base64 of "OpenAI".
  '@secretlint/secretlint-rule-openai': { exact: ['T3BlbkFJ'] },
  '@secretlint/secretlint-rule-anthropic': { exact: ['sk-ant-api0'] },
  '@secretlint/secretlint-rule-groq': { exact: ['gsk_'] },
  '@secretlint/secretlint-rule-huggingface': { exact: ['hf_'] },
  '@secretlint/secretlint-rule-linear': { exact: ['lin_api_'] },
  '@secretlint/secretlint-rule-notion': { exact: ['ntn_'] },
  '@secretlint/secretlint-rule-1password': { exact: ['ops_ey'] },
  '@secretlint/secretlint-rule-database-connection-string': {
    lower: [
      'mongodb://',
      'mongodb+srv://',
      'mysql://',
      'mysqlx://',
      'postgres://',
      'postgresql://',
    ],
  },
  '@secretlint/secretlint-rule-hashicorp-vault': { exact: ['hvs.', 'hvb.', 'hvr.'] },
  '@secretlint/secretlint-rule-vercel': { exact: ['vcp_', 'vci_', 'vca_', 'vcr_', 'vck_'] },
  '@secretlint/secretlint-rule-databricks': { exact: ['dapi'] },
  '@secretlint/secretlint-rule-docker': { exact: ['dckr_pat_'] },
  '@secretlint/secretlint-rule-figma': { exact: ['figd_'] },
  // Only hides findings (secretlint-disable comments), never adds one.
  '@secretlint/secretlint-rule-filter-comments': {},
}

/**
 * True when the installed preset holds exactly the rules the needles were read from. A preset
 * update with a new or renamed rule turns the prefilter off (every write runs secretlint).
 */
export const PREFILTER_MATCHES_PRESET: boolean = (() => {
  const ids = recommendedRules.map((rule) => rule.meta.id)
  const known = Object.keys(RULE_NEEDLES)
  return ids.length === known.length && ids.every((id) => Object.hasOwn(RULE_NEEDLES, id))
})()

const EXACT = Object.values(RULE_NEEDLES).flatMap((r) => r.exact ?? [])
const LOWER = Object.values(RULE_NEEDLES).flatMap((r) => r.lower ?? [])
const ALWAYS = new Set(Object.values(RULE_NEEDLES).flatMap((r) => r.extensions ?? []))

/**
 * Conservative prefilter: false only when no rule of the preset can report anything in `text`
 * (it lacks every rule's needles), so secretlint need not run. True means "run secretlint".
 */
export function mayHoldSecret(text: string, fileName: string): boolean {
  if (!PREFILTER_MATCHES_PRESET || ALWAYS.has(extensionOf(fileName).toLowerCase())) return true
  for (const needle of EXACT) {
    if (typeof needle === 'string' ? text.includes(needle) : needle.every((n) => text.includes(n)))
      return true
  }
  if (LOWER.length > 0) {
    const lower = text.toLowerCase()
    for (const needle of LOWER) if (lower.includes(needle)) return true
  }
  return false
}

/** One secret found: its kind (safe to show) and the matched text (never shown). */
export interface SecretFinding {
  readonly kind: string
  readonly match: string
}

/**
 * Finds secrets in `text`: secretlint's recommended rules (when the prefilter says they may
 * match) and Cairn's own (see secret-rules.ts). `fileName` only helps rules that look at
 * extensions. One finding per matched text.
 */
export async function scanForSecrets(
  text: string,
  fileName: string,
): Promise<ReadonlyArray<SecretFinding>> {
  const linted = mayHoldSecret(text, fileName) ? await runSecretlint(text, fileName) : []
  const seen = new Set<string>()
  const found: SecretFinding[] = []
  for (const finding of [...linted, ...findRuleSecrets(text)]) {
    if (seen.has(finding.match)) continue
    seen.add(finding.match)
    found.push(finding)
  }
  return found
}

/** Secrets in a memory path (a file or folder name can hold one too). */
export function scanPathForSecrets(virtualPath: string): Promise<ReadonlyArray<SecretFinding>> {
  // No extension-driven rule applies to a path.
  return scanForSecrets(virtualPath, 'path')
}

/**
 * The message Claude gets when a path is refused for a secret. The path itself is not
 * repeated: it is the secret.
 */
export function pathSecretRefusal(
  what: 'create' | 'rename',
  findings: ReadonlyArray<SecretFinding>,
): string {
  const kinds = [...new Set(findings.map((f) => f.kind))].join(', ')
  return `Error: Nothing was ${what === 'create' ? 'written' : 'renamed'}: the ${what === 'create' ? 'path' : 'new path'} contains what looks like a secret (${kinds}). Memory file and folder names must not hold credentials; choose a descriptive name.`
}

/** Runs secretlint itself on `text`, without the prefilter (tests compare the two). */
export async function runSecretlint(
  text: string,
  fileName: string,
): Promise<ReadonlyArray<SecretFinding>> {
  const result = await lintSource({
    source: {
      // secretlint honours `secretlint-disable` comments in the text it scans: written into a
      // memory file they would switch the scan off. Same length, so ranges still fit `text`.
      content: text.replaceAll('secretlint-', 'secretlint_'),
      filePath: fileName,
      ext: extensionOf(fileName),
      contentType: 'text',
    },
    options: { config: CONFIG, maskSecrets: true, noPhysicFilePath: true },
  })
  return result.messages.map((message) => ({
    kind: kindOf(message.message, message.ruleId),
    match: text.slice(message.range[0], message.range[1]),
  }))
}

/**
 * Secrets the new text would add: those found in `next` whose matched text was not already in
 * `previous` (so a file the user wrote a key into stays editable for unrelated changes).
 */
export async function newSecrets(
  next: string,
  readPrevious: () => Promise<string | null>,
  fileName: string,
): Promise<ReadonlyArray<SecretFinding>> {
  const found = await scanForSecrets(next, fileName)
  if (found.length === 0) return found
  const previous = await readPrevious()
  if (previous === null || previous === '') return found
  const before = new Set((await scanForSecrets(previous, fileName)).map((f) => f.match))
  return found.filter((f) => !before.has(f.match))
}

/**
 * Secrets `text` holds under the name `to` that it did not under `from`: some rules run only
 * for a file's extension (the GCP service-account key, for `.json`), so a rename can make a
 * file hold a secret no write put there.
 */
export async function secretsByRename(
  text: string,
  from: string,
  to: string,
): Promise<ReadonlyArray<SecretFinding>> {
  if (extensionOf(from).toLowerCase() === extensionOf(to).toLowerCase()) return []
  const found = await scanForSecrets(text, to)
  if (found.length === 0) return found
  const before = new Set((await scanForSecrets(text, from)).map((f) => f.match))
  return found.filter((f) => !before.has(f.match))
}

/** The message Claude gets when a rename is refused for what the file holds under its new name. */
export function renameSecretRefusal(
  newPath: string,
  findings: ReadonlyArray<SecretFinding>,
): string {
  const kinds = [...new Set(findings.map((f) => f.kind))].join(', ')
  return `Error: Nothing was renamed: as ${newPath}, the file's text contains what looks like a secret (${kinds}). Memory files must not hold credentials; store a description instead (for example "the API key is kept in the password manager").`
}

/** What a removed secret is replaced with. */
export const REMOVED_SECRET = '[secret removed]'

/** `text` with every secret found in it replaced by `REMOVED_SECRET`, and how many there were. */
export async function removeSecrets(
  text: string,
  fileName: string,
): Promise<{ readonly text: string; readonly removed: number }> {
  const found = await scanForSecrets(text, fileName)
  let next = text
  // Longest first, so a secret that contains another is replaced whole.
  for (const match of [...new Set(found.map((f) => f.match))].sort((a, b) => b.length - a.length)) {
    if (match !== '') next = next.split(match).join(REMOVED_SECRET)
  }
  return { text: next, removed: found.length }
}

/** The message Claude gets when a write is refused for a secret (names the kind, never the value). */
export function secretRefusal(virtualPath: string, findings: ReadonlyArray<SecretFinding>): string {
  const kinds = [...new Set(findings.map((f) => f.kind))].join(', ')
  return `Error: Nothing was written to ${virtualPath}: the text contains what looks like a secret (${kinds}). Memory files must not hold credentials; store a description instead (for example "the API key is kept in the password manager").`
}

// Messages read "found AWS Secret Access Key: ****"; keep only the kind, and fall back to the
// rule's name if the message has an unexpected shape (it must never carry the secret).
function kindOf(message: string, ruleId: string): string {
  const kind = /^found ([^:(*]{3,60}?)\s*[:(]/i.exec(message)?.[1]
  if (kind && !kind.includes('*')) return kind
  return ruleId.replace(/^@secretlint\/secretlint-rule-/, '').replace(/-/g, ' ')
}

function extensionOf(fileName: string): string {
  const dot = fileName.lastIndexOf('.')
  return dot > fileName.lastIndexOf('/') ? fileName.slice(dot) : ''
}
