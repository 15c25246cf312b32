/**
 * Secret scanning before any write, with secretlint's maintained recommended rule set.
 * The config is built once; a scan of a typical memory file takes well under a millisecond.
 */

import { lintSource } from '@secretlint/core'
import { creator as recommendedPreset } from '@secretlint/secretlint-rule-preset-recommend'

const CONFIG: Parameters<typeof lintSource>[0]['options']['config'] = {
  rules: [{ id: '@secretlint/secretlint-rule-preset-recommend', rule: recommendedPreset }],
}

/** One secret found: its kind (safe to show) and the matched text (never shown). */
export interface SecretFinding {
  readonly kind: string
  readonly match: string
}

/** Finds secrets in `text`. `fileName` only helps rules that look at extensions. */
export async function scanForSecrets(
  text: string,
  fileName: string,
): Promise<ReadonlyArray<SecretFinding>> {
  const result = await lintSource({
    source: {
      content: text,
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
