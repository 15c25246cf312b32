/**
 * Folders held open by their handle, so that a path checked once cannot be redirected later.
 *
 * A local process may swap a folder inside `memories/` for a symlink at any moment. Checking a
 * path and then using it (even with O_NOFOLLOW, which guards only the last name) leaves a gap
 * in which the swap sends the call outside. Here every folder on the way is opened with
 * O_DIRECTORY | O_NOFOLLOW, one name at a time, starting from the root's handle; entries are
 * then named through the handle of their own folder (`/proc/self/fd/<fd>/<name>` on Linux,
 * which the kernel resolves from the open folder itself, like openat(2)). A symlink swapped in
 * after a folder was opened changes nothing for calls made through its handle.
 *
 * Where the platform cannot name entries through a handle (macOS, Windows), entries are named
 * by path and every folder's identity (device, inode) is checked against what was opened: this
 * narrows the gap to microseconds but cannot close it (see docs/durability.md).
 */

import { randomUUID } from 'node:crypto'
import type { Dirent, Stats } from 'node:fs'
import path from 'node:path'
import { closeQuietly, disk, handlesNameEntries, isCode, isDenied, isMissing, OPEN } from './disk'
import type { Logger } from './logger'

/** Prefix of the temp files and folders of atomic writes and deletes; start-up removes strays. */
export const TEMP_FILE_PREFIX = '.cairn-tmp-'

// The exact name of every temp file or folder Cairn makes: the prefix and a random UUID (or,
// from builds before the UUID, 12 hex digits: what a kill left then is still Cairn's).
const OWN_TEMP_NAME =
  /^\.cairn-tmp-(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{12})$/

/**
 * True for a name Cairn gives its temp files and folders. Only such an entry is removed as a
 * leftover: a person's own `.cairn-tmp-backup` was once deleted, whole, at the next open.
 */
export function isOwnTempName(name: string): boolean {
  return OWN_TEMP_NAME.test(name)
}
/** Mode of every file Cairn writes in the memory folder: owner read/write only. */
export const FILE_MODE = 0o600
/** Mode of every folder Cairn creates there: owner only. */
export const DIR_MODE = 0o700

let byHandle = handlesNameEntries

// Folders `syncLater` named whose fsync has not been started yet (their own descriptors), and
// the fsyncs started and not finished.
const unstartedSyncs: number[] = []
const pendingSyncs = new Set<Promise<void>>()
// Starts what `settleFolderSyncs` was not called for in time (a change no commit follows).
let fallback: NodeJS.Timeout | null = null
const FALLBACK_MS = 50

function startFolderSyncs(): void {
  if (fallback) clearTimeout(fallback)
  fallback = null
  for (const fd of unstartedSyncs.splice(0)) {
    const pending: Promise<void> = disk
      .fsync(fd)
      .catch(() => {})
      .finally(() => {
        closeQuietly(fd)
        pendingSyncs.delete(pending)
      })
    pendingSyncs.add(pending)
  }
}

/**
 * Starts the folder fsyncs `syncLater` asked for and waits for them: the history calls it
 * before moving its ref, so a commit is never durable before the change it records. They
 * start here, together with the commit's own fsyncs, not when the change was made: on a
 * journaling file system one journal commit then makes all of them durable, where an fsync
 * started earlier commits the journal alone and leaves the objects written meanwhile (and
 * their file creations, which wait for that commit) to the next one.
 */
export async function settleFolderSyncs(): Promise<void> {
  startFolderSyncs()
  await Promise.all([...pendingSyncs])
}

/** Tests: run with entries named by path, as on platforms without handle naming. */
export function nameEntriesByHandle(on: boolean): () => void {
  const previous = byHandle
  byHandle = on && handlesNameEntries
  return () => {
    byHandle = previous
  }
}

/** Thrown when a folder or file changed identity between the check and the call. */
export class ChangedUnderfootError extends Error {
  readonly code = 'ECHANGED'
  constructor() {
    super('a folder or file changed while it was being used')
    this.name = 'ChangedUnderfootError'
  }
}

/**
 * Thrown when the memory folder itself is a symbolic link (a person moved it to a synced
 * folder and linked it back). Cairn never follows links there; the refusal says so, where
 * the plain ENOTDIR or ELOOP read as "a file is in the way".
 */
export class RootIsLinkError extends Error {
  readonly code = 'EROOTLINK'
  constructor() {
    super('the memory folder is a symbolic link')
    this.name = 'RootIsLinkError'
  }
}

/**
 * Thrown by `FolderTree.folder` for a folder on the way the system will not let Cairn open
 * (another account's, mode 000): `relative` says which, so that the error can name it (as a
 * `/memories/…` path) where the system's error names only the handle it opened it through.
 * Keeps the system's code (EACCES, EPERM).
 */
