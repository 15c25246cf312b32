import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statfsSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { mkdir, mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, vi } from 'vitest'
import { nodeDisk, setDisk, type Disk } from '../lib/disk'
import { asTheAccount, errnoError, hookDisk, openedOn } from '../lib/disk-hooks'
import { LOCK_FILE } from '../lib/instance-lock'
import { createRecordingLogger } from '../lib/logger'
import type { Breather } from '../lib/time-slices'
import { AUTHORS, formatCommitMessage } from './commit-message'
import { openVersionedMemory, type VersionedMemoryOptions } from './index'
import { recordRestore } from './restore-intent'
import { serializeCommit, serializeTree, type RawTreeEntry } from './object-store'
import type { CommitSummary } from '../../shared/types'
import type { ExecuteOutcome, HistoryGit, Origin, VersionedMemory } from './types'

/** The side index's folder (four binary files; see index-file.ts). */
export function indexDirIn(dataDir: string): string {
  return path.join(dataDir, 'history.git', 'cairn-index')
}

/**
 * Drops the side index's newest entry, as a kill between the ref update and the index append
 * leaves it (its record is the last 64 bytes of `commits`; the rest is cut at open).
 */
export async function dropNewestIndexEntry(dataDir: string): Promise<void> {
  const file = path.join(indexDirIn(dataDir), 'commits')
  const handle = await open(file, 'r+')
  try {
    const { size } = await handle.stat()
    await handle.truncate(size - 64)
  } finally {
    await handle.close()
  }
}

/**
 * A fresh data folder under the OS temp dir; `cleanup` removes it. Tried again when a file
 * appears in a folder as it is removed (ENOTEMPTY): a history a test opened and left open
 * makes its object store's spare files in objects/ between commands, until the folder is gone.
 */
export async function tempDataDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-history-'))
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true, maxRetries: 10 }) }
}

/** The data folder, and the memory opened on it, of the test running (`memoryTestBed`). */
export interface MemoryTestBed {
  /** This test's data folder. */
  readonly dataDir: string
  /** The memory open on it (throws when none is: `memory: false`, or after `close`). */
  readonly memory: VersionedMemory
  /** Closes the memory (to change its folders as a closed Cairn would find them). */
  close(): Promise<void>
  /** Closes the memory if it is open and opens it again on the same folder, as a restart. */
  reopen(): Promise<VersionedMemory>
  /** Closes the memory, removes the folder and opens a memory on a fresh one. */
  startOver(): Promise<VersionedMemory>
}

/**
 * Gives each test of the calling file (or describe) a fresh data folder and, unless `memory`
 * is false, a versioned memory opened on it (`watch: false` unless said otherwise); after the
 * test the memory is closed and the folder removed. It registers its own beforeEach and
 * afterEach: the file's own afterEach hooks, registered after it, run before its (vitest runs
 * after-hooks last registered first), while the folder is still there.
 */
export function memoryTestBed(
  options: { readonly memory?: Omit<VersionedMemoryOptions, 'dataDir'> | false } = {},
): MemoryTestBed {
  let folder: { dir: string; cleanup: () => Promise<void> } | null = null
  let memory: VersionedMemory | null = null
  const open = async (): Promise<VersionedMemory> => {
    await close()
    memory = await openVersionedMemory({ watch: false, ...options.memory, dataDir: bed.dataDir })
    return memory
  }
  const close = async (): Promise<void> => {
    const open = memory
    memory = null
    await open?.close()
  }
  const bed: MemoryTestBed = {
    get dataDir() {
      if (!folder) throw new Error('memoryTestBed: no test is running')
      return folder.dir
    },
    get memory() {
      if (!memory) throw new Error('memoryTestBed: no memory is open')
      return memory
    },
    close,
    reopen: open,
    async startOver() {
      await close()
      await folder?.cleanup()
      folder = await tempDataDir()
      return open()
    },
  }
  beforeEach(async () => {
    folder = await tempDataDir()
    if (options.memory !== false) await open()
  })
  afterEach(async () => {
    try {
      await close()
    } finally {
      await folder?.cleanup()
    }
  })
  return bed
}

