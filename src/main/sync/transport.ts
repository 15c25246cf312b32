/**
 * Talking to the remote: isomorphic-git's fetch and push over `isomorphic-git/http/node`,
 * with the token handed over only when the server asks for it, and every failure turned into
 * a plain sentence with a code (unreachable, refused, not a repository, interrupted).
 */
import git from 'isomorphic-git'
import nodeHttp from 'isomorphic-git/http/node'
import path from 'node:path'
import { disk } from '../lib/disk'
import { diskProblem, isDiskProblem } from '../lib/disk-errors'
import { CairnError } from '../lib/errors'
import { hasInvisible } from '../../shared/invisible'
import type { Logger } from '../lib/logger'
import {
  cleanInterruptedFetch,
  clearRefWay,
  fetchFs,
  gitFs,
  readRef,
  takeUnjudgedPacks,
  type UnjudgedPack,
} from './git-fs'

/** Where sync goes and who it says it is; the token never leaves the main process. */
export interface RemoteSpec {
  readonly url: string
  readonly username: string
  readonly token: string | null
  /** Quiet time on a connection before it counts as dropped (default `IDLE_TIMEOUT_MS`). */
  readonly idleTimeoutMs?: number
  /** Aborts the requests on their way (the person's Stop): their connections are let go. */
  readonly signal?: AbortSignal
  /** Told when the fetch mends damage of its own (a folder kept aside in `cairn-damaged/`). */
  readonly logger?: Logger
}

/** The one branch memory lives on, here and on the remote. */
export const REMOTE_BRANCH = 'refs/heads/main'
/** isomorphic-git's name for the remote: the last remote `main` seen is kept under it. */
export const REMOTE_NAME = 'cairn-sync'
export const TRACKING_REF = `refs/remotes/${REMOTE_NAME}/main`

/** Quiet time on a connection before it counts as dropped, unless the remote says otherwise. */
export const IDLE_TIMEOUT_MS = 60_000

type HttpRequest = Parameters<typeof nodeHttp.request>[0]
type HttpResponse = Awaited<ReturnType<typeof nodeHttp.request>>

// isomorphic-git's node client, with sockets that give up when the server goes silent.
async function send(request: HttpRequest, trace: Trace): Promise<HttpResponse> {
  const answer = await nodeHttp.request({
    ...request,
    ...(trace.signal ? { signal: trace.signal } : {}),
    fetchOptions: { ...request.fetchOptions, timeout: trace.idleTimeoutMs },
  })
  trace.answered = true
  return answer.body ? { ...answer, body: watched(answer.body, trace) } : answer
}

/** Bytes an answer must bring in each quiet time while it lasts (as git's http.lowSpeedLimit). */
export const LOW_SPEED_BYTES = 1024

/**
 * An answer's body that gives up when a whole quiet time passes with fewer than
 * `LOW_SPEED_BYTES` arriving: a server dripping a byte a second is never quiet long enough for
 * the socket's own timeout, and would hold the sync (and the person's Sync now) for ever.
 */
async function* watched(
  body: AsyncIterableIterator<Uint8Array>,
  trace: Trace,
): AsyncGenerator<Uint8Array> {
  const iterator = body[Symbol.asyncIterator]()
  let done = false
  let windowStart = performance.now()
  let bytes = 0
  try {
    for (;;) {
      const next = await iterator.next()
      if (next.done) {
        done = true
        return
      }
      bytes += next.value.length
      if (performance.now() - windowStart >= trace.idleTimeoutMs) {
        if (bytes < LOW_SPEED_BYTES) {
          trace.tooSlow = true
          throw new Error('The answer came too slowly')
        }
        windowStart = performance.now()
        bytes = 0
      }
      yield next.value
    }
  } finally {
    // Left before its end (given up here, or by a parse): the connection is let go.
    if (!done) await iterator.return?.()
  }
}

/**
 * Checks and normalizes a remote address: http(s) only, no credentials inside it (they go in
 * the username and token fields, where the token is kept encrypted).
 */
