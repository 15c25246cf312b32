import {
  FLAG_RULES,
  type CairnActor,
  type CommitCommand,
  type CommitSummary,
  type ReviewMark,
  type WriteFlag,
} from '../../shared/types'

/** The structured facts of one commit, carried by its author and trailers. */
export type CommitMeta = Omit<CommitSummary, 'oid' | 'parent' | 'time' | 'otherParents'>

/** The facts of a commit Cairn writes: always as one of its own actors, with no outside author. */
export type CairnCommitMeta = Omit<CommitMeta, 'actor' | 'author'> & { readonly actor: CairnActor }

/** A git identity: the name and email of a commit's author or committer. */
export interface Person {
  readonly name: string
  readonly email: string
}

/**
 * Git identities per actor. The system author signs recovery and start-of-history commits.
 * Every Cairn version wrote these, name and email, as both author and committer.
 */
export const AUTHORS: Readonly<Record<CairnActor, Person>> = {
  claude: { name: 'Claude', email: 'claude@cairn.invalid' },
  user: { name: 'You', email: 'you@cairn.invalid' },
  system: { name: 'Cairn', email: 'system@cairn.invalid' },
}

/** Who a commit object says made it (`RawCommit`'s people). */
export interface CommitPeople {
  readonly author: Person
  readonly committer: Person
}

const COMMANDS: ReadonlySet<string> = new Set<CommitCommand>([
  'create',
  'str_replace',
  'insert',
  'delete',
  'rename',
  'write',
  'restore-file',
  'restore-deleted',
  'revert',
  'restore-all',
  'recovery',
  'outside',
  'init',
  'merge',
  'resolve',
  'import',
])

const KEY = {
  command: 'Command',
  path: 'Path',
  conversation: 'Conversation-Id',
  toolUse: 'Tool-Use-Id',
  overwrite: 'Overwrite',
  restoredFrom: 'Restored-From',
  machine: 'Machine',
  reviewedBy: 'Reviewed-by',
  editedBy: 'Edited-by',
  flag: 'Flag',
} as const

/** Who reviews: the person at the keyboard, as git shows them ("You"). */
const REVIEWER = 'You'

/**
 * Formats a commit message: the subject, a blank line, then one trailer per fact.
 *
 *   str_replace /memories/notes.md
 *
 *   Command: str_replace
 *   Path: /memories/notes.md
 *   Conversation-Id: 6f1c…
 *   Tool-Use-Id: toolu_01…
 *   Machine: laptop
 *   Reviewed-by: You
 *   Flag: {"rule":"instructions","path":"/memories/notes.md","line":3,"message":"…"}
 *
 * A change the person approved carries `Reviewed-by: You`; one they edited first also
 * `Edited-by: You`. Each review flag is one `Flag:` trailer holding it as JSON. A `body` (what
 * `git log` shows and History does not read back) goes between the subject and the trailers,
 * without blank lines of its own (the trailers are what follows the last one).
 */
export function formatCommitMessage(meta: CommitMeta & { readonly body?: string }): string {
  const trailers = [`${KEY.command}: ${meta.command}`]
  for (const p of meta.paths) trailers.push(`${KEY.path}: ${encodeValue(p)}`)
  if (meta.conversationId) trailers.push(`${KEY.conversation}: ${encodeValue(meta.conversationId)}`)
  if (meta.toolUseId) trailers.push(`${KEY.toolUse}: ${encodeValue(meta.toolUseId)}`)
  if (meta.overwrite) trailers.push(`${KEY.overwrite}: true`)
  if (meta.restoredFrom) trailers.push(`${KEY.restoredFrom}: ${meta.restoredFrom}`)
  if (meta.machine) trailers.push(`${KEY.machine}: ${encodeValue(meta.machine)}`)
  if (meta.review) trailers.push(`${KEY.reviewedBy}: ${REVIEWER}`)
  if (meta.review === 'edited') trailers.push(`${KEY.editedBy}: ${REVIEWER}`)
  for (const flag of meta.flags ?? []) {
    trailers.push(`${KEY.flag}: ${encodeValue(JSON.stringify(flag))}`)
  }
  const body = (meta.body ?? '')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map(encodeValue)
  const between = body.length > 0 ? `${body.join('\n')}\n\n` : ''
  return `${encodeValue(meta.subject)}\n\n${between}${trailers.join('\n')}\n`
}