/** Runs the real git CLI against `<dataDir>/history.git` (the second opinion). */
export function gitCli(dataDir: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', path.join(dataDir, 'history.git'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir },
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/**
 * Runs the real git CLI as a person would, on `<dataDir>/history.git` with the memory folder as
 * its work tree (as docs/durability.md says): Ann Smith, no system or user configuration.
 */
export function gitAsAnn(dataDir: string, ...args: string[]): string {
  return execFileSync(
    'git',
    [
      '--git-dir',
      path.join(dataDir, 'history.git'),
      '--work-tree',
      path.join(dataDir, 'memories'),
      '-c',
      'user.name=Ann Smith',
      '-c',
      'user.email=ann@example.com',
      ...args,
    ],
    {
      encoding: 'utf8',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
}

/**
 * Runs the real git CLI in `cwd` as a fixed author, with no system or user configuration: for
 * tests that build a repository with git itself (packs, `git gc`) to read with Cairn's code.
 */
export function gitIn(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: cwd,
      GIT_AUTHOR_NAME: 'A',
      GIT_AUTHOR_EMAIL: 'a@example.invalid',
      GIT_COMMITTER_NAME: 'A',
      GIT_COMMITTER_EMAIL: 'a@example.invalid',
    },
  })
}

/** `git fsck --strict` output (throws when git reports an error). */
export function fsck(dataDir: string): string {
  return gitCli(dataDir, 'fsck', '--strict', '--no-dangling')
}

export function commitCount(dataDir: string): number {
  try {
    return Number(gitCli(dataDir, 'rev-list', '--count', 'main').trim())
  } catch {
    return 0
  }
}

/** Every file of HEAD's tree, per the git CLI, as path -> content. */
export function headFiles(dataDir: string): Map<string, string> {
  const files = new Map<string, string>()
  let listing: string
  try {
    listing = gitCli(dataDir, 'ls-tree', '-r', '-z', '--name-only', 'main')
  } catch {
    return files
  }
  for (const name of listing.split('\0').filter(Boolean)) {
    files.set(name, gitCli(dataDir, 'show', `main:${name}`))
  }
  return files
}

/** Every regular file in `<dataDir>/memories`, as relative path -> content. */
export async function folderFiles(dataDir: string): Promise<Map<string, string>> {
  const root = path.join(dataDir, 'memories')
  const files = new Map<string, string>()
  async function walk(dir: string, prefix: string): Promise<void> {
    for (const dirent of await readdir(dir, { withFileTypes: true })) {
      const relative = prefix ? `${prefix}/${dirent.name}` : dirent.name
      if (dirent.isDirectory()) await walk(path.join(dir, dirent.name), relative)
      else if (dirent.isFile()) {
        files.set(relative, await readFile(path.join(dir, dirent.name), 'utf8'))
      }
    }
  }
  await walk(root, '')
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)))
}

export function sorted(map: Map<string, string>): Map<string, string> {
  return new Map([...map].sort(([a], [b]) => (a < b ? -1 : 1)))
}

/** A small real file system (tmpfs) for full-disk tests; needs root. */
export interface SmallDisk {
  readonly dir: string
  /** Fills the disk with a filler file, leaving `spareBlocks` free blocks. */
  fill(spareBlocks?: number): Promise<void>
  /** Deletes the filler file. */
  free(): Promise<void>
  unmount(): Promise<void>
}

/**
 * Mounts a tmpfs of `size` (e.g. `2m`) on a fresh temp folder. Throws, loudly, when mounting
 * is impossible (not root, no CAP_SYS_ADMIN): a full-disk test must never pass by skipping.
 */
export async function mountSmallDisk(size = '2m'): Promise<SmallDisk> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-disk-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  } catch (error) {
    await rm(dir, { recursive: true, force: true, maxRetries: 10 })
    throw new Error(
      `Cannot mount a tmpfs for the full-disk test (${String((error as Error).message).trim()}). Run the tests as root with mount allowed.`,
      { cause: error },
    )
  }
  const filler = path.join(dir, 'filler')
  return {
    dir,
    async fill(spareBlocks = 0) {
      const { bavail, bsize } = statfsSync(dir)
      const room = (bavail - spareBlocks) * bsize
      const handle = await open(filler, 'a')
      try {
        const chunk = Buffer.alloc(64 * 1024, 1)
        let written = 0
        while (written < room) {
          const size = Math.min(chunk.length, room - written)
          try {
            await handle.write(chunk.subarray(0, size))
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break
            throw error
          }
          written += size
        }
      } finally {
        await handle.close()
      }
    },
    free: () => rm(filler, { force: true }),
    async unmount() {
      execFileSync('umount', [dir])
      await rm(dir, { recursive: true, force: true, maxRetries: 10 })
    },
  }
}

/**
 * True when HEAD's tree (per the git CLI, one call) holds exactly the folder's files, byte for
 * byte (compared by blob id).
 */
export async function headMatchesFolder(dataDir: string): Promise<boolean> {
  return (await headFolderDifferences(dataDir)).length === 0
}