export class FolderDeniedError extends Error {
  readonly code: string
  constructor(
    /** The folder's path relative to the tree's root. */
    readonly relative: string,
    cause: unknown,
  ) {
    super('the system denied opening a folder')
    this.name = 'FolderDeniedError'
    this.code = isCode(cause, 'EPERM') ? 'EPERM' : 'EACCES'
    Object.defineProperty(this, 'cause', { value: cause, enumerable: false })
  }
}

/** An open folder. `close` it when done (closing twice is harmless). */
// True for a name (or a path of names) with an empty, `.` or `..` segment.
function leavesFolder(name: string): boolean {
  if (name === '' || name === '.' || name === '..') return true
  if (!name.includes('/')) return false
  return name.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')
}

export class Folder {
  private open = true

  private constructor(
    /** The path it was opened by (never shown to anyone). */
    readonly path: string,
    private readonly fd: number | null,
    private known: Stats | null,
  ) {}

  /**
   * Its identity (an `fstat` of its handle, made on first use: most folders are opened only to
   * reach an entry, and their open already refused anything but a real folder).
   */
  get stats(): Stats {
    if (this.known) return this.known
    // A closed handle's number may name another file by now.
    if (!this.open || this.fd === null) throw new Error('the folder is closed')
    this.known = disk.fstatSync(this.fd)
    return this.known
  }

  /**
   * An `fstat` of its handle now: its times as they are, not as they were when `stats` was
   * first asked. Null where the folder has no handle.
   */
  freshStats(): Stats | null {
    if (this.fd === null) return null
    if (!this.open) throw new Error('the folder is closed')
    return disk.fstatSync(this.fd)
  }

  /** Opens the folder at `real`, refusing a symlink there (its ancestors are trusted). */
  static openRoot(real: string): Folder {
    return Folder.openPath(real)
  }

  /** Opens `name` inside this folder; throws ENOENT, or ENOTDIR/ELOOP when it is not a folder. */
  openChild(name: string): Folder {
    return Folder.openPath(this.entry(name), path.join(this.path, name))
  }

  /**
   * Opens `name` inside this folder, or null when it is gone or is not a folder (a link
   * swapped in meanwhile is never followed). Other errors are thrown.
   */
  openChildIfFolder(name: string): Folder | null {
    try {
      return this.openChild(name)
    } catch (error) {
      if (isMissing(error) || isCode(error, 'ELOOP')) return null
      throw error
    }
  }

  /**
   * A path that names `name` inside this folder, for any file-system call. A name that would
   * leave the folder (`..`, or `.` and the empty name, which name the folder itself) is
   * refused: callers check their paths first, and this is the backstop should one not (a
   * crafted restore intent once walked `..` out of the memory folder).
   */
  entry(name: string): string {
    if (leavesFolder(name)) throw new Error('A name that leaves its folder was refused.')
    return this.fd !== null && byHandle
      ? `/proc/self/fd/${this.fd}/${name}`
      : path.join(this.path, name)
  }

  /**
   * True when `entry` names entries through this folder's handle, so a link swapped in for
   * the folder after it was opened is not followed; false where they are named by path
   * (macOS, Windows, or `nameEntriesByHandle(false)`).
   */
  get namesByHandle(): boolean {
    return this.fd !== null && byHandle
  }

  /** A path that names this folder itself (to list it). */
  get self(): string {
    return this.fd !== null && byHandle ? `/proc/self/fd/${this.fd}` : this.path
  }

  /** The folder's entries. */
  list(): Dirent[] {
    return refusedTwice(() => disk.readdirSync(this.self))
  }

  /** `lstat` of an entry, or null when there is none. */
  lstat(name: string): Stats | null {
    try {
      return disk.lstatIfThere(this.entry(name)) ?? null
    } catch (error) {
      if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return null
      throw error
    }
  }

  /** Makes this folder's entries durable (a rename is durable once its folder is). */
  async sync(): Promise<void> {
    if (this.fd === null || process.platform === 'win32') return
    await disk.fsync(this.fd)
  }

  /**
   * This folder for a later `fsync` on a descriptor of its own (see `StagedWrite.keptFolder`):
   * only ever `fsync`ed through, never written through, so keeping it past the command is safe
   * even if the folder is moved meanwhile (what it makes durable is that folder's entries).
   */
  keptForSync(): { readonly key: string; open(): number | null } | null {
    if (this.fd === null || process.platform === 'win32') return null
    let key: string
    try {
      const { dev, ino } = this.stats
      key = `${dev}:${ino}`
    } catch {
      return null
    }
    return {
      key,
      open: () => {
        try {
          return disk.openSync(this.self, OPEN.READ | OPEN.DIRECTORY)
        } catch {
          return null
        }
      },
    }
  }