export function checkRemoteUrl(raw: string): string {
  const trimmed = raw.trim()
  // The URL parser drops tabs and line breaks and percent-encodes a bidi control in the path,
  // so the address saved would not be the one shown while it was typed, where a right-to-left
  // override shows its letters in another order (`…/\u202Etig.yromem` reads `memory.git`).
  if (hasInvisible(trimmed)) {
    throw new CairnError(
      'sync-invalid-url',
      'The address holds an invisible character (a line break, or a mark that changes the direction of the text, so the address shows in another order than it is). Type the address again, or paste it from the repository’s page.',
    )
  }
  let url: URL
  try {
    url = new URL(trimmed)
  } catch {
    throw new CairnError(
      'sync-invalid-url',
      'Enter the repository’s HTTPS address, for example https://github.com/you/memory.git.',
    )
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CairnError(
      'sync-invalid-url',
      'Cairn syncs over HTTPS: enter an address that starts with https:// (SSH addresses are not supported).',
    )
  }
  if (url.username || url.password) {
    throw new CairnError(
      'sync-invalid-url',
      'Put the username and token in their own fields, not in the address.',
    )
  }
  if (url.search || url.hash) {
    throw new CairnError('sync-invalid-url', 'The address must not contain ? or #.')
  }
  return url.href
}

/** True for an address whose traffic stays on this machine. */
export function isLoopback(url: string): boolean {
  const host = new URL(url).hostname
  return host === 'localhost' || host === '127.0.0.1' || host === '[::1]'
}

/** What one fetch or push learnt of the server's answers, for `transportError`. */
interface Trace {
  /** The server's advertisement was read whole. */
  handshakeDone: boolean
  /** Some answer arrived (its status line, at least). */
  answered: boolean
  /** The advertisement (the first answer) began as git's does, or said it was git's. */
  advertised: boolean
  /** The answer to the service's POST came as something other than git's (a web page). */
  notGit: boolean
  /** The host (and port) of another origin the remote redirected to, if it did. */
  redirectedTo?: string
  /** The quiet time after which a connection was given up. */
  readonly idleTimeoutMs: number
  /** An answer was given up for coming too slowly (under `LOW_SPEED_BYTES` a quiet time). */
  tooSlow?: boolean
  /** The person's Stop: aborts every request of the fetch or push. */
  readonly signal?: AbortSignal
}

function newTrace(remote?: Pick<RemoteSpec, 'idleTimeoutMs' | 'signal'>): Trace {
  return {
    handshakeDone: false,
    answered: false,
    advertised: false,
    notGit: false,
    idleTimeoutMs: remote?.idleTimeoutMs ?? IDLE_TIMEOUT_MS,
    ...(remote?.signal ? { signal: remote.signal } : {}),
  }
}

/**
 * The client for one fetch or push, noting when its handshake is done: isomorphic-git sends
 * the service's POST only once it has read the server's advertisement whole, so an answer it
 * cannot parse after that is a damaged or cut answer (a proxy's hiccup, a pack cut short),
 * not an address that holds no repository — unless that answer does not say it is git's (a
 * sign-in page, a firewall's page), which comes again on every try.
 */
function tracedHttp(trace: Trace) {
  return {
    request: async (request: HttpRequest) => {
      const post = (request.method ?? 'GET').toUpperCase() === 'POST'
      if (post) trace.handshakeDone = true
      // A request without a body follows its redirects here, noting one to another origin; a
      // request with a body is left to the client, which follows its redirects itself.
      if (request.body === undefined) {
        const answer = await followNoting(request, trace)
        if (answer.statusCode !== 200) return answer
        const type = contentTypeOf(answer)
        if (type !== null) {
          trace.advertised = /^application\/x-git-[a-z-]+-advertisement\b/i.test(type)
          return answer
        }
        // No content type at all (a proxy that drops headers): git's own start tells.
        const { start, ended, whole } = await peek(answer, PEEK_BYTES)
        trace.advertised = startsAsGit(start, ended, ADVERTISEMENT_STARTS)
        return whole
      }
      const answer = await send(request, trace)
      if (!post || answer.statusCode !== 200) return answer
      const type = contentTypeOf(answer)
      if (type !== null) {
        // Only an answer that says nothing of itself is judged by its bytes: one that says it
        // is something else (a sign-in page's text/html) is that, whatever it holds.
        trace.notGit = !/^application\/x-git-[a-z-]+-result\b/i.test(type)
        return answer
      }
      const { start, ended, whole } = await peek(answer, PEEK_BYTES)
      trace.notGit = !startsAsGit(start, ended, RESULT_STARTS)
      return whole
    },
  }
}