/** The paths where HEAD's tree and the folder differ (empty when they match). */
export async function headFolderDifferences(dataDir: string): Promise<string[]> {
  let listing = ''
  try {
    listing = gitCli(dataDir, 'ls-tree', '-r', '-z', 'main')
  } catch (error) {
    // No commit yet: HEAD is empty. Any other failure of git (a damaged history, git not
    // started on a loaded machine) is thrown with git's words, not taken for an empty HEAD
    // that then differs from the folder everywhere.
    const said = String((error as { stderr?: unknown }).stderr ?? '')
    if (!/Not a valid object name main\b/.test(said)) {
      throw new Error(`git ls-tree failed: ${said.trim() || String(error)}`, { cause: error })
    }
  }
  const head = new Map<string, string>()
  for (const line of listing.split('\0').filter(Boolean)) {
    const [meta, name] = line.split('\t') as [string, string]
    head.set(name, meta.split(' ')[2]!)
  }
  const folder = new Map<string, string>()
  for (const [name, content] of await folderFiles(dataDir)) {
    const bytes = Buffer.from(content, 'utf8')
    const oid = createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex')
    folder.set(name, oid)
  }
  const differences: string[] = []
  for (const name of new Set([...head.keys(), ...folder.keys()])) {
    if (head.get(name) !== folder.get(name)) {
      differences.push(
        `${name}: ${head.has(name) ? 'HEAD' : '-'} / ${folder.has(name) ? 'folder' : '-'}`,
      )
    }
  }
  return differences.sort()
}

/**
 * A full disk emulated through the disk seam, for where no tmpfs can be mounted: once
 * `fill` is called, every call that needs space (writing data, making a folder) fails with
 * ENOSPC, except — with `spareBlocks` > 0 — writes inside `memories/` (a memory file fits,
 * its history objects do not).
 */
export async function simulatedSmallDisk(): Promise<SmallDisk> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-fulldisk-'))
  let restore: (() => void) | null = null
  // Entries named through a folder handle (/proc/self/fd/<fd>/<name>) resolve to its path.
  const real = (target: string) => {
    const match = /^\/proc\/self\/fd\/(\d+)(\/.*)?$/.exec(target)
    return match ? readlinkSync(`/proc/self/fd/${match[1]}`) + (match[2] ?? '') : target
  }
  const full = (target: string | undefined, spare: boolean) =>
    !(spare && target !== undefined && real(target).includes(`${path.sep}memories${path.sep}`))
  return {
    dir,
    async fill(spareBlocks = 0) {
      const fds = new Map<number, string>()
      const nospace = (call: string) =>
        Object.assign(new Error(`ENOSPC: no space left on device, ${call}`), { code: 'ENOSPC' })
      const spare = spareBlocks > 0
      const wrapped: Disk = {
        ...nodeDisk,
        openSync(file, flags, mode) {
          const fd = nodeDisk.openSync(file, flags, mode)
          fds.set(fd, file)
          return fd
        },
        closeSync(fd) {
          fds.delete(fd)
          nodeDisk.closeSync(fd)
        },
        writeSync(fd, data, position) {
          if (data.byteLength > 0 && full(fds.get(fd), spare)) throw nospace('write')
          return nodeDisk.writeSync(fd, data, position)
        },
        async write(fd, data, position) {
          if (data.byteLength > 0 && full(fds.get(fd), spare)) throw nospace('write')
          return nodeDisk.write(fd, data, position)
        },
        writeFileSync(file, data, options) {
          const target = typeof file === 'number' ? fds.get(file) : file
          if (data.length > 0 && full(target, spare)) throw nospace('write')
          nodeDisk.writeFileSync(file, data, options)
        },
        appendFileSync(file, data, options) {
          if (data.length > 0 && full(file, spare)) throw nospace('write')
          nodeDisk.appendFileSync(file, data, options)
        },
        mkdirSync(target, mode) {
          if (full(`${target}${path.sep}`, spare)) throw nospace('mkdir')
          nodeDisk.mkdirSync(target, mode)
        },
        promises: {
          ...nodeDisk.promises,
          async writeFile(file, data, options) {
            if (data.length > 0 && full(file, spare)) throw nospace('write')
            await nodeDisk.promises.writeFile(file, data, options)
          },
        },
      }
      restore?.()
      restore = setDisk(wrapped)
    },
    async free() {
      restore?.()
      restore = null
    },
    async unmount() {
      restore?.()
      await rm(dir, { recursive: true, force: true, maxRetries: 10 })
    },
  }
}

