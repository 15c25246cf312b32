/**
 * Helpers for sync tests: machines (a real core on its own data folder) syncing through the
 * real git server of `test/fixtures/git-server.ts`, and second opinions from the git CLI.
 */
import { execFile, execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, afterEach, beforeAll, expect, onTestFinished } from 'vitest'
import type { RequestChannel, RequestPayload, RequestResults } from '../../shared/contract'
import type { SyncStatus } from '../../shared/types'
import { createFileSecretStore, createMemorySecretStore } from '../settings'
import { createCore, type Core, type HostActions } from '../core'
import { noHost } from '../app'
import type { HistoryGit, VersionedMemory } from '../history'
import { folderFiles, headFiles } from '../history/test-helpers'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk, type DiskCall } from '../lib/disk-hooks'
import { consoleLogger, createRecordingLogger, type Logger } from '../lib/logger'
import { startGitServer, type GitServer } from '../../../test/fixtures/git-server'
import { DEFAULT_LIMITS } from '../memory'
import { createSyncService, type SyncService } from './index'
import { TRACKING_REF } from './transport'

const run = promisify(execFile)

/** The tracking ref's file under `gitdir` (`refs/remotes/cairn-sync/main`). */
export const trackingFile = (gitdir: string): string =>
  path.join(gitdir, ...TRACKING_REF.split('/'))

/**
 * The git CLI on `gitdir` as another client would run it (`input` on stdin; commits by
 * "Other"), trimmed: what a sync test pushes to a remote behind Cairn's back, hostile objects
 * (`hash-object --literally`) among them. No user or system configuration is read.
 */
export function otherClient(
  gitdir: string,
  input: string | Buffer | null,
  ...args: string[]
): string {
  return execFileSync('git', ['--git-dir', gitdir, ...args], {
    encoding: 'utf8',
    ...(input !== null ? { input } : {}),
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: gitdir,
      GIT_AUTHOR_NAME: 'Other',
      GIT_AUTHOR_EMAIL: 'other@example.com',
      GIT_COMMITTER_NAME: 'Other',
      GIT_COMMITTER_EMAIL: 'other@example.com',
    },
  }).trim()
}

/**
 * Another client's push, to the bare repository `remote`, of a commit on its `main` whose folder
 * listing names `d.md` twice (git calls it damaged; Cairn refuses it). `tag` goes into the two
 * files' text, so each call brings objects of its own. Returns the commit, its tree and the two
 * files: what only it brought.
 */
export function pushDamagedListing(remote: string, tag = ''): string[] {
  const tip = otherClient(remote, null, 'rev-parse', 'main')
  const one = otherClient(remote, `one${tag && ` ${tag}`}\n`, 'hash-object', '-w', '--stdin')
  const two = otherClient(remote, `two${tag && ` ${tag}`}\n`, 'hash-object', '-w', '--stdin')
  const listing = Buffer.concat(
    [one, two].map((oid) => Buffer.concat([Buffer.from('100644 d.md\0'), Buffer.from(oid, 'hex')])),
  )
  const tree = otherClient(
    remote,
    listing,
    'hash-object',
    '-t',
    'tree',
    '--literally',
    '-w',
    '--stdin',
  )
  const bad = otherClient(remote, null, 'commit-tree', tree, '-p', tip, '-m', 'damaged listing')
  otherClient(remote, null, 'update-ref', 'refs/heads/main', bad)
  return [bad, tree, one, two]
}

/**
 * A sync service (machine "desktop", syncing only when told to) on `memory`'s data folder,
 * reaching the history through `git`: by default `memory.git`, or a wrapper of it that holds,
 * counts or interleaves its calls. The caller closes it before the memory.
 */
export function syncServiceOver(
  dataDir: string,
  memory: VersionedMemory,
  git: HistoryGit = memory.git,
  logger: Logger = createRecordingLogger(),
): SyncService {
  return createSyncService({
    dataDir,
    memory: {
      git,
      execute: memory.execute,
      readAt: memory.readAt,
      setMachine: memory.setMachine,
      limits: memory.limits,
    },
    tokens: createMemorySecretStore(),
    logger,
    host: noHost,
    importPolicy: async () => ({ secretScanning: false, limits: DEFAULT_LIMITS }),
    hostName: () => 'desktop',
    debounceMs: 3_600_000,
  })
}