// What git's answers begin with: a pkt-line, four hex digits giving the length of the line
// they start (themselves included), then what that line says. The answer to a request:
//   0008NAK\n   0031ACK <id>\n   0038\x01PACK…   (upload-pack; \x01-\x03 a side-band packet)
//   000eunpack ok\n   0030\x01000eunpack ok\n…    (receive-pack)
//   000dpackfile\n   0013acknowledgments\n        (protocol v2)
// and the advertisement: `001e# service=git-upload-pack\n` (or v2's `000eversion 2\n`).
const RESULT_STARTS = [
  'NAK',
  'ACK ',
  'ERR ',
  'shallow ',
  'unshallow ',
  'unpack ',
  'acknowledgments',
  'packfile',
  'shallow-info',
  '\x01',
  '\x02',
  '\x03',
]
const ADVERTISEMENT_STARTS = ['# service=git-', 'version 2', 'ERR ']
/** Enough of an answer to read its first pkt-line's length and its longest known start. */
const PEEK_BYTES = 24
/** The longest pkt-line git sends (LARGE_PACKET_MAX). */
const MAX_PKT_LINE = 65520

/**
 * Whether an answer's first bytes can be git's, by git's pkt-line grammar: a length (four hex
 * digits) that a line can have, and a line that begins as one of `starts` does. An answer cut
 * short (nothing at all, or part of the length) can still be git's: one damaged on the way.
 * "2024-12-05 maintenance" begins with four hex digits too, but no line of git's says that.
 */
export function startsAsGit(
  start: Uint8Array,
  ended: boolean,
  starts: ReadonlyArray<string>,
): boolean {
  const text = Buffer.from(start).toString('latin1')
  if (text.length < 4) return ended && /^[0-9a-fA-F]*$/.test(text)
  if (!/^[0-9a-fA-F]{4}$/.test(text.slice(0, 4))) return false
  const length = parseInt(text.slice(0, 4), 16)
  if (length < 4 || length > MAX_PKT_LINE) return false
  // What arrived of the line (an answer may end inside it: cut on the way).
  const line = text.slice(4, length)
  return starts.some((known) =>
    line.length >= known.length
      ? line.startsWith(known)
      : known.startsWith(line) && ended && text.length < length,
  )
}

/** The answer's content type, or null when it has none (a header a proxy dropped). */
function contentTypeOf(answer: HttpResponse): string | null {
  const type = answer.headers?.['content-type']
  return typeof type === 'string' && type.trim() !== '' ? type : null
}

/**
 * Reads the first `bytes` of an answer's body (fewer when it is shorter: `ended`), and gives
 * back an answer whose body still yields every byte, those first.
 */
async function peek(
  answer: HttpResponse,
  bytes: number,
): Promise<{ start: Buffer; ended: boolean; whole: HttpResponse }> {
  const body = answer.body
  if (!body) return { start: Buffer.alloc(0), ended: true, whole: answer }
  const iterator = body[Symbol.asyncIterator]()
  const read: Uint8Array[] = []
  let size = 0
  let done = false
  while (size < bytes) {
    const next = await iterator.next()
    if (next.done) {
      done = true
      break
    }
    read.push(next.value)
    size += next.value.length
  }
  async function* replay(): AsyncGenerator<Uint8Array> {
    try {
      yield* read
      while (!done) {
        const next = await iterator.next()
        if (next.done) done = true
        else yield next.value
      }
    } finally {
      // Left before its end (a parse that gave up): the connection is let go, as the client's
      // own body would let it go.
      if (!done) await iterator.return?.()
    }
  }
  return { start: Buffer.concat(read), ended: done, whole: { ...answer, body: replay() } }
}

/** Redirects one request may follow, as isomorphic-git's client allows. */
const MAX_REDIRECTS = 10

/**
 * Sends a request without a body, following redirects the way isomorphic-git's client does
 * (the Authorization header only within one origin, as git does), and notes in `trace` a
 * redirect to another origin: that server's refusal is about the redirect, not the token.
 */