/** One read of a pack index (`.idx`) file: where it began, and how many bytes it asked for. */
export interface IndexRead {
  readonly position: number
  readonly length: number
}

/**
 * Counts the reads of pack index (`.idx`) files from now until `stop()`, which puts back the
 * disk that was in place: the tests that a batch lookup reads each index's names once, not
 * once per id, count with it. `reads` is a live list (empty it to start a new count).
 */
export function countIndexReads(): { readonly reads: IndexRead[]; stop(): void } {
  const { disk: recording, opened: fds } = openedOn((file) => file.endsWith('.idx'))
  const reads: IndexRead[] = []
  const restore = setDisk({
    ...recording,
    closeSync: (fd) => {
      fds.delete(fd)
      nodeDisk.closeSync(fd)
    },
    readSync: (fd, buffer, offset, length, position) => {
      if (fds.has(fd)) reads.push({ position: Number(position), length })
      return nodeDisk.readSync(fd, buffer, offset, length, position)
    },
  })
  return { reads, stop: restore }
}

/**
 * Changes files of the bed's memory folder while Cairn is closed (relative path -> content;
 * null removes, a folder with all it holds), then opens it again: the open commits what it
 * finds, as edits made outside Cairn.
 */
export async function editWhileClosed(
  bed: MemoryTestBed,
  files: Readonly<Record<string, string | Buffer | null>>,
): Promise<void> {
  await bed.close()
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(bed.dataDir, 'memories', name)
    if (content === null) {
      await rm(file, { recursive: true })
    } else {
      await mkdir(path.dirname(file), { recursive: true })
      await writeFile(file, content)
    }
  }
  await bed.reopen()
}

/**
 * A change made by the user (a timeline `write`, or a delete), as the memory browser makes
 * it: one Memory tool command through `execute`. Throws the refusal when it fails.
 */
export async function userWrite(
  memory: Pick<VersionedMemory, 'execute'>,
  file: string,
  content: string,
): Promise<ExecuteOutcome> {
  return succeeded(
    await memory.execute(
      { command: 'create', path: file, file_text: content },
      { actor: 'user' },
      { commitAs: 'write' },
    ),
  )
}

export async function userDelete(
  memory: Pick<VersionedMemory, 'execute'>,
  file: string,
): Promise<ExecuteOutcome> {
  return succeeded(await memory.execute({ command: 'delete', path: file }, { actor: 'user' }))
}

function succeeded(outcome: ExecuteOutcome): ExecuteOutcome {
  if (outcome.isError) throw new Error(`refused (${outcome.errorCode}): ${String(outcome.content)}`)
  return outcome
}

/**
 * Makes every commit fail, even for root, by putting a folder where the `main` ref file
 * should be; the returned function puts the ref back as it was.
 */
export async function breakMainRef(dataDir: string): Promise<() => Promise<void>> {
  const ref = path.join(dataDir, 'history.git', 'refs', 'heads', 'main')
  const head = (await readFile(ref, 'utf8')).trim()
  await rm(ref)
  await mkdir(path.join(ref, 'blocker'), { recursive: true })
  return async () => {
    await rm(ref, { recursive: true })
    await writeFile(ref, `${head}\n`)
  }
}

/** The origin tests give Claude's commands. */
export const CLAUDE: Origin = { actor: 'claude', conversationId: 'test', toolUseId: 'toolu_test' }

/**
 * The check after a fault has gone (a full disk freed, a read-only mount undone): the next
 * open commits whatever was owed and leaves nothing behind. The folder is still `atClose`,
 * HEAD holds exactly it, no temp file is left, at least `commits` commits are there, the next
 * change commits at once, and `git fsck --strict` is clean.
 */
export async function expectWholeOnReopen(
  dataDir: string,
  atClose: Map<string, string>,
  commits: number,
): Promise<void> {
  const memory = await openVersionedMemory({
    dataDir,
    watch: false,
    logger: createRecordingLogger(),
  })
  try {
    expect(await folderFiles(dataDir)).toEqual(atClose)
    expect(headFiles(dataDir)).toEqual(atClose)
    expect(leftoverTempFiles(dataDir)).toEqual([])
    expect(commitCount(dataDir)).toBeGreaterThanOrEqual(commits)
    const next = await memory.execute(
      { command: 'create', path: '/memories/after.md', file_text: 'after\n' },
      CLAUDE,
    )
    expect(next.isError, String(next.content)).toBe(false)
    expect(next.commitPending ?? false).toBe(false)
  } finally {
    await memory.close()
  }
  fsck(dataDir)
}

/**
 * The files the tests of owed folder flushes start from (owed-flushes.test.ts,
 * durable-order.test.ts): one at the top of the memory folder, one in a folder below.
 */