/** Runs `task` with every disk call `matches` accepts failing with EIO; says how many failed. */
export async function withEio<T>(
  matches: (call: DiskCall) => boolean,
  task: () => Promise<T>,
): Promise<{ result: T; failed: number }> {
  let failed = 0
  const undo = setDisk(
    hookDisk(nodeDisk, (call) => {
      if (!matches(call)) return undefined
      failed++
      return errnoError(call, 'EIO')
    }).disk,
  )
  try {
    return { result: await task(), failed }
  } finally {
    undo()
  }
}

export interface Machine {
  readonly name: string
  readonly dir: string
  readonly core: Core
  /** Calls a channel; throws `Error(code: message)` when it fails. */
  call<C extends RequestChannel>(
    channel: C,
    payload?: RequestPayload<C>,
  ): Promise<RequestResults[C]>
  /** Calls a channel expecting a refusal; returns its code. */
  refused<C extends RequestChannel>(channel: C, payload?: RequestPayload<C>): Promise<string>
  write(file: string, content: string): Promise<void>
  remove(file: string): Promise<void>
  rename(from: string, to: string): Promise<void>
  /** Connects to `url` on `server` (its credentials unless told otherwise). */
  connect(server: GitServer, repo: string, token?: string): Promise<SyncStatus>
  sync(): Promise<SyncStatus>
  /** Memory files in the folder (relative path -> content). */
  files(): Promise<Map<string, string>>
  /** Runs the git CLI on this machine's history (never the server: that would block). */
  git(...args: string[]): string
  close(): Promise<void>
}

/** How `startMachine` sets a machine up. */
export type MachineOptions = NonNullable<Parameters<typeof startMachine>[1]>

/** A machine named `name` on a fresh data folder, syncing only when told to. */
export async function startMachine(
  name: string,
  options: {
    debounceMs?: number
    dataDir?: string
    host?: HostActions
    /** Judge names as macOS and Windows do (`Notes.md` is `notes.md`), whatever runs this. */
    namesFoldCase?: boolean
    /** Quiet time before a connection to the remote counts as dropped (default 60 s). */
    idleTimeoutMs?: number
    /** The first quick retry after a failure the network may mend (default 30 s). */
    retryFirstMs?: number
    /** Where the core logs (default: kept in memory; the console with SYNC_DEBUG set). */
    logger?: Logger
    /** The Cairn version this machine runs (default: the core's). */
    appVersion?: string
  } = {},
): Promise<Machine> {
  const dir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), `cairn-sync-${name}-`)))
  const logger =
    options.logger ?? (process.env['SYNC_DEBUG'] ? consoleLogger : createRecordingLogger())
  const core = await createCore({
    dataDir: dir,
    hostName: () => name,
    logger,
    // Kept in the data folder, like the app's, so a reopened machine still has it.
    syncTokenStore: createFileSecretStore({ file: path.join(dir, 'sync-token.json') }),
    syncDebounceMs: options.debounceMs ?? 3_600_000,
    env: {},
    ...(options.host ? { host: options.host } : {}),
    ...(options.namesFoldCase !== undefined ? { namesFoldCase: options.namesFoldCase } : {}),
    syncIdleTimeoutMs: options.idleTimeoutMs,
    syncRetryFirstMs: options.retryFirstMs,
    ...(options.appVersion !== undefined ? { appVersion: options.appVersion } : {}),
  })
  const call: Machine['call'] = async (channel, payload) => {
    const result = await core.dispatch(channel, payload)
    if (!result.ok) throw new Error(`${result.error.code}: ${result.error.message}`)
    return result.value as never
  }
  return {
    name,
    dir,
    core,
    call,
    async refused(channel, payload) {
      const result = await core.dispatch(channel, payload)
      if (result.ok) throw new Error(`${channel} succeeded but was expected to fail`)
      return result.error.code
    },
    async write(file, content) {
      await call('memory:write', { path: `/memories/${file}`, content })
    },
    async remove(file) {
      await call('memory:delete', { path: `/memories/${file}` })
    },
    async rename(from, to) {
      await call('memory:rename', { from: `/memories/${from}`, to: `/memories/${to}` })
    },
    async connect(server, repo, token) {
      return call('sync:configure', {
        url: server.url(repo),
        username: server.user,
        token: token ?? server.token,
        intervalMinutes: 0,
      })
    },
    sync: () => call('sync:now'),
    files: () => folderFiles(dir),
    git: (...args) =>
      execFileSync('git', ['--git-dir', path.join(dir, 'history.git'), ...args], {
        encoding: 'utf8',
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dir },
        maxBuffer: 64 * 1024 * 1024,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    async close() {
      await core.close()
      if (!options.dataDir) await rm(dir, { recursive: true, force: true, maxRetries: 10 })
    },
  }
}