async function followNoting(request: HttpRequest, trace: Trace): Promise<HttpResponse> {
  let next = request
  for (let redirects = 0; ; redirects++) {
    const response = await send(
      { ...next, fetchOptions: { ...next.fetchOptions, followRedirects: false } },
      trace,
    )
    const location = response.headers?.['location']
    if (response.statusCode < 300 || response.statusCode >= 400 || !location) return response
    // The redirect's own body is not read; draining it frees the socket.
    for await (const chunk of response.body ?? []) void chunk
    if (redirects >= MAX_REDIRECTS) throw new Error('too many redirects')
    const from = new URL(next.url)
    const to = new URL(location, from)
    const headers = { ...next.headers }
    for (const name of Object.keys(headers)) {
      const lower = name.toLowerCase()
      if (lower === 'host' || (to.origin !== from.origin && lower === 'authorization')) {
        delete headers[name]
      }
    }
    if (to.origin !== from.origin) trace.redirectedTo = to.host
    next = { ...next, url: to.href, headers }
  }
}

function authOf(remote: RemoteSpec, refused: { value: boolean }) {
  return {
    onAuth: () =>
      remote.token ? { username: remote.username || 'cairn', password: remote.token } : undefined,
    onAuthFailure: () => {
      refused.value = true
      return { cancel: true }
    },
  }
}

/** The remote's `main` (null when the repository is empty or has no `main`). */
export async function remoteHead(remote: RemoteSpec): Promise<string | null> {
  const refused = { value: false }
  const trace = newTrace(remote)
  try {
    const refs = await git.listServerRefs({
      http: tracedHttp(trace),
      url: remote.url,
      prefix: REMOTE_BRANCH,
      ...authOf(remote, refused),
    })
    return refs.find((ref) => ref.ref === REMOTE_BRANCH)?.oid ?? null
  } catch (error) {
    throw transportError(error, refused.value, 'reach', '', trace)
  }
}

/**
 * Fetches the remote's `main` into the repository (objects, and the tracking ref) and returns
 * it, or null when the remote has none. Changes nothing else: never `main`, never the folder.
 */
export async function fetchMain(
  gitdir: string,
  remote: RemoteSpec,
  options: {
    readonly keepTracking?: boolean
    /** Told each pack this fetch wrote that was not there before (`pack-<checksum>`). */
    readonly onPack?: (name: string) => void
    /**
     * The commits every ref named before the fetch began, noted beside each pack told to
     * `onPack` (its `.keep`): a refusal's removal walks no further back than them.
     */
    readonly since?: ReadonlyArray<string>
  } = {},
): Promise<string | null> {
  return oneAtATime(gitdir, async () => {
    // A fetch of another address (Test connection) leaves the last `main` seen of this
    // remote as it was: the next sync's "have", and what a push's answer is read from.
    const tracked = options.keepTracking ? await readRef(gitdir, TRACKING_REF) : null
    try {
      return await fetchInto(gitdir, remote, options.onPack, options.since)
    } finally {
      if (options.keepTracking) await putTrackingBack(gitdir, tracked)
    }
  })
}

/**
 * The packs earlier fetches brought that no sync has judged yet (`takeUnjudgedPacks`), now
 * held by the caller, which releases or leaves each. One at a time with fetches and pushes.
 */
export function unjudgedPacks(gitdir: string): Promise<UnjudgedPack[]> {
  return oneAtATime(gitdir, async () => takeUnjudgedPacks(gitdir))
}

/**
 * Drops the tracking ref (the remote's `main` last seen): the next fetch then starts from
 * local `main`. One at a time with fetches and pushes, which read and write it. What is in the
 * way of the ref (a folder in its place, a file where its folder goes) is kept aside first, as
 * a fetch does: a delete met it as EISDIR or ENOTDIR and the sync stopped part-way.
 */
export function forgetTracking(gitdir: string, logger?: Logger): Promise<void> {
  return setTracking(gitdir, null, logger)
}

/**
 * Sets the tracking ref back to `oid` (the remote's `main` last seen before a fetch whose
 * content the sync refused; null drops it), what is in its way kept aside first. One at a time
 * with fetches and pushes.
 */
export async function setTracking(
  gitdir: string,
  oid: string | null,
  logger?: Logger,
): Promise<void> {
  await oneAtATime(gitdir, async () => {
    clearRefWay(gitdir, TRACKING_REF, logger)
    await putTrackingBack(gitdir, oid)
  })
}