/**
 * Reads the facts back from a commit's people and message.
 *
 * A commit is Cairn's when its author is one of Cairn's identities (`AUTHORS`, name and email
 * both) and its committer is that same identity, as every Cairn version wrote them. Its facts
 * come from its trailers; one with no `Command:` trailer reads as `recovery`, as before.
 *
 * Any other commit was made outside Cairn (with git: `git commit`, a merge, an amend or a
 * cherry-pick of Cairn's commit): actor `outside`, command `outside`, its author named (the
 * committer, when the author is one of Cairn's), its paths left to the caller (the files it
 * changed). Its trailers are not read: nobody vouches for them, and they would make claims
 * Cairn acts on (a conversation and tool call to link, a restore whose lines blame hands on,
 * a review, a merge's conflicts). A name alone ("Claude") makes nobody Claude.
 */
export function parseCommitMessage(people: CommitPeople, message: string): CommitMeta {
  const lines = message.replace(/\n+$/, '').split('\n')
  const subject = decodeValue(lines[0] ?? '')
  const actor = cairnActorOf(people)
  if (actor === null) {
    const author = outsideAuthorOf(people)
    return {
      actor: 'outside',
      ...(author ? { author } : {}),
      command: 'outside',
      subject,
      paths: [],
      conversationId: null,
      toolUseId: null,
      overwrite: false,
      restoredFrom: null,
    }
  }
  return readTrailers(actor, subject, lines)
}

/** The facts of a commit of Cairn's, from its trailers. */
function readTrailers(
  actor: CairnActor,
  subject: string,
  lines: ReadonlyArray<string>,
): CommitMeta {
  const blank = lines.lastIndexOf('')
  const trailerLines = blank >= 0 ? lines.slice(blank + 1) : []
  const paths: string[] = []
  let command: CommitCommand | null = null
  let conversationId: string | null = null
  let toolUseId: string | null = null
  let overwrite = false
  let restoredFrom: string | null = null
  let machine: string | null = null
  let reviewed = false
  let edited = false
  const flags: WriteFlag[] = []
  for (const line of trailerLines) {
    const colon = line.indexOf(': ')
    if (colon <= 0) continue
    const key = line.slice(0, colon)
    const value = line.slice(colon + 2)
    if (key === KEY.command && COMMANDS.has(value)) command = value as CommitCommand
    else if (key === KEY.path) paths.push(decodeValue(value))
    else if (key === KEY.conversation) conversationId = decodeValue(value)
    else if (key === KEY.toolUse) toolUseId = decodeValue(value)
    else if (key === KEY.overwrite) overwrite = value === 'true'
    else if (key === KEY.restoredFrom && /^[0-9a-f]{40}$/.test(value)) restoredFrom = value
    else if (key === KEY.machine && value.trim() !== '') machine = decodeValue(value)
    else if (key === KEY.reviewedBy) reviewed = true
    else if (key === KEY.editedBy) edited = true
    else if (key === KEY.flag) {
      const flag = parseFlag(decodeValue(value))
      if (flag) flags.push(flag)
    }
  }
  const meta: CommitMeta = {
    actor,
    command: command ?? 'recovery',
    subject,
    paths,
    conversationId,
    toolUseId,
    overwrite,
    restoredFrom,
    ...(machine ? { machine } : {}),
  }
  // Absent rather than empty, so commits without them read back exactly as before.
  const review: ReviewMark | undefined = edited ? 'edited' : reviewed ? 'approved' : undefined
  return { ...meta, ...reviewFactsOf({ flags, review }) }
}