/** What `useSyncServer` gives a test file. */
export interface SyncServer {
  /** The file's git server (started before its first test). */
  readonly server: GitServer
  /** A machine closed after the test that started it (its folder removed, unless given). */
  machine(name: string, dataDir?: string, options?: MachineOptions): Promise<Machine>
  /** A new empty repository on the server, named `<prefix>-<n>`. */
  newRepo(prefix: string): string
  /** Closes `machine` now, keeping its data folder to open again. */
  stop(machine: Machine): Promise<void>
  /**
   * A new repository (`<prefix>-<n>`) two machines share: `seed` fills the desktop's folder,
   * the desktop connects and syncs first, then the laptop (in `laptopDir`, when given) syncs
   * it down. The start of every two-machine conflict.
   */
  shared(
    prefix: string,
    seed: (desktop: Machine) => Promise<unknown>,
    laptopDir?: string,
    options?: MachineOptions,
  ): Promise<{ repo: string; laptop: Machine; desktop: Machine }>
  /**
   * A new repository (`<prefix>-<n>`) where the laptop (started with `laptopOptions`) is one
   * change behind: both synced `log.md` "one\n", then the desktop pushed "one\ntwo\n".
   */
  behind(
    prefix: string,
    laptopOptions?: MachineOptions,
  ): Promise<{ repo: string; laptop: Machine; desktop: Machine }>
  /**
   * A new repository (`<prefix>-<n>`) one laptop (started with `options`) synced alone: it wrote
   * `file` (`a.md` "a\n" unless given), connected and synced, idle.
   */
  alone(
    prefix: string,
    options?: MachineOptions,
    file?: readonly [name: string, content: string],
  ): Promise<{ repo: string; laptop: Machine }>
}

/**
 * The setup every two-machine sync test file shares: one git server for the file, and each
 * test's machines closed after it (so a failed test never leaves a core holding its lock).
 */
export function useSyncServer(): SyncServer {
  let server: GitServer | null = null
  const open: Machine[] = []
  let repos = 0
  beforeAll(async () => {
    server = await startGitServer()
  })
  afterAll(async () => {
    await server?.close()
  })
  afterEach(async () => {
    for (const machine of open.splice(0)) await machine.close()
  })
  const started = (): GitServer => {
    if (!server) throw new Error('the git server starts in beforeAll; use it inside a test')
    return server
  }
  const machine = async (
    name: string,
    dataDir?: string,
    options: MachineOptions = {},
  ): Promise<Machine> => {
    const made = await startMachine(name, dataDir ? { ...options, dataDir } : options)
    open.push(made)
    return made
  }
  const newRepo = (prefix: string): string => {
    const repo = `${prefix}-${++repos}`
    started().createRepo(repo)
    return repo
  }
  return {
    get server() {
      return started()
    },
    machine,
    newRepo,
    async stop(machine) {
      open.splice(open.indexOf(machine), 1)
      await machine.core.close()
    },
    async shared(prefix, seed, laptopDir, options) {
      const repo = newRepo(prefix)
      const laptop = await machine('laptop', laptopDir, options)
      const desktop = await machine('desktop', undefined, options)
      await seed(desktop)
      await desktop.connect(started(), repo)
      await desktop.sync()
      await laptop.connect(started(), repo)
      await laptop.sync()
      return { repo, laptop, desktop }
    },
    async behind(prefix, laptopOptions) {
      const repo = newRepo(prefix)
      const desktop = await machine('desktop')
      await desktop.write('log.md', 'one\n')
      await desktop.connect(started(), repo)
      expect((await desktop.sync()).state).toBe('idle')
      const laptop = await machine('laptop', undefined, laptopOptions)
      await laptop.connect(started(), repo)
      expect((await laptop.sync()).state).toBe('idle')
      await desktop.write('log.md', 'one\ntwo\n')
      expect((await desktop.sync()).state).toBe('idle')
      return { repo, laptop, desktop }
    },
    async alone(prefix, options, [name, content] = ['a.md', 'a\n']) {
      const laptop = await machine('laptop', undefined, options)
      await laptop.write(name, content)
      const repo = newRepo(prefix)
      await laptop.connect(started(), repo)
      expect((await laptop.sync()).state).toBe('idle')
      return { repo, laptop }
    },
  }
}

/** Resolves with the first status `machine` announces that `done` accepts. */
export function statusWhen(
  machine: Machine,
  done: (status: SyncStatus) => boolean,
): Promise<SyncStatus> {
  return new Promise((resolve) => {
    const off = machine.core.events.on((name, data) => {
      if (name === 'sync:state' && done(data as SyncStatus)) {
        off()
        resolve(data as SyncStatus)
      }
    })
  })
}