async function putTrackingBack(gitdir: string, oid: string | null): Promise<void> {
  if (oid) await git.writeRef({ fs: gitFs, gitdir, ref: TRACKING_REF, value: oid, force: true })
  else await git.deleteRef({ fs: gitFs, gitdir, ref: TRACKING_REF })
}

/**
 * Fetches and pushes into one repository run one at a time: each fetch first clears what an
 * interrupted one left (a pack without its index, temp files), which in a fetch still running
 * is its own pack being stored ("Test connection" pressed during a sync deleted it, and every
 * later sync said the history was damaged).
 */
const transfers = new Map<string, { tail: Promise<unknown>; count: number }>()

async function oneAtATime<T>(gitdir: string, task: () => Promise<T>): Promise<T> {
  const key = path.resolve(gitdir)
  const queue = transfers.get(key) ?? { tail: Promise.resolve(), count: 0 }
  transfers.set(key, queue)
  queue.count++
  const mine = queue.tail.then(task)
  queue.tail = mine.catch(() => undefined)
  try {
    return await mine
  } finally {
    if (--queue.count === 0) transfers.delete(key)
  }
}

/** How many fetches and pushes into `gitdir` run or wait (tests, and nothing else). */
export function transfersInProgress(gitdir: string): number {
  return transfers.get(path.resolve(gitdir))?.count ?? 0
}

async function fetchInto(
  gitdir: string,
  remote: RemoteSpec,
  onPack?: (name: string) => void,
  since?: ReadonlyArray<string>,
): Promise<string | null> {
  refuseLinkedPackFolder(gitdir)
  cleanInterruptedFetch(gitdir)
  clearRefWay(gitdir, TRACKING_REF, remote.logger)
  await forgetBrokenTracking(gitdir)
  await ensureRefspec(gitdir)
  const refused = { value: false }
  // The best "have" is the remote `main` seen last time: the server knows it, so it sends
  // only what came since.
  const have = (await readRef(gitdir, TRACKING_REF)) ? TRACKING_REF : REMOTE_BRANCH
  const held = fetchFs(gitdir, onPack, since)
  const trace = newTrace(remote)
  try {
    const result = await git.fetch({
      fs: held.fs,
      http: tracedHttp(trace),
      gitdir,
      url: remote.url,
      remote: REMOTE_NAME,
      ref: have,
      remoteRef: REMOTE_BRANCH,
      singleBranch: true,
      tags: false,
      cache: {},
      ...authOf(remote, refused),
    })
    // The pack and its index are in place: now the ref may point into them.
    await held.flush()
    return result.fetchHead ?? null
  } catch (error) {
    if ((error as { code?: string }).code === 'NotFoundError') return null
    throw transportError(error, refused.value, 'fetch', '', trace)
  }
}

/**
 * Refuses a fetch into a pack folder that is a link (`history.git/objects/pack` to a folder
 * elsewhere, which open keeps: its packs are the history, read through it): the fetch's pack,
 * its index and `.keep` went through it, outside the data folder, as no other write of Cairn's
 * does (maintenance, open's and a fetch's clean-ups refuse it too). Nothing is written.
 */
function refuseLinkedPackFolder(gitdir: string): void {
  const stats = disk.lstatIfThere(path.join(gitdir, 'objects', 'pack'))
  if (stats === undefined || stats.isDirectory()) return
  throw new CairnError(
    'io-error',
    'The sync did not fetch: the history’s pack folder (history.git/objects/pack) is a link to another place, and Cairn writes nothing through it. Put a folder holding those packs in its place, then sync again.',
  )
}

/**
 * Pushes `local` (the local `main` as the history holds it) to the remote's `main`, which must
 * be an ancestor of it. `fetched`: the remote's `main` the push is based on (what the sync's
 * fetch found), which tells a lost race from a refusal. `lastAttempt`: the sync tries no more
 * pushes after this one.
 *
 * The commit is passed, never read from `refs/heads/main`: the push runs outside the serial
 * queue, and a commit meanwhile writes that file in place (docs/durability.md), so a read
 * racing the write could see part of each value and the push fail for a commit that does
 * not exist.
 */
