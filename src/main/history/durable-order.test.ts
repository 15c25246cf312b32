import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readFileSync, readlinkSync, statSync } from 'node:fs'
import path from 'node:path'
import { nodeDisk, OPEN, setDisk, type Disk } from '../lib/disk'
import { openVersionedMemory, type VersionedMemory } from './index'
import { SPARE_PREFIX } from './object-store'
import {
  decodeMains,
  decodeRecords,
  decodeRenames,
  LOG_FILES,
  type LoggedRename,
} from './objects/object-log'
import {
  CLAUDE,
  createFiles,
  folderFiles,
  fsck,
  gitCli,
  headMatchesFolder,
  leftoverTempFiles,
  strReplaceWithFlushHeld,
  tempDataDir,
  TWO_FILES,
} from './test-helpers'

// The order of a command's durable steps (docs/durability.md, "When a change is acknowledged"):
// what must be flushed before each rename, recorded from the real calls a command makes.

type Kind =
  | 'memory-temp'
  | 'object'
  | 'log'
  | 'ref-temp'
  | 'ref'
  | 'memory-folder'
  | 'object-folder'
  | 'ref-folder'

function kindOf(file: string, flags: number): Kind | null {
  const folder = (flags & OPEN.DIRECTORY) !== 0
  if (file.includes('history.git')) {
    if (folder) return /refs\/heads$/.test(file) ? 'ref-folder' : 'object-folder'
    // An object's file, by its temp name or (a checkpoint opens it again) its own.
    if (/\/objects\/[0-9a-f]{2}\/(tmp_obj_|[0-9a-f]{38}$)/.test(file)) return 'object'
    if (/\/cairn-wal-\d$/.test(file)) return 'log'
    if (/refs\/heads\/main$/.test(file)) return 'ref'
    return /refs\/heads\/main\..*\.lock$/.test(file) ? 'ref-temp' : null
  }
  if (folder) return 'memory-folder'
  return file.includes('.cairn-tmp-') ? 'memory-temp' : null
}