  /**
   * Makes this folder's entries durable later, without waiting: `settleFolderSyncs` starts
   * the fsync (on a descriptor of its own: this handle may close first) and waits for it; if
   * nothing settles within a few milliseconds it starts anyway. Best effort: a failure is not
   * reported (what it was to make durable has happened).
   */
  syncLater(): void {
    if (this.fd === null || process.platform === 'win32') return
    let fd: number
    try {
      fd = disk.openSync(this.self, OPEN.READ | OPEN.DIRECTORY)
    } catch {
      return
    }
    unstartedSyncs.push(fd)
    if (!fallback) {
      fallback = setTimeout(startFolderSyncs, FALLBACK_MS)
      fallback.unref()
    }
  }

  /** Releases the handle. Never throws: close(2) releases it even when it reports an error. */
  close(): void {
    if (!this.open) return
    this.open = false
    if (this.fd !== null) closeQuietly(this.fd)
  }

  private static openPath(target: string, shownPath = target): Folder {
    if (process.platform === 'win32') {
      // Windows cannot open a folder without following links: check that it is a real folder.
      const stats = disk.lstatSync(target)
      if (!stats.isDirectory()) throw notADirectory(stats)
      return new Folder(shownPath, null, stats)
    }
    const fd = refusedTwice(() => disk.openSync(target, OPEN.READ | OPEN.DIRECTORY | OPEN.NOFOLLOW))
    try {
      // With O_DIRECTORY and O_NOFOLLOW, the open itself fails on anything but a real folder
      // (ENOTDIR, ELOOP): its identity is only looked up when asked for.
      if (byHandle && OPEN.DIRECTORY !== 0 && OPEN.NOFOLLOW !== 0) {
        return new Folder(shownPath, fd, null)
      }
      const stats = disk.fstatSync(fd)
      if (!stats.isDirectory()) throw notADirectory(stats)
      if (!byHandle) {
        // Named by path from here on: make sure the path still leads to what was opened.
        const now = disk.lstatSync(shownPath)
        if (!sameEntry(now, stats)) throw new ChangedUnderfootError()
      }
      return new Folder(shownPath, fd, stats)
    } catch (error) {
      closeQuietly(fd)
      throw error
    }
  }
}

function notADirectory(stats: Stats): Error {
  return Object.assign(new Error('not a directory'), {
    code: stats.isSymbolicLink() ? 'ELOOP' : 'ENOTDIR',
  })
}

/**
 * `call` (a read, a folder's open or listing, or `mayNotRead`'s question to the kernel), made
 * once more when the system refuses it (EACCES, EPERM). Everything that takes a file or folder for unreadable (left out of history,
 * kept aside by a restore) does so on what these calls throw: a real permission problem
 * refuses twice, and a one-off refusal no longer costs a readable file its history (the
 * fault-injection run found one refused read doing so at open, restore, rename and revert).
 */
export function refusedTwice<T>(call: () => T): T {
  try {
    return call()
  } catch (error) {
    if (!isDenied(error)) throw error
    return call()
  }
}

/** True when two stats describe the same file (device and inode). */
export function sameEntry(a: Stats, b: Stats): boolean {
  return a.dev === b.dev && a.ino === b.ino
}

/** What a relative path names, found one folder handle at a time, never following a link. */
export type Found =
  | { readonly kind: 'file'; readonly parent: Folder; readonly name: string; readonly stats: Stats }
  | {
      readonly kind: 'directory'
      /** Null for the root itself. */
      readonly parent: Folder | null
      readonly name: string
      readonly stats: Stats
    }
  /** Nothing there; `parent` is the folder that would hold it, when it exists. */
  | { readonly kind: 'missing'; readonly parent: Folder | null; readonly name: string }
  /** An ancestor (`at`, relative) is a regular file. */
  | { readonly kind: 'under-file'; readonly at: string }
  /** The path or an ancestor (`at`, relative) is a symlink, device, socket or FIFO. */
  | { readonly kind: 'special'; readonly at: string }

/**
 * One operation's view of a folder tree: every folder it walks is opened once, kept open
 * (pinned) and closed by `close`. Paths are posix, relative to the root, already checked by
 * the caller's path rules.
 */
