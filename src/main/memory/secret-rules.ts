/**
 * Secret rules of Cairn's own, for what secretlint's recommended preset lets through: private
 * keys in any PEM form (SEC1 EC keys, unusual labels, quoted with `> `), AWS secrets written
 * in prose, AWS access key ids on their own, Anthropic keys other than API keys, Stripe secret
 * and restricted keys, and Google API keys (the preset has no rule for either). Pure and cheap:
 * plain regular expressions, run on every scanned text, each behind a plain `includes` check of
 * a needle every match must contain (the same idea as the preset's prefilter in secrets.ts).
 */

/** One finding: its kind (safe to show) and the matched text (never shown). */
export interface RuleFinding {
  readonly kind: string
  readonly match: string
}

// `-----BEGIN <anything> PRIVATE KEY-----`, up to its END line (or a generous cut-off).
const PEM_BEGIN = /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----/g
const PEM_END = /-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/g
const MAX_PEM_CHARS = 64 * 1024
// A key has a body: this many base64 characters at least (a bare header in prose is not one).
const MIN_KEY_BODY = 32

// 40 characters of base64 standing alone: the shape of an AWS secret access key.
const AWS_SECRET = /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g
// What must come shortly before such a token for it to be one.
const AWS_CONTEXT = /\b(?:aws|amazon)\b[^\n]{0,40}?\bsecret\b/i
const AWS_CONTEXT_CHARS = 120
// Access key ids: a four-letter prefix and 16 upper-case letters or digits.
const AWS_KEY_ID = /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b/g

// Anthropic keys: `sk-ant-<kind><2 digits>-` and some 90 base64url characters. The preset
// matches only API keys (`sk-ant-api03-`); admin keys (`sk-ant-admin01-`) and OAuth tokens
// (`sk-ant-oat01-`) reach the same account, and an admin key far more of it.
const ANTHROPIC_KEY =
  /(?<![A-Za-z0-9_-])sk-ant-[a-z]{2,12}\d{2}-[A-Za-z0-9_-]{64,200}(?![A-Za-z0-9_-])/g

// Stripe secret (`sk_`) and restricted (`rk_`) keys, live or test: 24 characters after the
// prefix in the old form, 99 in the new one (gitleaks' pattern, bounded on both sides).
const STRIPE_KEY = /(?<![A-Za-z0-9_])[sr]k_(?:live|test)_[A-Za-z0-9]{20,247}(?![A-Za-z0-9_])/g
const STRIPE_NEEDLES = ['k_live_', 'k_test_']

// Google API keys: `AIza` and exactly 35 base64url characters (39 in all).
const GOOGLE_API_KEY = /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g

/** Every secret these rules find in `text`. */
export function findRuleSecrets(text: string): ReadonlyArray<RuleFinding> {
  return [
    ...privateKeys(text),
    ...awsSecrets(text),
    ...awsKeyIds(text),
    ...anthropicKeys(text),
    ...stripeKeys(text),
    ...googleApiKeys(text),
  ]
}

function stripeKeys(text: string): RuleFinding[] {
  if (!STRIPE_NEEDLES.some((needle) => text.includes(needle))) return []
  return [...text.matchAll(STRIPE_KEY)].map((match) => ({ kind: 'Stripe key', match: match[0] }))
}

function googleApiKeys(text: string): RuleFinding[] {
  if (!text.includes('AIza')) return []
  return [...text.matchAll(GOOGLE_API_KEY)].map((match) => ({
    kind: 'Google API key',
    match: match[0],
  }))
}

function anthropicKeys(text: string): RuleFinding[] {
  if (!text.includes('sk-ant-')) return []
  return [...text.matchAll(ANTHROPIC_KEY)].map((match) => ({
    kind: 'Anthropic key',
    match: match[0],
  }))
}

function privateKeys(text: string): RuleFinding[] {
  const found: RuleFinding[] = []
  if (!text.includes('PRIVATE KEY')) return found
  for (const begin of text.matchAll(PEM_BEGIN)) {
    const start = begin.index
    PEM_END.lastIndex = start + begin[0].length
    const end = PEM_END.exec(text)
    const stop =
      end && end.index - start < MAX_PEM_CHARS
        ? end.index + end[0].length
        : Math.min(text.length, start + MAX_PEM_CHARS)
    const block = text.slice(start, stop)
    // Quote marks (`> `), indentation and line breaks are not part of the key.
    const body = block
      .slice(begin[0].length)
      .replace(/-----END[\s\S]*$/, '')
      .replace(/^[\s>]*/gm, '')
      .replace(/^[A-Za-z-]+:.*$/gm, '')
    if ((body.match(/[A-Za-z0-9+/=]/g)?.length ?? 0) < MIN_KEY_BODY) continue
    found.push({ kind: 'private key', match: block })
  }
  return found
}

function awsSecrets(text: string): RuleFinding[] {
  const found: RuleFinding[] = []
  if (!/secret/i.test(text)) return found
  for (const token of text.matchAll(AWS_SECRET)) {
    const value = token[0]
    // A git commit id is 40 hex digits; a secret mixes cases and digits.
    if (/^[0-9a-f]{40}$/i.test(value) || !/[0-9]/.test(value) || !/[a-z]/.test(value)) continue
    if (!/[A-Z]/.test(value)) continue
    const before = text.slice(Math.max(0, token.index - AWS_CONTEXT_CHARS), token.index)
    if (AWS_CONTEXT.test(before)) found.push({ kind: 'AWS Secret Access Key', match: value })
  }
  return found
}

function awsKeyIds(text: string): RuleFinding[] {
  return [...text.matchAll(AWS_KEY_ID)].map((match) => ({
    kind: 'AWS Access Key ID',
    match: match[0],
  }))
}