export async function pushMain(
  gitdir: string,
  remote: RemoteSpec,
  local: string,
  fetched?: string | null,
  options: { readonly lastAttempt?: boolean } = {},
): Promise<void> {
  return oneAtATime(gitdir, () =>
    pushInto(gitdir, remote, local, fetched, options.lastAttempt ?? false),
  )
}

async function pushInto(
  gitdir: string,
  remote: RemoteSpec,
  local: string,
  fetched: string | null | undefined,
  lastAttempt: boolean,
): Promise<void> {
  const refused = { value: false }
  // What the server printed (its hooks' `remote:` lines): why it refused, in its own words.
  const said: string[] = []
  const trace = newTrace(remote)
  try {
    await git.push({
      fs: gitFs,
      http: tracedHttp(trace),
      gitdir,
      url: remote.url,
      remote: REMOTE_NAME,
      // A commit id as the local ref: isomorphic-git sends it as it is, reading no ref file.
      ref: local,
      remoteRef: REMOTE_BRANCH,
      force: false,
      cache: {},
      onMessage: (message) => {
        if (said.join('').length < 4_000) said.push(message)
      },
      ...authOf(remote, refused),
    })
  } catch (error) {
    const translated = transportError(error, refused.value, 'push', said.join(''), trace)
    const refusal = refusalOfPush(error)
    // On a busy remote (a bot committing on every push) the branch moves during every push: a
    // refusal in a policy's known words is then the server's reason on the sync's last try,
    // said, and not retried for ever as a race. Any other words stay a race: servers word a
    // lost race their own way (JGit: "failed to lock", "non-fast forward"), and a race called
    // a refusal would tell the person to fix a server where nothing is wrong.
    const stands =
      lastAttempt &&
      refusal !== null &&
      !RACE.test(refusal) &&
      POLICY.test(`${refusal}\n${said.join('')}`)
    if (fetched !== undefined && refusal !== null && !stands) {
      // Servers word a lost race their own way (GitLab and Gitea: "incorrect old value
      // provided"): what happened decides. The branch moved since the fetch: a race, worth a
      // fetch, a merge and another push. It did not: the server's reason stands — except a
      // race's own words ("cannot lock ref" while another push is still landing), which are
      // retried as before, at most four times.
      const now = await remoteHead(remote).catch(() => undefined)
      if (now !== undefined && now !== fetched) throw raceLost()
    }
    throw translated
  }
}

// isomorphic-git records the remote's `main` through the remote's fetch refspec in the
// repository's config (the address itself is passed on each call, never stored).
async function ensureRefspec(gitdir: string): Promise<void> {
  const path = `remote.${REMOTE_NAME}.fetch`
  const refspec = `+${REMOTE_BRANCH}:${TRACKING_REF}`
  if ((await git.getConfig({ fs: gitFs, gitdir, path })) === refspec) return
  await git.setConfig({ fs: gitFs, gitdir, path, value: refspec })
}

// A fetch killed between writing the tracking ref and its pack leaves the ref pointing at
// nothing; git (and fsck) must never see such a ref.
async function forgetBrokenTracking(gitdir: string): Promise<void> {
  const oid = await readRef(gitdir, TRACKING_REF)
  if (!oid) return
  try {
    await git.readCommit({ fs: gitFs, gitdir, oid, cache: {} })
  } catch (error) {
    // A disk that fails is not a ref to nothing: the sync stops, changing nothing.
    if (isDiskProblem(error)) throw error
    await git.deleteRef({ fs: gitFs, gitdir, ref: TRACKING_REF })
  }
}

type Stage = 'reach' | 'fetch' | 'push'

// Errors of this machine's disk while a fetch stores what arrived (never the network's: a
// socket's ETIMEDOUT is the connection, not the disk).
const DISK_CODES = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS', 'EMFILE', 'ENFILE'])

function diskError(error: unknown): CairnError | null {
  const problem = diskProblem(error)
  const code = (error as { code?: string } | null)?.code ?? ''
  const onFile = typeof (error as { path?: unknown } | null)?.path === 'string'
  if (!problem || !(DISK_CODES.has(code) || ((code === 'EACCES' || code === 'EPERM') && onFile))) {
    return null
  }
  return new CairnError(
    problem.code,
    `The sync could not store what it fetched because ${problem.reason}. Nothing was lost; Cairn tries again on the next sync.`,
  )
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ETIMEDOUT',
  'ECONNABORTED',
])
const BROKEN_CODES = new Set(['ECONNRESET', 'EPIPE', 'ERR_STREAM_PREMATURE_CLOSE'])