// A descriptor open on one of the object store's spare files (see `SPARE_PREFIX`).
function isSpare(fd: number): boolean {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`).includes(`/objects/${SPARE_PREFIX}`)
  } catch {
    return false
  }
}

// A descriptor opened before recording began: the log's files (opened with the history), or a
// memory folder a commit before kept for the checkpoint (see `Folder.keptForSync`).
function kindByLink(fd: number): Kind | undefined {
  if (isLog(fd)) return 'log'
  try {
    const target = readlinkSync(`/proc/self/fd/${fd}`)
    if (target.includes('/memories') && statSync(target).isDirectory()) return 'memory-folder'
  } catch {
    // Closed meanwhile.
  }
  return undefined
}

function isLog(fd: number): boolean {
  try {
    return /\/cairn-wal-\d$/.test(readlinkSync(`/proc/self/fd/${fd}`))
  } catch {
    return false
  }
}

/** The newest value of `main` the log's files hold now (by sequence number), or null. */
function loggedMain(): string | null {
  let newest: { oid: string | null; seq: number } | null = null
  for (const name of LOG_FILES) {
    for (const main of decodeMains(readFileSync(path.join(dataDir, 'history.git', name)))) {
      if (!newest || main.seq > newest.seq) newest = main
    }
  }
  return newest?.oid ?? null
}

/**
 * Every fsync (when it finished, and of what: `flushed other` for anything else), rename and
 * move of the ref (its rename, or its write in place), in order; at the ref's move, whether
 * the log already held its new value.
 */
function recordingDisk(events: string[], holdFolders?: Promise<void>): Disk {
  const kinds = new Map<number, Kind>()
  return {
    ...nodeDisk,
    openSync(file, flags, mode) {
      const fd = nodeDisk.openSync(file, flags, mode)
      const kind = kindOf(file, flags)
      if (kind) kinds.set(fd, kind)
      else kinds.delete(fd)
      return fd
    },
    closeSync(fd) {
      kinds.delete(fd)
      nodeDisk.closeSync(fd)
    },
    async fsync(fd) {
      // The log's files were opened with the history, before recording began.
      const kind = kinds.get(fd) ?? kindByLink(fd)
      if (kind === 'memory-folder' && holdFolders) {
        events.push('memory-folder flush started')
        await holdFolders
      }
      await nodeDisk.fsync(fd)
      events.push(`flushed ${kind ?? 'other'}`)
    },
    renameSync(from, to) {
      if (/refs\/heads\/main$/.test(to)) {
        const value = readFileSync(from, 'utf8').trim()
        events.push(loggedMain() === value ? 'logged ref value' : 'ref value not logged')
      }
      nodeDisk.renameSync(from, to)
      if (from.includes('.cairn-tmp-')) events.push('renamed memory file')
      else if (/refs\/heads\/main$/.test(to)) events.push('moved ref')
    },
    async ftruncate(fd, length) {
      const log = isLog(fd)
      await nodeDisk.ftruncate(fd, length)
      if (log) events.push('emptied log')
    },
    writeSync(fd, data, position) {
      const moving = kinds.get(fd) === 'ref'
      if (moving) {
        const value = Buffer.from(data).toString('utf8').trim()
        events.push(loggedMain() === value ? 'logged ref value' : 'ref value not logged')
      }
      const written = nodeDisk.writeSync(fd, data, position)
      if (moving) events.push('moved ref')
      return written
    },
  }
}

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory
let restoreDisk: (() => void) | null = null

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  memory = await openVersionedMemory({ dataDir, watch: false })
  await createFiles(memory, TWO_FILES)
})

afterEach(async () => {
  restoreDisk?.()
  restoreDisk = null
  await memory.close()
  await cleanup()
})

// What the log held when the last `recorded` with `thenClose` was acknowledged (before the
// close emptied it).
let atAcknowledgement: { ids: Set<string>; main: string | null; renames: LoggedRename[] } = {
  ids: new Set(),
  main: null,
  renames: [],
}

async function recorded(
  input: Record<string, unknown>,
  { thenClose = false, holdFolders = false } = {},
): Promise<string[]> {
  const events: string[] = []
  // `holdFolders`: every memory folder's flush waits until the result is back (or, should the
  // result wait for it, until a fallback lets it go, so that the order tells).
  let release: () => void = () => {}
  const held = new Promise<void>((resolve) => (release = resolve))
  const fallback = holdFolders ? setTimeout(release, 3000) : undefined
  restoreDisk = setDisk(recordingDisk(events, holdFolders ? held : undefined))
  try {
    const outcome = await memory.execute(input, CLAUDE)
    expect(outcome.isError).toBe(false)
    expect(outcome.commit).not.toBeNull()
    events.push('acknowledged')
    release()
    clearTimeout(fallback)
    if (thenClose) {
      atAcknowledgement = {
        ids: loggedIds(),
        main: loggedMain(),
        renames: LOG_FILES.flatMap((name) =>
          decodeRenames(readFileSync(path.join(dataDir, 'history.git', name))),
        ).sort((a, b) => a.seq - b.seq),
      }
      // The close checkpoints the log (the test reopens the memory after).
      await memory.close()
    }
  } finally {
    release()
    clearTimeout(fallback)
    restoreDisk()
    restoreDisk = null
  }
  return events
}

const first = (events: string[], event: string) => events.indexOf(event)
const last = (events: string[], event: string) => events.lastIndexOf(event)

/** The ids the write-ahead log holds records of, from its files as they are now. */
function loggedIds(): Set<string> {
  const ids = new Set<string>()
  for (const name of LOG_FILES) {
    const bytes = readFileSync(path.join(dataDir, 'history.git', name))
    for (const record of decodeRecords(bytes)) ids.add(record.oid)
  }
  return ids
}

/** HEAD's commit, its root tree and the blob now at `file`, by the git CLI. */
function headObjects(file: string): string[] {
  return [
    gitCli(dataDir, 'rev-parse', 'main').trim(),
    gitCli(dataDir, 'rev-parse', 'main^{tree}').trim(),
    ...(file ? [gitCli(dataDir, 'rev-parse', `main:${file}`).trim()] : []),
  ]
}

describe('a command with its commit, step by step', () => {
  for (const [name, input] of [
    [
      'a str_replace at the top',
      { command: 'str_replace', path: '/memories/a.md', old_str: 'beta', new_str: 'gamma' },
    ],
    [
      'an insert in a folder',
      { command: 'insert', path: '/memories/dir/b.md', insert_line: 2, insert_text: 'three' },
    ],
    [
      'a create over an existing file',
      { command: 'create', path: '/memories/a.md', file_text: 'new\n' },
    ],
  ] as const) {
    it(`${name}: its file and the log (the objects, the ref's new value and the rename) are flushed before anything is renamed, the file renamed before the ref moves, then its folder's flush started, which the result does not wait for: 3 fsyncs, one round on the path`, async () => {
      const events = await recorded(input, { thenClose: true, holdFolders: true })
      const fileRenamed = first(events, 'renamed memory file')
      const refMoved = first(events, 'moved ref')
      expect(fileRenamed).toBeGreaterThan(-1)
      expect(refMoved).toBeGreaterThan(fileRenamed)
      // Nothing is renamed before the file's content and the log's records of every new object
      // (the blob, the trees, the commit) and of the ref's new value are on the disk ...
      expect(first(events, 'flushed memory-temp')).toBeGreaterThan(-1)
      expect(first(events, 'flushed memory-temp')).toBeLessThan(fileRenamed)
      const acknowledged = events.indexOf('acknowledged')
      const command = events.slice(0, acknowledged)
      expect(command.filter((event) => event === 'flushed log')).toHaveLength(1)
      expect(first(events, 'flushed log')).toBeLessThan(fileRenamed)
      expect(events[refMoved - 1]).toBe('logged ref value')
      // ... and the log covers them: no object file nor folder is flushed on the way, nor the
      // ref's temp file, the ref or its folder.
      const file = 'path' in input ? input.path.replace('/memories/', '') : ''
      for (const oid of headObjects(file)) expect(atAcknowledgement.ids).toContain(oid)
      expect(atAcknowledgement.main).toBe(headObjects('')[0])
      for (const kind of ['object', 'object-folder', 'ref-temp', 'ref', 'ref-folder', 'other']) {
        expect(command).not.toContain(`flushed ${kind}`)
      }
      // The log names the rename (redone at open after a kill): the file's temp file over the
      // file, with the new version.
      const rename = atAcknowledgement.renames.at(-1)!
      expect(`${rename.dir ? `${rename.dir}/` : ''}${rename.name}`).toBe(file)
      expect(rename.temp).toMatch(/^\.cairn-tmp-/)
      expect(rename.commit).toBe(headObjects('')[0])
      expect(rename.blob).toBe(headObjects(file)[2])
      // Round 1: the file's temp file and the log, at once; then, once the file is renamed and
      // the ref moved, the file's folder's flush starts, and the result comes back without
      // waiting for it: it is owed (a later move of that folder, or a commit that bypasses the
      // log, waits for it: owed-flushes.test.ts; review13-perf R1, R2).
      const flushes = command.filter((event) => event.startsWith('flushed '))
      expect(flushes.sort()).toEqual(['flushed log', 'flushed memory-temp'])
      const folderStarted = command.indexOf('memory-folder flush started')
      expect(folderStarted).toBeGreaterThan(refMoved)
      // It completes after the result (held until then), and before the close's checkpoint
      // empties the log.
      const folderFlushed = first(events, 'flushed memory-folder')
      expect(folderFlushed).toBeGreaterThan(acknowledged)
      expect(first(events, 'emptied log')).toBeGreaterThan(folderFlushed)
      memory = await openVersionedMemory({ dataDir, watch: false })
      expect(await headMatchesFolder(dataDir)).toBe(true)
      fsck(dataDir)
    })
  }

  it("a str_replace starts its file's flush before it writes its commit's objects", async () => {
    const events: string[] = []
    const recording = recordingDisk(events)
    const temps = new Set<number>()
    restoreDisk = setDisk({
      ...recording,
      openSync(file, flags, mode) {
        const kind = kindOf(file, flags)
        if (kind === 'object') events.push('object written')
        const fd = recording.openSync(file, flags, mode)
        if (kind === 'memory-temp') temps.add(fd)
        return fd
      },
      fsync(fd) {
        if (temps.has(fd)) events.push('temp flush started')
        return recording.fsync(fd)
      },
      // An object written into one of the store's spare files (opened between commands,
      // before recording began), which is how most objects are written now.
      writeFileSync(file, data, options) {
        if (typeof file === 'number' && isSpare(file)) events.push('object written')
        return recording.writeFileSync(file, data, options)
      },
    })
    try {
      const outcome = await memory.execute(
        { command: 'str_replace', path: '/memories/a.md', old_str: 'beta', new_str: 'gamma' },
        CLAUDE,
      )
      expect(outcome.commit).not.toBeNull()
    } finally {
      restoreDisk()
      restoreDisk = null
    }
    // Its temp file's flush is under way while the blob, the trees and the commit are
    // written; the rename still waits for it and for the log's (the test above).
    expect(events.filter((event) => event === 'object written').length).toBeGreaterThan(0)
    expect(first(events, 'temp flush started')).toBeGreaterThan(-1)
    expect(first(events, 'temp flush started')).toBeLessThan(first(events, 'object written'))
    expect(first(events, 'flushed memory-temp')).toBeLessThan(first(events, 'renamed memory file'))
    expect(await headMatchesFolder(dataDir)).toBe(true)
  })

  it("a str_replace appends its side index entry while its folder's flush runs, and returns before that flush completes", async () => {
    const events: string[] = []
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    let flushed: () => void = () => {}
    const folderFlushed = new Promise<void>((resolve) => (flushed = resolve))
    // The index's files were opened with the history: named by the kernel.
    const isIndex = (fd: number) => readlinkSync(`/proc/self/fd/${fd}`).includes('cairn-index')
    const disk: Disk = {
      ...nodeDisk,
      writeSync(fd, data, position) {
        if (isIndex(fd)) events.push('index appended')
        return nodeDisk.writeSync(fd, data, position)
      },
      async fsync(fd) {
        if (kindByLink(fd) !== 'memory-folder') return nodeDisk.fsync(fd)
        events.push('folder flush started')
        await held
        await nodeDisk.fsync(fd)
        events.push('folder flushed')
        flushed()
      },
    }
    // Should the result wait for the flush, a fallback lets it go, so that the order tells
    // (and the test does not hang).
    const hold = { disk, release: () => release(), fallbackMs: 3000 }
    await strReplaceWithFlushHeld(memory, events, hold, async () => {
      release()
      await folderFlushed
      // The entry's writes (one or more) come while the flush is held, the result before it.
      expect(events[0]).toBe('folder flush started')
      expect(events.slice(1, -2).every((event) => event === 'index appended')).toBe(true)
      expect(events.slice(1, -2).length).toBeGreaterThan(0)
      expect(events.slice(-2)).toEqual(['acknowledged', 'folder flushed'])
    })
    // The index holds the commit, as the git CLI names it.
    const newest = (await memory.log({ offset: 0, limit: 1 })).entries[0]!
    expect(newest.oid).toBe(headObjects('')[0])
    expect(await headMatchesFolder(dataDir)).toBe(true)
  })

  it("a str_replace whose rename cannot be logged (its folder's descriptor for the log will not open) returns only after its folder's flush, as before", async () => {
    // A fresh log: no folder kept yet from the setup's creates.
    await memory.close()
    memory = await openVersionedMemory({ dataDir, watch: false })
    const events: string[] = []
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    const folderFlushes: Promise<void>[] = []
    const disk: Disk = {
      ...nodeDisk,
      openSync(file, flags, mode) {
        // The folder kept for the log's checkpoint is opened again through the handle, without
        // O_NOFOLLOW (`Folder.keptForSync`): refused, so the rename cannot be logged (as past
        // the log's cap of kept folders, review21-round R2).
        const target = /^\/proc\/self\/fd\/\d+$/.test(file) ? readlinkSync(file) : ''
        if ((flags & OPEN.NOFOLLOW) === 0 && target === path.join(dataDir, 'memories')) {
          throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' })
        }
        return nodeDisk.openSync(file, flags, mode)
      },
      async fsync(fd) {
        if (kindByLink(fd) !== 'memory-folder') return nodeDisk.fsync(fd)
        const flushing = (async () => {
          events.push('folder flush started')
          await held
          await nodeDisk.fsync(fd)
          events.push('folder flushed')
        })()
        folderFlushes.push(flushing)
        return flushing
      },
    }
    // Should the result not wait for the flush, it comes back while the flush is held; else a
    // fallback lets the flush go (the test does not hang), and the order tells.
    const hold = { disk, release: () => release(), fallbackMs: 3000 }
    await strReplaceWithFlushHeld(memory, events, hold, async () => {
      release()
      await Promise.all(folderFlushes)
      expect(events[0]).toBe('folder flush started')
      expect(events.indexOf('folder flushed')).toBeGreaterThan(0)
      expect(events.indexOf('folder flushed')).toBeLessThan(events.indexOf('acknowledged'))
      // Its rename is not in the log: nothing there for open to redo.
      const renames = LOG_FILES.flatMap((name) =>
        decodeRenames(readFileSync(path.join(dataDir, 'history.git', name))),
      )
      expect(renames.map(({ commit }) => commit)).not.toContain(
        gitCli(dataDir, 'rev-parse', 'main').trim(),
      )
    })
    expect(await headMatchesFolder(dataDir)).toBe(true)
  })

  it("appends a commit's side index entry only once its ref is durable, on the path the log does not take", async () => {
    // Just under the tool's 1 MiB limit, over the log's cap with the commit's trees: the ref is
    // renamed into place, and refs/heads/ is fsynced after the rename (review19-cold R1).
    const big = `${'x'.repeat(99)}\n`.repeat(10_484) + 'beta\n'
    const created = await memory.execute(
      { command: 'create', path: '/memories/big.md', file_text: big },
      CLAUDE,
    )
    expect(created.isError).toBe(false)
    const events: string[] = []
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    let refsStarted: () => void = () => {}
    const refsFlushing = new Promise<void>((resolve) => (refsStarted = resolve))
    const folderFlushes: Promise<void>[] = []
    const isIndex = (fd: number) => readlinkSync(`/proc/self/fd/${fd}`).includes('cairn-index')
    const isRefFolder = (fd: number) => /refs\/heads$/.test(readlinkSync(`/proc/self/fd/${fd}`))
    restoreDisk = setDisk({
      ...nodeDisk,
      writeSync(fd, data, position) {
        if (isIndex(fd)) events.push('index appended')
        return nodeDisk.writeSync(fd, data, position)
      },
      async fsync(fd) {
        if (kindByLink(fd) === 'memory-folder') {
          const flushing = nodeDisk.fsync(fd)
          folderFlushes.push(flushing)
          return flushing
        }
        if (!isRefFolder(fd)) return nodeDisk.fsync(fd)
        events.push('ref folder flush started')
        refsStarted()
        await held
        await nodeDisk.fsync(fd)
        events.push('ref folder flushed')
      },
    })
    try {
      const running = memory.execute(
        { command: 'str_replace', path: '/memories/big.md', old_str: 'beta', new_str: 'gamma' },
        CLAUDE,
      )
      // The ref has moved and its folder's flush is held. The memory folder's flush starts in
      // the same step, and is let finish: the entry must still wait for the ref's.
      await refsFlushing
      await Promise.all(folderFlushes)
      expect(folderFlushes.length).toBeGreaterThan(0)
      expect(events).toEqual(['ref folder flush started'])
      release()
      const outcome = await running
      expect(outcome.isError).toBe(false)
      // The entry's writes (a record may take more than one), all after the ref's flush.
      expect(events.slice(0, 2)).toEqual(['ref folder flush started', 'ref folder flushed'])
      expect(events.length).toBeGreaterThan(2)
      expect(new Set(events.slice(2))).toEqual(new Set(['index appended']))
    } finally {
      release()
      restoreDisk()
      restoreDisk = null
    }
    // The index holds the commit, as the git CLI names it.
    const newest = (await memory.log({ offset: 0, limit: 1 })).entries[0]!
    expect(newest.oid).toBe(headObjects('')[0])
    expect(await headMatchesFolder(dataDir)).toBe(true)
  })

  for (const [name, input] of [
    ['a delete', { command: 'delete', path: '/memories/dir/b.md' }],
    ['a rename', { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/c.md' }],
  ] as const) {
    it(`${name}: its folder and the log (the objects and the ref's new value) are flushed before the ref moves, which is not flushed`, async () => {
      const events = await recorded(input)
      const refMoved = first(events, 'moved ref')
      expect(refMoved).toBeGreaterThan(-1)
      expect(last(events, 'flushed memory-folder')).toBeLessThan(refMoved)
      expect(events.filter((event) => event === 'flushed log')).toHaveLength(1)
      expect(last(events, 'flushed log')).toBeLessThan(refMoved)
      expect(events[refMoved - 1]).toBe('logged ref value')
      for (const kind of ['object', 'object-folder', 'ref-temp', 'ref', 'ref-folder', 'other']) {
        expect(events).not.toContain(`flushed ${kind}`)
      }
      for (const oid of headObjects('')) expect(loggedIds()).toContain(oid)
      expect(loggedMain()).toBe(headObjects('')[0])
      expect(await headMatchesFolder(dataDir)).toBe(true)
      fsck(dataDir)
    })
  }
})