export const TWO_FILES = [
  ['a.md', 'alpha\nbeta\n'],
  ['dir/b.md', 'one\ntwo\n'],
] as const

/** Creates each of `files` (its path below `/memories`, its text) with Claude's create command. */
export async function createFiles(
  memory: Pick<VersionedMemory, 'execute'>,
  files: ReadonlyArray<readonly [string, string]>,
): Promise<void> {
  for (const [file, text] of files) {
    await memory.execute({ command: 'create', path: `/memories/${file}`, file_text: text }, CLAUDE)
  }
}

/**
 * A str_replace in one of `TWO_FILES` (`beta` -> `gamma` in a.md, `two` -> `three` in
 * dir/b.md) while `hold.disk` is set, a disk that holds a memory folder's flush until
 * `hold.release()`: its result must carry a commit, and `acknowledged` is pushed to `events`
 * once it is back; then `afterwards` runs, the disk still set. Whatever happens, the flush is
 * let go and the disk put back at the end. `hold.fallbackMs`: should the result wait for the
 * held flush, it is let go after that long, so that the order in `events` tells (and the test
 * does not hang).
 */
export async function strReplaceWithFlushHeld(
  memory: Pick<VersionedMemory, 'execute'>,
  events: string[],
  hold: { readonly disk: Disk; readonly release: () => void; readonly fallbackMs?: number },
  afterwards: () => Promise<void>,
  file: (typeof TWO_FILES)[number][0] = 'a.md',
): Promise<void> {
  const [old, replacement] = file === 'a.md' ? ['beta', 'gamma'] : ['two', 'three']
  const restore = setDisk(hold.disk)
  const fallback =
    hold.fallbackMs === undefined ? undefined : setTimeout(hold.release, hold.fallbackMs)
  try {
    const outcome = await memory.execute(
      { command: 'str_replace', path: `/memories/${file}`, old_str: old, new_str: replacement },
      CLAUDE,
    )
    expect(outcome.commit).not.toBeNull()
    events.push('acknowledged')
    await afterwards()
  } finally {
    clearTimeout(fallback)
    hold.release()
    restore()
  }
}

/** Claude's origin in conversation `conv-1` with a tool use of its own (`toolu_…`). */
export function claudeUse(toolUseId: string): Origin {
  return { actor: 'claude', conversationId: 'conv-1', toolUseId }
}

/**
 * Runs commands as Claude in `conversationId` on the bed's memory, each with a tool use of its
 * own (`toolu_<tag>1`, `toolu_<tag>2`…, counted across the file's tests), and answers the
 * commit each made; a refusal, or a command that made no commit, throws with what Claude was
 * told.
 */
export function claudeCommands(
  bed: MemoryTestBed,
  conversationId: string,
  tag = '',
): (input: Record<string, unknown>) => Promise<CommitSummary> {
  let toolUse = 0
  return async (input) => {
    const outcome = await bed.memory.execute(input, {
      actor: 'claude',
      conversationId,
      toolUseId: `toolu_${tag}${++toolUse}`,
    })
    if (outcome.isError || !outcome.commit) {
      throw new Error(`${JSON.stringify(input)} failed: ${String(outcome.content)}`)
    }
    return outcome.commit
  }
}

/**
 * Temp files an interrupted or failed write left anywhere under `dataDir` (object, ref and
 * index temp files, `.cairn-tmp-…`, set-aside locks). `cairn.lock` itself is the open
 * instance's lock, not a leftover.
 */
export function leftoverTempFiles(dataDir: string): string[] {
  const found: string[] = []
  const walk = (dir: string) => {
    for (const dirent of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, dirent.name)
      if (dir === dataDir && dirent.name === 'cairn.lock') continue
      if (/^tmp_obj_|\.lock$|\.tmp$|^\.cairn-tmp-|\.stale-/.test(dirent.name)) found.push(full)
      else if (dirent.isDirectory()) walk(full)
    }
  }
  walk(dataDir)
  return found
}

/**
 * Writes, into the repository, a commit made on another machine: `main`'s tree with
 * `changes` applied (relative path -> new text; null deletes), a `Machine:` trailer, and
 * `parents` (default: `main`, so moving `main` to it is a fast-forward). What a sync's fetch
 * brings, without the network. Returns its id; `main` does not move.
 */