/**
 * Turns what isomorphic-git or the network threw into a sentence with a code. `trace`: what
 * the fetch or push saw of the server's answers before it failed.
 */
export function transportError(
  error: unknown,
  authRefused: boolean,
  stage: Stage,
  serverSaid = '',
  trace: Trace = newTrace(),
): CairnError {
  if (error instanceof CairnError) return error
  const translated = diskError(error) ?? translate(error, authRefused, stage, serverSaid, trace)
  // The original stays attached for the log; only the sentence reaches the window.
  Object.defineProperty(translated, 'cause', { value: error, enumerable: false })
  return translated
}

function translate(
  error: unknown,
  authRefused: boolean,
  stage: Stage,
  serverSaid: string,
  trace: Trace,
): CairnError {
  const e = error as {
    code?: string
    message?: string
    data?: {
      statusCode?: number
      reason?: string
      result?: { refs?: Record<string, { ok?: boolean; error?: string }> }
    }
  }
  const code = e?.code ?? ''
  const status = e?.data?.statusCode
  if (authRefused || code === 'UserCanceledError' || status === 401 || status === 403) {
    if (trace.redirectedTo !== undefined) {
      return new CairnError(
        'sync-redirected',
        `The remote redirected Cairn to another address (${trace.redirectedTo}), and Cairn does not send your token there. If you trust that address, enter it as the remote’s address and sync again.`,
      )
    }
    return new CairnError(
      'sync-auth',
      status === 403
        ? 'The remote refused access: the token may not have permission to read and write this repository.'
        : 'The remote refused the username or token. Check them and try again.',
    )
  }
  // The address answered the fetch that came first, so a refusal of the upload is about the
  // upload (a proxy's body limit, a server's policy), not about the address.
  if (stage === 'push' && status !== undefined && status >= 400 && status < 500) {
    return new CairnError(
      'sync-push-refused',
      status === 413
        ? 'The server refused the upload as too large. Its administrator can raise the limit on uploads (for example a proxy’s body size limit).'
        : `The remote refused the push (HTTP ${status}).`,
    )
  }
  if (trace.tooSlow) {
    const seconds = Math.max(1, Math.round(trace.idleTimeoutMs / 1000))
    return new CairnError(
      'sync-interrupted',
      `The remote’s answer came too slowly to finish (under 1 KB in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}). Nothing was lost; Cairn tries again on the next sync.`,
    )
  }
  // An answer that cannot be parsed once the handshake was read whole is a damaged one (cut
  // short, garbled on the way): the address is fine, and the sync is worth trying again.
  const unparsable = code === 'SmartHttpError' || code === 'ParseError'
  if (unparsable && trace.notGit) {
    // Not a damaged answer but another one, which every try would get again.
    return new CairnError(
      'sync-not-a-repository',
      'That address answers, but the sync’s request got something other than git back (a sign-in page, or a proxy or firewall in the way). Check the address and the network, then sync again.',
    )
  }
  // The first answer began as git's (or said it was git's) and still could not be read: it
  // was cut or damaged on the way, like a pack, and is worth trying again.
  if (unparsable && (trace.handshakeDone || trace.advertised)) {
    return new CairnError(
      'sync-interrupted',
      'The remote’s answer broke off or arrived damaged during the sync. Nothing was lost; Cairn tries again on the next sync.',
    )
  }
  if (status === 404 || unparsable || (status && status < 500)) {
    return new CairnError(
      'sync-not-a-repository',
      status === 404
        ? 'No git repository was found at that address. Check the URL (it usually ends in .git).'
        : 'That address answers, but not as a git repository. Check the URL (it usually ends in .git).',
    )
  }
  const refusal = refusalOfPush(error)
  if (refusal !== null && !RACE.test(refusal)) {
    // A hook, push protection or a protected branch: trying again sends the same refusal.
    return refusedWith(error, serverSaid)
  }
  if (code === 'PushRejectedError' || code === 'GitPushError') return raceLost()
  if (NETWORK_CODES.has(code) && stage === 'reach') {
    return new CairnError(
      'sync-unreachable',
      'The remote could not be reached. Check your connection and the address.',
    )
  }
  if (!NETWORK_CODES.has(code) && /^request timed out$/i.test(e?.message ?? '')) {
    // The server took the connection and then said nothing for the whole quiet time.
    const seconds = Math.max(1, Math.round(trace.idleTimeoutMs / 1000))
    const quiet = `${seconds} ${seconds === 1 ? 'second' : 'seconds'}`
    return stage === 'reach' || !trace.answered
      ? new CairnError(
          'sync-unreachable',
          `The remote did not answer (nothing for ${quiet}). Check your connection and the address.`,
        )
      : new CairnError(
          'sync-interrupted',
          `The remote stopped answering during the sync (nothing for ${quiet}). Nothing was lost; Cairn tries again on the next sync.`,
        )
  }
  if (
    NETWORK_CODES.has(code) ||
    BROKEN_CODES.has(code) ||
    /timed out|socket hang up|premature|aborted/i.test(e?.message ?? '')
  ) {
    return stage === 'reach' || code === 'ECONNREFUSED' || code === 'ENOTFOUND'
      ? new CairnError(
          'sync-unreachable',
          'The remote could not be reached. Check your connection and the address.',
        )
      : new CairnError(
          'sync-interrupted',
          'The connection to the remote broke during the sync. Nothing was lost; Cairn tries again on the next sync.',
        )
  }
  if (status && status >= 500) {
    return new CairnError(
      'sync-unreachable',
      `The remote’s server failed (HTTP ${status}). Cairn tries again on the next sync.`,
    )
  }
  return new CairnError(
    'sync-interrupted',
    'The sync stopped part-way. Nothing was lost; Cairn tries again on the next sync.',
  )
}