describe('a staged write that changes nothing', () => {
  it('is published without a commit and leaves no temp file', async () => {
    const head = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
    const outcome = await memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'alpha\nbeta\n' },
      CLAUDE,
    )
    expect(outcome.isError).toBe(false)
    expect(outcome.commit).toBeNull()
    expect((await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid).toBe(head)
    expect(leftoverTempFiles(dataDir)).toEqual([])
    expect(await headMatchesFolder(dataDir)).toBe(true)
  })
})

/** A `str_replace` run while every `fsync` of a file whose name holds `part` fails (EIO). */
async function editWhileFsyncFails(part: string) {
  const names = new Map<number, string>()
  restoreDisk = setDisk({
    ...nodeDisk,
    openSync(file, flags, mode) {
      const fd = nodeDisk.openSync(file, flags, mode)
      names.set(fd, file)
      return fd
    },
    async fsync(fd) {
      // The log's files were opened with the history: named by the kernel.
      const name = names.get(fd) ?? readlinkSync(`/proc/self/fd/${fd}`)
      if (name.includes(part)) {
        throw Object.assign(new Error('EIO: injected'), { code: 'EIO' })
      }
      await nodeDisk.fsync(fd)
    },
  })
  try {
    return await memory.execute(
      { command: 'str_replace', path: '/memories/a.md', old_str: 'beta', new_str: 'gamma' },
      CLAUDE,
    )
  } finally {
    restoreDisk()
    restoreDisk = null
  }
}