export async function commitElsewhere(
  git: HistoryGit,
  changes: Readonly<Record<string, string | null>>,
  options: {
    readonly machine?: string
    readonly subject?: string
    readonly time?: number
    readonly parents?: ReadonlyArray<string>
    /** The tree to change (default: that of the first parent). */
    readonly base?: string | null
  } = {},
): Promise<string> {
  const { objects } = git
  const parents = options.parents ?? (git.head() ? [git.head()!] : [])
  const baseCommit = options.base !== undefined ? options.base : (parents[0] ?? null)
  // The tree as nested maps of name -> blob id (files) or folder.
  type Folder = Map<string, string | Folder>
  const read = async (oid: string): Promise<Folder> => {
    const folder: Folder = new Map()
    for (const entry of await objects.readTree(oid)) {
      folder.set(entry.name, entry.kind === 'tree' ? await read(entry.oid) : entry.oid)
    }
    return folder
  }
  const root: Folder = baseCommit
    ? await read((await objects.readCommit(baseCommit)).tree)
    : new Map()
  for (const [relative, text] of Object.entries(changes)) {
    const names = relative.split('/')
    const chain: Folder[] = [root]
    for (const name of names.slice(0, -1)) {
      const parent = chain.at(-1)!
      let next = parent.get(name)
      if (!(next instanceof Map)) {
        next = new Map()
        parent.set(name, next)
      }
      chain.push(next)
    }
    const last = names.at(-1)!
    if (text === null) {
      chain.at(-1)!.delete(last)
      // Folders left empty go too: git has no empty folders.
      for (let i = chain.length - 1; i > 0 && chain[i]!.size === 0; i--) {
        chain[i - 1]!.delete(names[i - 1]!)
      }
    } else {
      chain.at(-1)!.set(last, await objects.write('blob', Buffer.from(text)))
    }
  }
  const write = async (folder: Folder): Promise<string> => {
    const entries: RawTreeEntry[] = []
    for (const [name, value] of folder) {
      entries.push(
        value instanceof Map
          ? { name, kind: 'tree', oid: await write(value), mode: '40000' }
          : { name, kind: 'blob', oid: value, mode: '100644' },
      )
    }
    return objects.write('tree', serializeTree(entries))
  }
  const tree = await write(root)
  const message = formatCommitMessage({
    actor: 'claude',
    command: 'create',
    subject: options.subject ?? `change ${Object.keys(changes).join(', ')}`,
    paths: Object.keys(changes).map((relative) => `/memories/${relative}`),
    conversationId: null,
    toolUseId: null,
    overwrite: false,
    restoredFrom: null,
    machine: options.machine ?? 'desktop',
  })
  return objects.write(
    'commit',
    serializeCommit({
      tree,
      parent: parents[0] ?? null,
      otherParents: parents.slice(1),
      author: AUTHORS.claude,
      timestamp: options.time ?? 1_800_000_000,
      message,
    }),
  )
}

/** A data folder for each test of a file, with what the recovery tests do to break it. */
export interface RecoveryRepo {
  /** This test's data folder. */
  readonly dataDir: string
  /** Its git directory. */
  readonly gitdir: string
  /** Opens the versioned memory of `dataDir` (no watcher, a clock a second per tick). */
  open(): Promise<VersionedMemory>
  /** The file of `refs/heads/main`. */
  mainRef(): string
  /** The loose object file of `oid`. */
  objectFile(oid: string): string
  /** Removes the side index, and any index of an earlier format, as a lost folder would. */
  removeSideIndex(): Promise<void>
  /** Claude creates `/memories/<relative>` with `text`; the command must succeed. */
  create(memory: VersionedMemory, relative: string, text: string): Promise<ExecuteOutcome>
}

/**
 * The setup the recovery tests share (lost ref, damaged objects, either in a synced history):
 * a fresh data folder before each test of the file, removed after it. Call once at the top of
 * a test file; it registers its own `beforeEach` and `afterEach`. Recovery messages go to a
 * recording logger, so the run's output stays quiet.
 */
export function recoveryRepo(): RecoveryRepo {
  return testRepo()
}

/**
 * The same setup for any history test file: with `maintenance: false`, `open` starts no
 * background maintenance (the test runs `maintain()` when it wants it).
 */