/**
 * The review facts of a commit, present only when set (the side index and the timeline carry
 * them the same way, so entries built from a commit and from its intent are equal).
 */
export function reviewFactsOf(
  meta: Pick<CommitMeta, 'flags' | 'review'>,
): Pick<CommitMeta, 'flags' | 'review'> {
  return {
    ...(meta.flags && meta.flags.length > 0 ? { flags: meta.flags } : {}),
    ...(meta.review ? { review: meta.review } : {}),
  }
}

const RULES: ReadonlySet<string> = new Set(FLAG_RULES)

// Sample: {"rule":"hidden-unicode","path":"/memories/a.md","line":2,"message":"…"}
function parseFlag(json: string): WriteFlag | null {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    // A hand-written or damaged trailer: not a flag Cairn can show.
    return null
  }
  const flag = value as Partial<WriteFlag> | null
  if (typeof flag !== 'object' || flag === null) return null
  if (typeof flag.rule !== 'string' || !RULES.has(flag.rule)) return null
  if (typeof flag.path !== 'string' || typeof flag.message !== 'string') return null
  const line = Number.isSafeInteger(flag.line) && (flag.line as number) > 0 ? flag.line! : null
  return { rule: flag.rule, path: flag.path, line, message: flag.message }
}

/** True when Cairn wrote the commit: one of its identities as author and as committer. */
export function isCairnCommit(people: CommitPeople): boolean {
  return cairnActorOf(people) !== null
}

/** The actor whose identity wrote the commit, author and committer; null when none did. */
function cairnActorOf(people: CommitPeople): CairnActor | null {
  for (const actor of Object.keys(AUTHORS) as CairnActor[]) {
    const identity = AUTHORS[actor]
    if (samePerson(people.author, identity) && samePerson(people.committer, identity)) {
      return actor
    }
  }
  return null
}

function samePerson(a: Person, b: Person): boolean {
  return a.name === b.name && a.email === b.email
}

/** The longest author name kept: enough for any real name, not a page of text. */
export const MAX_AUTHOR_CHARS = 100

/**
 * The name an outside commit is shown under: its author's, or its committer's when the author
 * is one of Cairn's (an amend or a cherry-pick of Cairn's commit with git). Control characters
 * become spaces; an empty name (git refuses one, other tools may not) gives way to the email
 * ("ann@example.com"); with neither, there is no name.
 */
function outsideAuthorOf(people: CommitPeople): string | undefined {
  const cairns = Object.values(AUTHORS).some((identity) => samePerson(people.author, identity))
  const person = cairns ? people.committer : people.author
  const clean = (text: string) =>
    [...text]
      .map((c) => (/[\p{Cc}\u2028\u2029]/u.test(c) ? ' ' : c))
      .join('')
      .trim()
  const name = clean(person.name) || clean(person.email)
  if (name === '') return undefined
  const chars = [...name]
  return chars.length > MAX_AUTHOR_CHARS
    ? `${chars.slice(0, MAX_AUTHOR_CHARS - 1).join('')}…`
    : name
}

// Trailer values and the subject must stay on one line: `%`, control characters and
// line separators are percent-encoded (memory paths never contain them, recovered files might).
function encodeValue(value: string): string {
  let out = ''
  for (const c of value) {
    const code = c.charCodeAt(0)
    const unsafe = c === '%' || code < 0x20 || code === 0x7f || code === 0x85
    if (unsafe || code === 0x2028 || code === 0x2029) {
      const hex = code.toString(16).toUpperCase()
      out += code < 0x100 ? `%${hex.padStart(2, '0')}` : `%u${hex.padStart(4, '0')}`
    } else out += c
  }
  return out
}

function decodeValue(value: string): string {
  return value.replace(/%u([0-9A-F]{4})|%([0-9A-F]{2})/g, (_, long?: string, short?: string) =>
    String.fromCharCode(Number.parseInt(long ?? short ?? '', 16)),
  )
}