export class FolderTree {
  private readonly open = new Map<string, Folder>()
  // Folders opened under a hidden name by `stage`, closed with the rest.
  private readonly staged: Folder[] = []
  // `lstat`s an earlier step of this operation made (`lstatEntry`), each handed once to the
  // next `find` of its path instead of a second call: the history's check of what a command
  // touches, then the command itself.
  private readonly looked = new Map<
    string,
    { readonly parent: Folder; readonly stats: Stats | null }
  >()
  // Files an earlier step of this operation read whole (`keepRead`), each handed once to the
  // next `readFile` of its path instead of a second read.
  private readonly reads = new Map<
    string,
    { readonly parent: Folder; readonly stats: Stats; readonly content: Buffer }
  >()
  // Folders found missing (ENOENT) since the last change made through this tree: the check of
  // a command's paths, the command and its staging of new folders ask once, not three times.
  // `open` comes first: a folder made through the tree (`ensure`) is there.
  private readonly missing = new Set<string>()

  constructor(readonly rootPath: string) {}

  /** The root folder (opened on first use). */
  root(): Folder {
    let root = this.open.get('')
    if (!root) {
      try {
        root = Folder.openRoot(this.rootPath)
      } catch (error) {
        if (
          (isCode(error, 'ENOTDIR') || isCode(error, 'ELOOP')) &&
          disk.lstatIfThere(this.rootPath)?.isSymbolicLink()
        ) {
          throw new RootIsLinkError()
        }
        throw error
      }
      this.open.set('', root)
    }
    return root
  }

  /**
   * The folder at `relativeDir`, or why there is none: `missing` (at the first missing name),
   * `under-file` or `special` (with the relative path of the offending entry).
   */
  folder(
    relativeDir: string,
  ): Folder | { readonly kind: 'missing' | 'under-file' | 'special'; readonly at: string } {
    let current = this.root()
    if (relativeDir === '') return current
    const segments = relativeDir.split('/')
    for (let i = 0; i < segments.length; i++) {
      const at = segments.slice(0, i + 1).join('/')
      const known = this.open.get(at)
      if (known) {
        current = known
        continue
      }
      if (this.missing.has(at)) return { kind: 'missing', at }
      try {
        current = current.openChild(segments[i]!)
      } catch (error) {
        if (isCode(error, 'ENOENT')) {
          this.missing.add(at)
          return { kind: 'missing', at }
        }
        if (isDenied(error)) throw new FolderDeniedError(at, error)
        if (!isCode(error, 'ENOTDIR') && !isCode(error, 'ELOOP')) throw error
        const stats = current.lstat(segments[i]!)
        if (stats === null) return { kind: 'missing', at }
        return { kind: stats.isFile() ? 'under-file' : 'special', at }
      }
      this.open.set(at, current)
    }
    return current
  }

  /** What `relative` names. */
  find(relative: string): Found {
    if (relative === '') {
      const root = this.root()
      return { kind: 'directory', parent: null, name: '', stats: root.stats }
    }
    const slash = relative.lastIndexOf('/')
    const name = relative.slice(slash + 1)
    const parent = this.folder(slash < 0 ? '' : relative.slice(0, slash))
    if (!(parent instanceof Folder)) {
      if (parent.kind === 'missing') return { kind: 'missing', parent: null, name }
      return { kind: parent.kind, at: parent.at }
    }
    const looked = this.takeLooked(relative, parent)
    const stats = looked !== undefined ? looked : parent.lstat(name)
    if (stats === null) return { kind: 'missing', parent, name }
    if (stats.isFile()) return { kind: 'file', parent, name, stats }
    if (stats.isDirectory()) return { kind: 'directory', parent, name, stats }
    return { kind: 'special', at: relative }
  }

  /**
   * `lstat` of the entry at `relative` (`name` in `parent`, the open folder `folder` gave for
   * its parent), or null when there is none; the next `find(relative)` through the same
   * handle takes it instead of asking again. For a step that changes nothing, followed at
   * once by the step that acts (the history's check of a command's paths, then the command):
   * the command checks what it finds as it did after its own `lstat` (a file's identity when
   * it opens it, a file's or folder's before it removes or moves it), so a change made in
   * between is caught as one made after that `lstat` would be. Scans always ask afresh.
   */
  lstatEntry(parent: Folder, relative: string, name: string): Stats | null {
    const stats = parent.lstat(name)
    this.looked.set(relative, { parent, stats })
    return stats
  }

  /**
   * Keeps the bytes of the file at `relative` that a step which changes nothing read whole
   * through `parent` (`stats`: the `fstat` of the handle it read them through), for the step
   * that acts right after it: the history's check of a command's paths reads the file to
   * hash it, then the command reads it to edit it (stop 15). As with `lstatEntry`, the command
   * checks what it gets as it did after its own read (the file it found, by device and inode),
   * so a change made in between is met as one made just after that read would be.
   */
  keepRead(relative: string, parent: Folder, stats: Stats, content: Buffer): void {
    this.reads.set(relative, { parent, stats, content })
  }

  /**
   * Drops every read `keepRead` kept: the next `readFile` reads its file again (the check
   * committed an outside change, and waiting for the disk let the files move on since).
   */
  forgetReads(): void {
    this.reads.clear()
  }