function raceLost(): CairnError {
  return new CairnError(
    'sync-rejected',
    'The remote did not accept the update (it changed meanwhile, or the branch is protected). Cairn will try again.',
  )
}

// The server's reason for refusing a push (`ng <ref> <reason>`), in its words and its hooks'.
function refusedWith(error: unknown, serverSaid: string): CairnError {
  const words = plainServerText(serverSaid)
  const reason = plainServerText(refusalOfPush(error) ?? '')
  return new CairnError(
    'sync-push-refused',
    `The remote refused the update: “${reason}”.${words ? ` It said: “${words}”.` : ''} Cairn does not try again by itself; sync again once that is settled on the server.`,
  )
}

function refusalOfPush(error: unknown): string | null {
  const e = error as { code?: string; data?: { result?: { refs?: Record<string, RefResult> } } }
  return e?.code === 'GitPushError' ? refusalOf(e.data?.result?.refs) : null
}

type RefResult = { ok?: boolean; error?: string }

// What decides when the remote's `main` cannot be read after a refusal: the words servers use
// for "the branch moved since you fetched" (git's, then GitLab's and Gitea's, JGit's, Azure
// DevOps').
const RACE =
  /fetch first|non-fast-forward|non-fast forward|stale info|failed to update ref|cannot lock ref|incorrect old value|failed to lock|lock error|already been updated/i

// Words only a policy refusal uses (git's hooks, GitHub's protected branches and push
// protection GH0xx, GitLab's protected branches, Gerrit's "prohibited"): never a race's.
const POLICY =
  /hook declined|protected branch|\bGH0\d\d\b|push protection|rule violations|prohibited by|not allowed to push|permission denied|access denied/i

// The reason the server gave for the first branch it did not update (`ng <ref> <reason>`).
function refusalOf(
  refs: Record<string, { ok?: boolean; error?: string }> | undefined,
): string | null {
  for (const result of Object.values(refs ?? {})) {
    if (result.ok === false) return result.error ?? ''
  }
  return null
}

// A server's words as one short line of plain text: no control characters, at most 300.
function plainServerText(text: string): string {
  const line = text
    .replace(/^remote: ?/gm, '')
    // Colour codes some servers print: their escape character alone would leave "[31m".
    // eslint-disable-next-line no-control-regex
    .replace(/\x1b\[[0-9;]*[A-Za-z]/g, '')
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  return line.length > 300 ? `${line.slice(0, 299)}…` : line
}