export function testRepo(options: { readonly maintenance?: false } = {}): RecoveryRepo {
  let dataDir = ''
  let cleanup = async (): Promise<void> => {}
  let clock = 1_700_000_000_000
  beforeEach(async () => {
    ;({ dir: dataDir, cleanup } = await tempDataDir())
  })
  afterEach(() => cleanup())
  const gitdir = () => path.join(dataDir, 'history.git')
  return {
    get dataDir() {
      return dataDir
    },
    get gitdir() {
      return gitdir()
    },
    open: () =>
      openVersionedMemory({
        dataDir,
        now: () => (clock += 1000),
        watch: false,
        logger: createRecordingLogger(),
        ...options,
      }),
    mainRef: () => path.join(gitdir(), 'refs', 'heads', 'main'),
    objectFile: (oid) => path.join(gitdir(), 'objects', oid.slice(0, 2), oid.slice(2)),
    async removeSideIndex() {
      for (const name of await readdir(gitdir())) {
        if (name.startsWith('cairn-index')) await rm(path.join(gitdir(), name), { recursive: true })
      }
    },
    async create(memory, relative, text) {
      const result = await memory.execute(
        { command: 'create', path: `/memories/${relative}`, file_text: text },
        CLAUDE,
      )
      expect(result.isError).toBe(false)
      return result
    },
  }
}

/**
 * Leaves the lock of a Cairn that was killed (its process is gone) in `dataDir`, as a crash
 * does: the next open takes it over and knows the Cairn before did not close.
 */
export function leaveStaleLock(dataDir: string): void {
  // Above Linux's largest process id (2^22): no live process has it.
  const owner = { pid: 2 ** 22 + 7, host: os.hostname(), token: 'killed', since: '2026-01-01' }
  writeFileSync(path.join(dataDir, LOCK_FILE), `${JSON.stringify(owner)}\n`)
}

/**
 * From now on the system treats Cairn as an account other than root (uid 4242), which the
 * tests, run as root, cannot be: a file with no read bit cannot be opened, and nothing can be
 * renamed into or out of (or made in) a folder with no write bit. What Cairn wrote so far under
 * `memories/` is given to that account. Returns the way back to root.
 */
export function asAnotherAccount(dataDir: string): () => void {
  execFileSync('chown', ['-R', '4242:4242', path.join(dataDir, 'memories')])
  const hooked = hookDisk(
    nodeDisk,
    asTheAccount((call) => {
      if (call.name === 'openSync') {
        const target = String(call.args[0])
        const mode = lstatSync(target, { throwIfNoEntry: false })?.mode ?? 0o777
        return mode & 0o444 ? undefined : errnoError(call, 'EACCES')
      }
      if (call.name === 'mkdirSync' || call.name === 'renameSync') {
        const targets = call.name === 'mkdirSync' ? [call.args[0]] : [call.args[0], call.args[1]]
        for (const target of targets) {
          // Through a folder's handle (`/proc/self/fd/N/name`): its folder is what `stat` follows.
          const folder = statSync(path.dirname(String(target)), { throwIfNoEntry: false })
          if (folder && !(folder.mode & 0o222)) return errnoError(call, 'EACCES')
        }
      }
      return undefined
    }),
  )
  const undoDisk = setDisk(hooked.disk)
  const uid = vi.spyOn(process, 'getuid').mockReturnValue(4242)
  return () => {
    uid.mockRestore()
    undoDisk()
  }
}

/**
 * Records a restore-all of `relatives` from `head` back to `to` as it stands before it touches
 * any file: what a kill right after the intent was written leaves for the next open.
 */
export async function recordInterruptedRestoreAll(
  dataDir: string,
  head: string,
  to: string,
  relatives: ReadonlyArray<string>,
): Promise<void> {
  const blob = (rev: string, file: string) => gitCli(dataDir, 'rev-parse', `${rev}:${file}`).trim()
  await recordRestore(
    { store: { gitdir: path.join(dataDir, 'history.git') } as never, head: () => head },
    relatives.map((file) => ({ path: file, before: blob(head, file), after: blob(to, file) })),
    relatives,
    {
      actor: 'user',
      conversationId: null,
      toolUseId: null,
      overwrite: false,
      command: 'restore-all',
      subject: `restore all memories to ${to.slice(0, 7)}`,
      restoredFrom: to,
    },
  )
}

// The disk calls that change something: a SIGKILL just before each is a distinct state.
const DISK_CHANGING_CALLS =
  /^(openSync|writeFileSync|writeSync|write|fsync|renameSync|linkSync|unlinkSync|mkdirSync|rmdirSync|rmSync|ftruncate|promises\.(writeFile|rename|rm|unlink|mkdir|rmdir))$/

// Of those, the calls that put a name in the memory folder or take one away.
const FOLDER_MOVE_CALLS =
  /^(renameSync|linkSync|unlinkSync|mkdirSync|rmdirSync|promises\.(rename|rm|unlink|rmdir))$/

/**
 * Runs `change` with every disk call counted and returns where a SIGKILL test kills a child
 * doing the same (`hookDisk`'s call numbers): the first and the last call that changes the
 * disk and each that moves a name in the memory folder, or, with `all`, every changing call.
 */