  /**
   * The bytes of the regular file `name` of `parent` (at `relative`), which must still be the
   * file `expected` describes (`readFileIn`): those `keepRead` kept for it, once, when they were
   * read through the same handle from that same file, else read now.
   */
  readFile(relative: string, parent: Folder, name: string, expected: Stats): Buffer {
    const kept = this.reads.get(relative)
    if (kept) {
      this.reads.delete(relative)
      if (kept.parent === parent && sameEntry(kept.stats, expected)) return kept.content
    }
    return readFileIn(parent, name, expected)
  }

  // The `lstat` `lstatEntry` kept for `relative` through the same open `parent`, once;
  // undefined when there is none.
  private takeLooked(relative: string, parent: Folder): Stats | null | undefined {
    if (this.looked.size === 0) return undefined
    const looked = this.looked.get(relative)
    if (!looked) return undefined
    this.looked.delete(relative)
    return looked.parent === parent ? looked.stats : undefined
  }

  /**
   * Creates the missing folders of `relativeDir` (mode 0700, exactly) and returns the relative
   * paths it created, outermost first, for `removeCreated`. Refuses to pass through anything
   * but real folders (ENOTDIR).
   */
  ensure(relativeDir: string): {
    readonly folder: Folder
    readonly created: ReadonlyArray<string>
  } {
    const created: string[] = []
    if (relativeDir === '') return { folder: this.root(), created }
    const segments = relativeDir.split('/')
    try {
      let current = this.root()
      for (let i = 0; i < segments.length; i++) {
        const at = segments.slice(0, i + 1).join('/')
        const found = this.folder(at)
        if (found instanceof Folder) {
          current = found
          continue
        }
        if (found.kind !== 'missing') {
          throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' })
        }
        disk.mkdirSync(current.entry(segments[i]!), DIR_MODE)
        created.push(at)
        const opened = current.openChild(segments[i]!)
        this.open.set(at, opened)
        // mkdir's mode is filtered by the umask; make it exactly owner-only.
        disk.chmodSync(opened.self, DIR_MODE)
        current = opened
      }
      return { folder: current, created }
    } catch (error) {
      this.removeCreated(created)
      throw error
    }
  }

  /** Removes folders `ensure` created (deepest first), ignoring any that are gone or not empty. */
  removeCreated(created: ReadonlyArray<string>): void {
    for (const at of [...created].reverse()) {
      const slash = at.lastIndexOf('/')
      const parent = this.folder(slash < 0 ? '' : at.slice(0, slash))
      this.forget(at)
      if (!(parent instanceof Folder)) continue
      try {
        disk.rmdirSync(parent.entry(at.slice(slash + 1)))
      } catch {
        // Gone already, or something was put in it meanwhile: leave it.
      }
    }
  }

  /** Closes and forgets the open folder at `relative` and any below it (it moved or went). */
  forget(relative: string): void {
    this.looked.clear()
    this.reads.clear()
    this.missing.clear()
    for (const [at, folder] of this.open) {
      if (at === relative || (relative !== '' && at.startsWith(`${relative}/`))) {
        folder.close()
        this.open.delete(at)
      }
    }
  }

  /**
   * Prepares the folders of `relativeDir` for a new file without showing any of them until
   * `publish`: the missing ones are made under a hidden temp name in the deepest folder that
   * exists, and `publish` renames that one into place (one atomic rename), so a crash or a
   * failure in between leaves nothing but a temp folder (removed at start-up, or by `abort`).
   * When nothing is missing, `folder` is the existing folder and both are no-ops.
   */
  stage(relativeDir: string): StagedFolders {
    const segments = relativeDir === '' ? [] : relativeDir.split('/')
    let parent = this.root()
    let first = 0
    for (; first < segments.length; first++) {
      const found = this.folder(segments.slice(0, first + 1).join('/'))
      if (!(found instanceof Folder)) {
        if (found.kind !== 'missing') {
          throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' })
        }
        break
      }
      parent = found
    }
    if (first === segments.length) return { folder: parent, publish() {}, abort() {} }
    const temp = `${TEMP_FILE_PREFIX}${randomUUID()}`
    const made: Folder[] = []
    const abort = () => {
      for (const folder of made.reverse()) folder.close()
      made.length = 0
      try {
        removeTree(parent, temp)
      } catch {
        // What stays is a temp folder: start-up removes it.
      }
    }
    try {
      let current = parent
      for (const name of [temp, ...segments.slice(first + 1)]) {
        disk.mkdirSync(current.entry(name), DIR_MODE)
        current = current.openChild(name)
        made.push(current)
        // mkdir's mode is filtered by the umask; make it exactly owner-only.
        disk.chmodSync(current.self, DIR_MODE)
      }
      this.staged.push(...made)
      return {
        folder: current,
        publish: () => {
          disk.renameSync(parent.entry(temp), parent.entry(segments[first]!))
          // The folders are in place now, and these handles are theirs: the commit's scan
          // that follows goes through them instead of opening them again.
          this.missing.clear()
          made.forEach((folder, depth) => {
            const at = segments.slice(0, first + depth + 1).join('/')
            if (!this.open.has(at)) this.open.set(at, folder)
          })
          parent.syncLater()
        },
        abort,
      }
    } catch (error) {
      abort()
      throw error
    }
  }