describe('when the flushes of a staged write fail', () => {
  it("fails the command and changes nothing when the file's own flush fails", async () => {
    const before = await folderFiles(dataDir)
    const head = (await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid
    const outcome = await editWhileFsyncFails('.cairn-tmp-')
    expect(outcome.isError).toBe(true)
    expect(outcome.commit).toBeNull()
    // Its commit's value of main was logged with its objects: the value main keeps is logged
    // after it, so a replay at the next open never moves main to the failed commit.
    expect(loggedMain()).toBe(head)
    expect(await folderFiles(dataDir)).toEqual(before)
    expect((await memory.log({ offset: 0, limit: 1 })).entries[0]!.oid).toBe(head)
    expect(leftoverTempFiles(dataDir)).toEqual([])
    // The next change works and leaves the history matching the folder.
    const next = await memory.execute(
      { command: 'str_replace', path: '/memories/a.md', old_str: 'beta', new_str: 'delta' },
      CLAUDE,
    )
    expect(next.commit).not.toBeNull()
    expect(await headMatchesFolder(dataDir)).toBe(true)
    fsck(dataDir)
  })

  it('makes the objects of a failed append durable before the next ref moves', async () => {
    // The log's fsync fails once. The objects of that batch are then covered only by a
    // checkpoint, whose fsyncs of their files (opened again by name) are held here until the
    // ref moves (or a while passes): the retried commit's flush must wait for them.
    const events: string[] = []
    const batch = new Set<string>()
    const byName = new Map<number, string>()
    const refFds = new Set<number>()
    let failing = true
    let moved: () => void = () => undefined
    const refMoved = new Promise<void>((resolve) => (moved = resolve))
    restoreDisk = setDisk({
      ...nodeDisk,
      openSync(file, flags, mode) {
        const fd = nodeDisk.openSync(file, flags, mode)
        if (batch.has(file) && (flags & OPEN.WRITE_NEW) === 0) byName.set(fd, file)
        else byName.delete(fd)
        if (/refs\/heads\/main$/.test(file)) refFds.add(fd)
        else refFds.delete(fd)
        return fd
      },
      async fsync(fd) {
        if (failing && isLog(fd)) {
          failing = false
          throw Object.assign(new Error('EIO: injected'), { code: 'EIO' })
        }
        const file = byName.get(fd)
        if (file) await Promise.race([refMoved, new Promise((r) => setTimeout(r, 200))])
        await nodeDisk.fsync(fd)
        if (file) events.push(`flushed ${file}`)
      },
      renameSync(from, to) {
        nodeDisk.renameSync(from, to)
        if (failing && /\/objects\/[0-9a-f]{2}\/[0-9a-f]{38}$/.test(to)) batch.add(to)
        if (/refs\/heads\/main$/.test(to)) {
          events.push('moved ref')
          moved()
        }
      },
      // A logged ref is written in place.
      writeSync(fd, data, position) {
        const written = nodeDisk.writeSync(fd, data, position)
        if (refFds.has(fd)) {
          events.push('moved ref')
          moved()
        }
        return written
      },
      closeSync(fd) {
        refFds.delete(fd)
        nodeDisk.closeSync(fd)
      },
    })
    const outcome = await memory.execute(
      { command: 'str_replace', path: '/memories/a.md', old_str: 'beta', new_str: 'gamma' },
      CLAUDE,
    )
    expect(outcome.commitPending).toBe(true)
    expect(batch.size).toBeGreaterThan(0)
    // The next command makes the commit owed first, then its own.
    await memory.execute({ command: 'create', path: '/memories/z.md', file_text: 'z\n' }, CLAUDE)
    const moves = first(events, 'moved ref')
    expect(moves).toBeGreaterThan(-1)
    for (const file of batch) {
      expect(first(events, `flushed ${file}`)).toBeGreaterThan(-1)
      expect(first(events, `flushed ${file}`)).toBeLessThan(moves)
    }
    restoreDisk()
    restoreDisk = null
    expect(await headMatchesFolder(dataDir)).toBe(true)
    fsck(dataDir)
  })

  it('makes the change and owes its commit when the log cannot be flushed', async () => {
    const outcome = await editWhileFsyncFails('cairn-wal-')
    expect(outcome.isError).toBe(false)
    expect(outcome.commit).toBeNull()
    expect(outcome.commitPending).toBe(true)
    expect((await folderFiles(dataDir)).get('a.md')).toBe('alpha\ngamma\n')
    // The commit owed is made, with Claude as its author, before the next change.
    await memory.execute({ command: 'create', path: '/memories/z.md', file_text: 'z\n' }, CLAUDE)
    const log = (await memory.log({ offset: 0, limit: 2 })).entries
    expect(log.map((entry) => entry.subject)).toEqual([
      'create /memories/z.md',
      'str_replace /memories/a.md',
    ])
    expect(log[1]!.actor).toBe('claude')
    expect(await headMatchesFolder(dataDir)).toBe(true)
    fsck(dataDir)
  })
})