export async function killPointsOf(change: () => Promise<void>, all = false): Promise<number[]> {
  const changing: number[] = []
  const folderMoves: number[] = []
  const counting = hookDisk(nodeDisk, (call) => {
    if (!DISK_CHANGING_CALLS.test(call.name)) return
    changing.push(call.n)
    if (
      FOLDER_MOVE_CALLS.test(call.name) &&
      !call.args.some((a) => String(a).includes('history.git'))
    ) {
      folderMoves.push(call.n)
    }
  })
  const restore = setDisk(counting.disk)
  try {
    await change()
  } finally {
    restore()
  }
  if (all) return changing
  return [...new Set([changing[0]!, ...folderMoves, changing.at(-1)!])].sort((a, b) => a - b)
}

/**
 * Runs `script` (an ES module, through tsx) in a child Node. With `killAfterOutputMs`, kills it
 * with SIGKILL that long after it first writes to stdout; without, it is to kill itself. Fails
 * the test, with the child's stderr, unless it died of SIGKILL.
 */
export async function runKilledChild(script: string, killAfterOutputMs?: number): Promise<void> {
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    proc.once('exit', (_code, signal) => resolve(signal)),
  )
  if (killAfterOutputMs !== undefined) {
    // A child that dies before it writes is told by its exit, not waited for forever.
    await Promise.race([new Promise((resolve) => proc.stdout.once('data', resolve)), exited])
    await new Promise((resolve) => setTimeout(resolve, killAfterOutputMs))
    proc.kill('SIGKILL')
  }
  expect(await exited, stderr).toBe('SIGKILL')
}

/**
 * Opens the memory at `dataDir` in a child Node whose disk kills it (SIGKILL) just before its
 * `n`-th call that changes the disk, then runs `body` there (code that uses `memory`). Finished
 * before the `n`-th call (a call count that differs from the dry run's), the child is killed
 * then: the folder must be exactly as after `body`. Resolves once the child died of SIGKILL.
 */
export async function runKilledAtCall(dataDir: string, n: number, body: string): Promise<void> {
  const index = JSON.stringify(path.resolve('src/main/history/index.ts'))
  const disk = JSON.stringify(path.resolve('src/main/lib/disk.ts'))
  const hooks = JSON.stringify(path.resolve('src/main/lib/disk-hooks.ts'))
  await runKilledChild(`
    const { openVersionedMemory } = await import(${index})
    const { nodeDisk, setDisk } = await import(${disk})
    const { hookDisk } = await import(${hooks})
    const memory = await openVersionedMemory({ dataDir: ${JSON.stringify(dataDir)}, watch: false, maintenance: false })
    setDisk(hookDisk(nodeDisk, (call) => {
      if (call.n === ${n}) process.kill(process.pid, 'SIGKILL')
    }).disk)
    ${body}
    process.kill(process.pid, 'SIGKILL')
  `)
}

/**
 * Slices for a sliced read (the tree, the size meter, a search) that stop its first read at its
 * `at`-th step until `release()`, never before or after; a read made again runs through.
 * `reached` settles once it stops; `reads()` counts the reads that asked for slices.
 */
export function gateAt(at: number): {
  readonly slices: () => Breather
  readonly reached: Promise<void>
  readonly release: () => void
  readonly reads: () => number
} {
  let release!: () => void
  const opened = new Promise<void>((resolve) => (release = resolve))
  let reachedIt!: () => void
  const reached = new Promise<void>((resolve) => (reachedIt = resolve))
  let asked = 0
  let reads = 0
  const breathe: Breather = () => {
    if (++asked !== at) return undefined
    reachedIt()
    return opened
  }
  return {
    slices: () => (reads++ === 0 ? breathe : () => undefined),
    reached,
    release,
    reads: () => reads,
  }
}

/**
 * One hash of everything under `dir`: names, modes, sizes, contents, link targets (never
 * followed). For "nothing outside the data folder changed".
 */
export function treeHash(dir: string): string {
  const hash = createHash('sha256')
  const walk = (at: string, rel: string) => {
    for (const name of readdirSync(at).sort()) {
      const full = path.join(at, name)
      const stat = lstatSync(full)
      hash.update(`${rel}/${name}:${stat.mode}:${stat.size}:`)
      if (stat.isSymbolicLink()) hash.update(readlinkSync(full))
      else if (stat.isDirectory()) walk(full, `${rel}/${name}`)
      else hash.update(readFileSync(full))
    }
  }
  walk(dir, '')
  return hash.digest('hex')
}