  close(): void {
    this.looked.clear()
    this.reads.clear()
    this.missing.clear()
    for (const folder of this.open.values()) folder.close()
    this.open.clear()
    for (const folder of this.staged) folder.close()
    this.staged.length = 0
  }
}

/** Folders made under a hidden name by `FolderTree.stage`, shown by `publish`. */
export interface StagedFolders {
  /** The folder the new file goes in (inside the hidden folders until `publish`). */
  readonly folder: Folder
  /** Renames the hidden folders into place. */
  publish(): void
  /** Removes the hidden folders and what was written in them. */
  abort(): void
}

/**
 * Reads the regular file `name` of `folder` through its own handle: never through a symlink,
 * only when it is still the file `expected` describes (when given), and never when it is
 * larger than `maxBytes` (EFBIG).
 */
export function readFileIn(
  folder: Folder,
  name: string,
  expected?: Stats,
  maxBytes = Number.POSITIVE_INFINITY,
): Buffer {
  return readFileAndStats(folder, name, expected, maxBytes).content
}

/** `readFileIn`, also giving the `fstat` of the handle the bytes were read through. */
export function readFileAndStats(
  folder: Folder,
  name: string,
  expected?: Stats,
  maxBytes = Number.POSITIVE_INFINITY,
): { readonly content: Buffer; readonly stats: Stats } {
  return refusedTwice(() => readOnce(folder, name, expected, maxBytes))
}