/** Each machine's sync is idle (its last sync completed, nothing waits). */
export async function expectIdle(...machines: ReadonlyArray<Machine>): Promise<void> {
  for (const machine of machines) expect((await machine.call('sync:status')).state).toBe('idle')
}

/** A machine's refs and what they point at, one a line (to compare before and after). */
export function refsOf(machine: Machine): string {
  return machine.git('for-each-ref', '--format=%(refname) %(objectname)')
}

/**
 * The checks after every case: the git CLI clones the remote and `fsck --strict` finds it
 * clean, each machine's repository is sound and its folder equals its HEAD tree.
 */
export async function expectSound(
  server: GitServer,
  repo: string,
  machines: ReadonlyArray<Machine>,
): Promise<string> {
  const clone = await mkdtemp(path.join(os.tmpdir(), 'cairn-clone-'))
  onTestFinished(() => rm(clone, { recursive: true, force: true, maxRetries: 10 }))
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: clone, GIT_TERMINAL_PROMPT: '0' }
  const url = server.url(repo).replace('http://', `http://${server.user}:${server.token}@`)
  await run('git', ['clone', '--quiet', '--mirror', url, path.join(clone, 'remote.git')], { env })
  await run(
    'git',
    ['--git-dir', path.join(clone, 'remote.git'), 'fsck', '--strict', '--no-dangling'],
    { env },
  )
  for (const machine of machines) {
    machine.git('fsck', '--strict', '--no-dangling')
    const head = headFiles(machine.dir)
    const folder = await machine.files()
    if (JSON.stringify([...head]) !== JSON.stringify([...folder])) {
      throw new Error(`${machine.name}'s folder differs from its HEAD tree`)
    }
  }
  return path.join(clone, 'remote.git')
}

/** Every line of every file in every commit of a repository (the union of its history). */
export function linesOfHistory(gitdir: string): Set<string> {
  const out = execFileSync(
    'git',
    ['--git-dir', gitdir, 'cat-file', '--batch-all-objects', '--batch'],
    {
      maxBuffer: 256 * 1024 * 1024,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' },
    },
  )
  const lines = new Set<string>()
  let at = 0
  while (at < out.length) {
    const headerEnd = out.indexOf(10, at)
    const [, type, size] = out.subarray(at, headerEnd).toString('latin1').split(' ')
    const start = headerEnd + 1
    const end = start + Number(size)
    if (type === 'blob') {
      for (const line of out.subarray(start, end).toString('utf8').split('\n')) lines.add(line)
    }
    at = end + 1
  }
  return lines
}

/** Lines written (the tests write one fact per line, so lines are what must never be lost). */
export function linesOf(...texts: string[]): string[] {
  return texts.flatMap((text) => text.split('\n')).filter((line) => line !== '')
}

/** A host whose save and open dialogs answer with the paths a test queues. */
export function dialogHost(): HostActions & { answer(path: string | null): void } {
  const answers: Array<string | null> = []
  const next = async () => {
    if (answers.length === 0) throw new Error('no dialog answer queued')
    return answers.shift() ?? null
  }
  return {
    answer: (path) => answers.push(path),
    openPath: async () => undefined,
    openExternal: async () => undefined,
    chooseSavePath: next,
    chooseOpenPath: next,
    noteUnsaved: () => undefined,
  }
}

/**
 * Two machines whose histories diverged on one file (`prefs.md`: the laptop's editor, the
 * desktop's theme, synced apart): the desktop's next sync fetches a pack and merges, to
 * "Editor: Zed … Theme: dark". The start of the disk-fault tests of a sync.
 */
export async function divergedMachines(
  sync: SyncServer,
  prefix: string,
): Promise<{ repo: string; laptop: Machine; desktop: Machine }> {
  const repo = sync.newRepo(prefix)
  const laptop = await sync.machine('laptop')
  const desktop = await sync.machine('desktop')
  await laptop.write('prefs.md', 'Editor: Vim\n\nkeep\n\nTheme: light\n')
  await laptop.connect(sync.server, repo)
  await laptop.sync()
  await desktop.connect(sync.server, repo)
  await desktop.sync()
  await laptop.write('prefs.md', 'Editor: Zed\n\nkeep\n\nTheme: light\n')
  await laptop.sync()
  await desktop.write('prefs.md', 'Editor: Vim\n\nkeep\n\nTheme: dark\n')
  return { repo, laptop, desktop }
}