function readOnce(
  folder: Folder,
  name: string,
  expected: Stats | undefined,
  maxBytes: number,
): { readonly content: Buffer; readonly stats: Stats } {
  const fd = disk.openSync(folder.entry(name), OPEN.READ | OPEN.NOFOLLOW)
  try {
    const stats = disk.fstatSync(fd)
    if (!stats.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EINVAL' })
    if (expected && !sameEntry(stats, expected)) throw new ChangedUnderfootError()
    if (stats.size > maxBytes) throw Object.assign(new Error('file too large'), { code: 'EFBIG' })
    return { content: readKnownSize(fd, stats.size), stats }
  } finally {
    // A descriptor opened to read: what its close reports changes nothing that was read (the
    // descriptor is released all the same), so it neither turns a read that worked into a
    // failure (an EACCES there once had a restore keep a readable file aside as unreadable)
    // nor hides the read's own error.
    try {
      disk.closeSync(fd)
    } catch {
      // Nothing to do.
    }
  }
}

/**
 * Reads an open file whose `fstat` gave `size`, as `readFileSync(fd)` would (at most `size`
 * bytes, fewer if it shrank meanwhile) but without its own second `fstat`: every memory file
 * read pays one syscall less (a command reads its file at least once).
 */
function readKnownSize(fd: number, size: number): Buffer {
  // An empty size may be a file that does not report one: read it to its end.
  if (size === 0) return disk.readFileSync(fd)
  const buffer = Buffer.allocUnsafe(size)
  let filled = 0
  while (filled < size) {
    const read = disk.readSync(fd, buffer, filled, size - filled, null)
    if (read === 0) break
    filled += read
  }
  return filled === size ? buffer : buffer.subarray(0, filled)
}

/** Options of `writeFileAtomically`. */
export interface WriteOptions {
  /**
   * Runs while the temp file is flushed (e.g. the secret scan); if it throws, nothing is
   * renamed and the error is the write's.
   */
  readonly beforeCommit?: () => Promise<void>
  /**
   * Runs once the temp file is flushed (and `beforeCommit` passed), just before the rename (not
   * with `stage`), given the temp file's stat: the writer's own stamp of what it wrote, which
   * another program's write after the rename cannot pass for, and the last moment to look at
   * the target before it is replaced (the conversations' outside-edit check). If it throws,
   * nothing is renamed.
   */
  readonly beforeRename?: (temp: Stats) => Promise<void>
  /** Told as soon as the temp file is made and written (with `stage` too). */
  readonly tempMade?: () => void
  /**
   * Runs the rename of the temp file over the target (with `stage` too, when it publishes):
   * what is looked at just before and just after it (the folder's kept names, folder-names.ts).
   * Must call `rename` once, and throw nothing.
   */
  readonly aroundRename?: (rename: () => void) => void
  /**
   * `wait` (default): the folder is fsynced before the write returns. `later`: left to
   * `settleFolderSyncs` (the history calls it before its ref moves), see `syncLater`.
   */
  readonly folderSync?: 'wait' | 'later'
  /** Told when the folder could not be flushed after the rename. */
  readonly logger?: Logger
  /**
   * Hands the write over before its temp file is flushed or renamed (after `beforeCommit`
   * passed): the history makes the write durable together with the commit that records it,
   * in the same rounds of fsyncs (docs/durability.md). `stage` must publish the write, or
   * throw with it unpublished; then the temp file is removed and nothing changed.
   */
  readonly stage?: (write: StagedWrite) => Promise<void>
}

/** A write's rename when nothing is wanted around it (`WriteOptions.aroundRename`). */
const renameNow = (rename: () => void): void => rename()

/**
 * A file written under its temp name in its folder, not yet flushed nor renamed over its
 * target (`WriteOptions.stage`): `flush`, then `publish`, then `syncFolder`.
 */
export class StagedWrite {
  private flushing: Promise<void> | null = null
  private fd: number | null
  private done = false

  constructor(
    private readonly folder: Folder,
    readonly name: string,
    /** The temp file's name, in the same folder. */
    readonly temp: string,
    fd: number,
    /** The bytes written. */
    readonly content: Buffer,
    private readonly aroundRename: NonNullable<WriteOptions['aroundRename']> = renameNow,
  ) {
    this.fd = fd
  }

  /** Whether the temp file has been renamed over the target (the change has happened). */
  get published(): boolean {
    return this.done
  }

  /**
   * fsyncs the temp file. Once only: a failure is kept and reported again (a second fsync
   * after a failed one can report success for data that never reached the disk). The first
   * call starts it (`writeFileAtomically` does, as soon as the stage gets the write, so that
   * it runs while the commit's objects are built); later ones wait for the same one.
   */
  flush(): Promise<void> {
    this.flushing ??= this.fd === null ? Promise.resolve() : disk.fsync(this.fd)
    return this.flushing
  }

  /**
   * Renames the flushed temp file over the target: the change happens. `keepOld` is told the
   * target's path (through the folder's handle) just before, to keep the file it replaces
   * alive by a name of its own: the rename then frees nothing (see history/freed-files.ts).
   */
  publish(keepOld?: (entry: string) => void): void {
    if (this.done) return
    const fd = this.fd
    this.fd = null
    if (fd !== null) disk.closeSync(fd)
    keepOld?.(this.folder.entry(this.name))
    this.aroundRename(() =>
      disk.renameSync(this.folder.entry(this.temp), this.folder.entry(this.name)),
    )
    this.done = true
  }

  /** Makes the rename durable (best effort: it has happened either way). */
  async syncFolder(logger?: Logger): Promise<void> {
    await this.folder
      .sync()
      .catch((error: unknown) => logger?.warn('Could not flush a folder after a write', error))
  }

  /**
   * Starts making the rename durable on a descriptor of the folder's own, which outlives the
   * command (its handle closes with it) and is closed once the `fsync` has settled: a flush
   * the result need not wait for (docs/durability.md, "Cost"). Unlike `syncFolder`, the
   * promise rejects when the `fsync` fails. Null where folders are not `fsync`ed (Windows) or
   * no descriptor opens: the caller then waits for `syncFolder`.
   */
  startFolderSync(): Promise<void> | null {
    const fd = this.folder.keptForSync()?.open() ?? null
    if (fd === null) return null
    const flushing = disk.fsync(fd)
    const close = () => closeQuietly(fd)
    void flushing.then(close, close)
    return flushing
  }

  /**
   * The folder, for a checkpoint to `fsync` after this command (its handle closes with the
   * command): named by its device and inode, opened again only when asked. Null where folders
   * are not `fsync`ed (Windows) or it cannot be named.
   */
  keptFolder(): { readonly key: string; open(): number | null } | null {
    return this.folder.keptForSync()
  }

  /** The flush, the rename and the folder's fsync, one after the other (no commit with it). */
  async publishAlone(logger?: Logger): Promise<void> {
    if (this.done) return
    await this.flush()
    this.publish()
    await this.syncFolder(logger)
  }

  /**
   * Drops an unpublished write: its temp file goes. Its descriptor is closed once a flush in
   * flight has settled, never under it (the number could name another file by then).
   */
  abandon(): void {
    if (this.done) return
    const fd = this.fd
    this.fd = null
    unlinkQuietly(this.folder, this.temp)
    if (fd === null) return
    if (this.flushing) {
      const close = () => closeQuietly(fd)
      void this.flushing.then(close, close)
    } else closeQuietly(fd)
  }
}

/**
 * Writes `data` as `name` in `folder` atomically: a hidden temp file beside it, fsync, rename
 * over the target, fsync the folder. The temp file never survives a failure. `beforeCommit`
 * (e.g. the secret scan) runs while the temp file is flushed; if it throws, nothing is renamed.
 * With `stage`, the flush, the rename and the folder's fsync are left to it.
 */
export async function writeFileAtomically(
  folder: Folder,
  name: string,
  data: string | Uint8Array,
  options: WriteOptions = {},
): Promise<void> {
  const beforeCommit = options.beforeCommit ?? (async () => {})
  const temp = `${TEMP_FILE_PREFIX}${randomUUID()}`
  let fd: number | undefined
  // Whether the temp file is still this function's to remove on failure.
  let ownsTemp = true
  try {
    // The mode is only ever narrowed by the umask, so the file is never more than owner-only.
    fd = disk.openSync(folder.entry(temp), OPEN.WRITE_NEW | OPEN.NOFOLLOW, FILE_MODE)
    if (options.stage) {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data)
      disk.writeFileSync(fd, bytes)
      options.tempMade?.()
      await beforeCommit()
      const write = new StagedWrite(folder, name, temp, fd, bytes, options.aroundRename)
      // The staged write owns the temp file from here on.
      fd = undefined
      ownsTemp = false
      try {
        // Its fsync starts now and runs while the stage builds the commit's objects; the stage
        // waits for it, with the log's, before the rename (a failure is kept for that wait).
        // Inside the try: one that throws at once still has the write abandoned.
        write.flush().catch(() => {})
        await options.stage(write)
        // A stage that returned without publishing: the write goes ahead on its own.
        await write.publishAlone(options.logger)
      } catch (error) {
        write.abandon()
        throw error
      }
      return
    }
    disk.writeFileSync(fd, data)
    options.tempMade?.()
    const [flush, check] = await Promise.allSettled([disk.fsync(fd), beforeCommit()])
    if (flush.status === 'rejected') throw flush.reason
    if (check.status === 'rejected') throw check.reason
    if (options.beforeRename) await options.beforeRename(disk.fstatSync(fd))
    const closing = fd
    fd = undefined
    disk.closeSync(closing)
    const around = options.aroundRename ?? renameNow
    around(() => disk.renameSync(folder.entry(temp), folder.entry(name)))
    ownsTemp = false
  } catch (error) {
    if (fd !== undefined) closeQuietly(fd)
    if (ownsTemp) unlinkQuietly(folder, temp)
    throw error
  }
  // The rename has happened: the new content is in place, so reporting a failure now would
  // say that nothing changed when something did. Durability of the entry is best effort.
  if (options.folderSync === 'later') folder.syncLater()
  else {
    await folder
      .sync()
      .catch((error: unknown) =>
        options.logger?.warn('Could not flush a folder after a write', error),
      )
  }
}

/**
 * Removes the folder `name` of `parent` and everything in it, through handles all the way
 * down: a symlink swapped in for a folder inside is unlinked itself, never followed.
 */
export function removeTree(parent: Folder, name: string): void {
  let folder: Folder
  try {
    folder = parent.openChild(name)
  } catch (error) {
    if (isCode(error, 'ENOENT')) return
    if (!isCode(error, 'ENOTDIR') && !isCode(error, 'ELOOP')) throw error
    // Not a folder (any more): remove the entry itself.
    unlinkMissingOk(parent, name)
    return
  }
  try {
    for (const dirent of folder.list()) {
      if (dirent.isDirectory()) removeTree(folder, dirent.name)
      else unlinkMissingOk(folder, dirent.name)
    }
  } finally {
    folder.close()
  }
  try {
    disk.rmdirSync(parent.entry(name))
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error
  }
}

function unlinkMissingOk(folder: Folder, name: string): void {
  try {
    disk.unlinkSync(folder.entry(name))
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error
  }
}

function unlinkQuietly(folder: Folder, name: string): void {
  try {
    disk.unlinkSync(folder.entry(name))
  } catch {
    // Never created, or already gone.
  }
}

/** Removes every temp file or folder of an interrupted write under `folder` (recursively). */
export function removeStrayTemps(folder: Folder): void {
  for (const dirent of folder.list()) {
    if (isOwnTempName(dirent.name)) removeTree(folder, dirent.name)
    else if (dirent.isDirectory()) {
      const child = folder.openChildIfFolder(dirent.name)
      if (!child) continue
      try {
        removeStrayTemps(child)
      } finally {
        child.close()
      }
    }
  }
}
