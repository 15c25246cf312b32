import { mkdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { deflateSync } from 'node:zlib'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../../lib/disk'
import {
  createObjectStore,
  initRepository,
  prepareMainRef,
  serializeCommit,
  type ObjectStore,
} from '../object-store'
import { fsck, gitCli, tempDataDir } from '../test-helpers'
import { mainAfterReplay } from './logged-main'
import {
  decodeLog,
  decodeMains,
  decodeRecords,
  decodeRenames,
  encodeRecord,
  encodeRefRecord,
  encodeRenameRecord,
  LOG_FILES,
  MAX_KEPT_FOLDERS,
  type LogRecord,
} from './object-log'

// `main`'s value in the write-ahead log (docs/durability.md, "Cost" and "Opening"): the ref
// record's format, where open moves `main` after a replay, and the ref's durability around a
// checkpoint, on a real bare repository.

let dataDir: string
let cleanup: () => Promise<void>
let gitdir: string
const opened: ObjectStore[] = []
let restoreDisk: (() => void) | null = null

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  gitdir = path.join(dataDir, 'history.git')
  await initRepository(gitdir)
})

afterEach(async () => {
  restoreDisk?.()
  restoreDisk = null
  for (const store of opened.splice(0)) store.close()
  await cleanup()
})

const A = 'a'.repeat(40)
const B = 'b'.repeat(40)
const C = 'c'.repeat(40)
const D = 'd'.repeat(40)
const T = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'

/** A logged commit record `oid` whose parents are `parents` (its id is not checked here). */
function commitRecord(oid: string, ...parents: string[]): LogRecord {
  const body = [`tree ${T}`, ...parents.map((p) => `parent ${p}`), 'author x <x> 1 +0000', '', 'm']
  return { oid, type: 'commit', content: Buffer.from(body.join('\n')) }
}

describe('ref records', () => {
  it('are read back in order with the objects, and a torn or altered one ends the reading', () => {
    const blob = Buffer.from('blob 3\0one')
    const store = createObjectStore(gitdir)
    const oid = store.hash('blob', Buffer.from('one'))
    store.close()
    const object = encodeRecord(oid, deflateSync(blob))
    const bytes = Buffer.concat([object, encodeRefRecord(A, 7), encodeRefRecord(null, 8), object])
    expect(decodeLog(bytes).map((entry) => entry.kind)).toEqual([
      'object',
      'main',
      'main',
      'object',
    ])
    expect(decodeMains(bytes)).toEqual([
      { oid: A, seq: 7 },
      { oid: null, seq: 8 },
    ])
    expect(decodeRecords(bytes).map((record) => record.oid)).toEqual([oid, oid])
    // Cut short, or one byte of its payload changed: the records before it only.
    const ref = encodeRefRecord(B, 9)
    expect(decodeLog(Buffer.concat([object, ref.subarray(0, ref.length - 1)]))).toHaveLength(1)
    const altered = Buffer.from(ref)
    altered[altered.length - 3] ^= 1
    expect(decodeLog(Buffer.concat([object, altered, object]))).toHaveLength(1)
  })

  it('stop a reader that knows only object records: its length reads as past any log', () => {
    // What code before ref records did: a length past the end of the bytes ends the reading.
    const word = encodeRefRecord(A, 0).readUInt32BE(0)
    expect(word).toBeGreaterThanOrEqual(0x8000_0000)
  })
})

describe('where main goes after a replay', () => {
  const log = [commitRecord(B, A), commitRecord(C, B)]
  const mains = [
    { oid: B, seq: 4 },
    { oid: C, seq: 5 },
  ]

  it('forward to the newest logged value from a lost ref, itself, or an ancestor', () => {
    expect(mainAfterReplay(null, log, mains)).toBe(C)
    expect(mainAfterReplay(B, log, mains)).toBe(C)
    // A: the value durable before the first logged commit (its parent).
    expect(mainAfterReplay(A, log, mains)).toBe(C)
    expect(mainAfterReplay(C, log, mains)).toBeNull()
  })

  it('never back nor aside', () => {
    expect(mainAfterReplay(D, log, mains)).toBeNull()
    // A descendant (a merge made by sync, moved to durably): left.
    expect(mainAfterReplay(D, [...log, commitRecord(D, C)], mains)).toBeNull()
  })

  it('takes the newest by sequence number, whichever file or place it is in', () => {
    expect(mainAfterReplay(A, log, [...mains].reverse())).toBe(C)
    // The log's last value is the one a failed commit went back to: main stays there.
    expect(mainAfterReplay(B, log, [...mains, { oid: B, seq: 6 }])).toBeNull()
    expect(mainAfterReplay(null, log, [...mains, { oid: B, seq: 6 }])).toBe(B)
    // "No value" never removes main.
    expect(mainAfterReplay(null, log, [{ oid: null, seq: 1 }])).toBeNull()
    expect(mainAfterReplay(null, log, [])).toBeNull()
  })

  it('follows every parent of a logged merge', () => {
    const merge = [commitRecord(C, B, D), commitRecord(B, A)]
    expect(mainAfterReplay(D, merge, [{ oid: C, seq: 1 }])).toBe(C)
    expect(mainAfterReplay(A, merge, [{ oid: C, seq: 1 }])).toBe(C)
  })
})

async function openStore(): Promise<ObjectStore> {
  const store = createObjectStore(gitdir)
  opened.push(store)
  await store.openLog()
  return store
}

/** Writes a commit (on `parent`) and flushes it with `main`'s new value; the ref not renamed. */
async function commitLogged(store: ObjectStore, parent: string | null) {
  const tree = await store.write('tree', Buffer.alloc(0))
  const body = serializeCommit({
    tree,
    parent,
    author: { name: 'Test', email: 'test@example.invalid' },
    timestamp: 1_700_000_000 + (parent ? 1 : 0),
    message: 'test\n',
  })
  const oid = await store.write('commit', body)
  const ref = prepareMainRef(gitdir, oid)
  const logged = await store.flush(oid)
  expect(logged).not.toBeNull()
  return { oid, ref, logged: logged! }
}

/** Records every fsync (the path) and ftruncate (`emptied <path>`) from now on. */
function recordCalls(): string[] {
  const calls: string[] = []
  restoreDisk = setDisk({
    ...nodeDisk,
    async fsync(fd) {
      const file = readlinkSync(`/proc/self/fd/${fd}`)
      await nodeDisk.fsync(fd)
      calls.push(file)
    },
    async ftruncate(fd, length) {
      calls.push(`emptied ${readlinkSync(`/proc/self/fd/${fd}`)}`)
      await nodeDisk.ftruncate(fd, length)
    },
  })
  return calls
}

const mainFile = () => path.join(gitdir, 'refs', 'heads', 'main')
const headsDir = () => path.join(gitdir, 'refs', 'heads')
const logPath = (n: 0 | 1) => path.join(gitdir, LOG_FILES[n])

describe("the ref's durability around a checkpoint", () => {
  it('a checkpoint flushes refs/heads/main and refs/heads/ before it empties a log with ref records', async () => {
    const store = await openStore()
    const { oid, ref, logged } = await commitLogged(store, null)
    ref.move()
    await logged.moved()
    const calls = recordCalls()
    await store.checkpoint()
    const emptied = calls.indexOf(`emptied ${logPath(0)}`)
    expect(emptied).toBeGreaterThan(-1)
    expect(calls.indexOf(mainFile())).toBeGreaterThan(-1)
    expect(calls.indexOf(mainFile())).toBeLessThan(emptied)
    expect(calls.indexOf(headsDir())).toBeGreaterThan(-1)
    expect(calls.indexOf(headsDir())).toBeLessThan(emptied)
    expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(oid)
    fsck(dataDir)
  })

  it('at open after a kill, flushes every logged file, its folder, objects/ and the ref before it empties the log', async () => {
    const store = await openStore()
    const first = await commitLogged(store, null)
    first.ref.move()
    await first.logged.moved()
    const second = await commitLogged(store, first.oid)
    second.ref.move()
    await second.logged.moved()
    const logged = decodeRecords(readFileSync(logPath(0))).map(({ oid }) => oid)
    expect(logged).toContain(second.oid)
    // Killed: no checkpoint, the records stay.
    store.close()
    opened.splice(opened.indexOf(store), 1)
    const calls = recordCalls()
    await openStore()
    const emptied = calls.indexOf(`emptied ${logPath(0)}`)
    expect(emptied).toBeGreaterThan(-1)
    const loose = (oid: string) => path.join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2))
    for (const flushed of [
      ...logged.map(loose),
      ...logged.map((oid) => path.dirname(loose(oid))),
      path.join(gitdir, 'objects'),
      mainFile(),
      headsDir(),
    ]) {
      expect(calls.indexOf(flushed), flushed).toBeGreaterThan(-1)
      expect(calls.indexOf(flushed), flushed).toBeLessThan(emptied)
    }
    expect(statSync(logPath(0)).size).toBe(0)
    expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(second.oid)
    fsck(dataDir)
  })

  it('leaves the ref alone when the log held none (objects only)', async () => {
    const store = await openStore()
    await store.write('blob', Buffer.from('only a blob\n'))
    await store.flush()
    const calls = recordCalls()
    await store.checkpoint()
    expect(calls).toContain(`emptied ${logPath(0)}`)
    expect(calls).not.toContain(mainFile())
    expect(calls).not.toContain(headsDir())
  })

  it('a ref renamed after a checkpoint began flushing it is flushed by its commit', async () => {
    const store = await openStore()
    const { ref, logged } = await commitLogged(store, null)
    // The checkpoint runs (and empties the file holding the record) before the rename.
    await store.checkpoint()
    expect(statSync(logPath(0)).size).toBe(0)
    ref.move()
    const calls = recordCalls()
    await logged.moved()
    expect(calls).toEqual(expect.arrayContaining([mainFile(), headsDir()]))
  })

  it("a ref renamed after a checkpoint sealed its file waits for the rename's folder flush it is given (alsoSync)", async () => {
    const store = await openStore()
    const { ref, logged } = await commitLogged(store, null)
    // The checkpoint seals the file holding the record (and may empty it) before the rename:
    // the folder flush the command would owe must be waited for (review21-round R1).
    await store.checkpoint()
    ref.move()
    // The folder's flush takes a while (released later); the result must come after it.
    let flushed = false
    let flushedAtReturn: boolean | null = null
    await logged
      .moved(async () => {
        await new Promise((resolve) => setTimeout(resolve, 500))
        flushed = true
      })
      .then(() => (flushedAtReturn = flushed))
    expect(flushedAtReturn).toBe(true)
  })

  it('a ref renamed with no checkpoint since its append waits for no folder flush', async () => {
    const store = await openStore()
    const { ref, logged } = await commitLogged(store, null)
    ref.move()
    let called = false
    await logged.moved(async () => {
      called = true
    })
    expect(called).toBe(false)
  })

  it('a ref renamed with no checkpoint since its append is not flushed', async () => {
    const store = await openStore()
    const { ref, logged } = await commitLogged(store, null)
    ref.move()
    const calls = recordCalls()
    await logged.moved()
    expect(calls).toEqual([])
  })

  it('a commit that fails after logging its value logs the value main keeps', async () => {
    const store = await openStore()
    const first = await commitLogged(store, null)
    first.ref.move()
    await first.logged.moved()
    const second = await commitLogged(store, first.oid)
    second.ref.abandon()
    await second.logged.abandoned(first.oid)
    const mains = LOG_FILES.flatMap((name) => decodeMains(readFileSync(path.join(gitdir, name))))
    const newest = mains.reduce((a, b) => (b.seq > a.seq ? b : a))
    expect(newest.oid).toBe(first.oid)
    // A replay now (a power cut that lost the ref file) keeps main at the first commit.
    store.close()
    opened.splice(opened.indexOf(store), 1)
    rmSync(mainFile())
    await openStore()
    expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(first.oid)
    fsck(dataDir)
  })
})

describe('a log file emptied by a checkpoint whose truncation a power cut undoes', () => {
  // Run 1 logs four values (two per file); its last checkpoint flushes the ref and empties
  // file 1 without fsyncing it, and the run is killed. Run 2 opens with both files empty (its
  // sequence numbers start at 0 again), is acknowledged for two commits, and is killed. A power
  // cut then undoes what was never fsynced: file 1's emptying, unless run 2's open made it
  // durable (its records, numbered above run 2's, come back), and run 2's ref renames.
  for (const ref of ['kept at the flushed value', 'left empty'] as const) {
    it(`leaves main at the last acknowledged value (the ref file ${ref})`, async () => {
      const run1 = await openStore()
      let parent: string | null = null
      const commitAndMove = async (store: ObjectStore) => {
        const { oid, ref, logged } = await commitLogged(store, parent)
        ref.move()
        await logged.moved()
        parent = oid
        return oid
      }
      await commitAndMove(run1)
      await commitAndMove(run1)
      await run1.checkpoint()
      await commitAndMove(run1)
      const flushed = await commitAndMove(run1)
      const onDisk = readFileSync(logPath(1))
      expect(decodeMains(onDisk).map(({ seq }) => seq)).toEqual([2, 3])
      await run1.checkpoint()
      expect(statSync(logPath(1)).size).toBe(0)
      run1.close()
      opened.splice(opened.indexOf(run1), 1)

      const calls = recordCalls()
      const run2 = await openStore()
      await commitAndMove(run2)
      const acknowledged = await commitAndMove(run2)
      run2.close()
      opened.splice(opened.indexOf(run2), 1)
      restoreDisk?.()
      restoreDisk = null

      // The power cut: file 1 as last fsynced, the ref file as run 1's checkpoint flushed it.
      if (!calls.includes(logPath(1))) writeFileSync(logPath(1), onDisk)
      writeFileSync(mainFile(), ref === 'left empty' ? '' : `${flushed}\n`)
      await openStore()
      expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(acknowledged)
      fsck(dataDir)
    })
  }
})

describe('a main that git packed', () => {
  it('is read from packed-refs when its own file is gone: open leaves git’s value', async () => {
    const store = await openStore()
    let parent: string | null = null
    for (let n = 0; n < 3; n++) {
      const { oid, ref, logged } = await commitLogged(store, parent)
      ref.move()
      await logged.moved()
      parent = oid
    }
    // Killed with the three values logged; a person then points main aside with git (at a
    // commit no logged one leads to: a loose file holding it is left alone) and packs refs.
    store.close()
    opened.splice(opened.indexOf(store), 1)
    const aside = gitCli(
      dataDir,
      '-c',
      'user.name=Person',
      '-c',
      'user.email=person@example.invalid',
      'commit-tree',
      '-m',
      'aside',
      T,
    ).trim()
    gitCli(dataDir, 'update-ref', 'refs/heads/main', aside)
    gitCli(dataDir, 'pack-refs', '--all')
    expect(() => statSync(mainFile())).toThrow()
    await openStore()
    expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(aside)
    fsck(dataDir)
  })

  it('still counts as lost when its own file is empty, whatever packed-refs holds', async () => {
    const store = await openStore()
    const first = await commitLogged(store, null)
    first.ref.move()
    await first.logged.moved()
    gitCli(dataDir, 'pack-refs', '--all')
    const second = await commitLogged(store, first.oid)
    second.ref.move()
    await second.logged.moved()
    store.close()
    opened.splice(opened.indexOf(store), 1)
    // A power cut left the new file empty beside the packed (older) value.
    writeFileSync(mainFile(), '')
    await openStore()
    expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(second.oid)
    fsck(dataDir)
  })
})

describe('rename records', () => {
  const rename = {
    commit: C,
    blob: B,
    previous: A,
    dir: 'notes/deep',
    temp: '.cairn-tmp-0a1b2c3d-0000-4000-8000-000000000000',
    name: 'é plan.md',
    seq: 3,
  }

  it('are read back after their ref record, and a torn or altered one ends the reading', () => {
    const bytes = Buffer.concat([encodeRefRecord(C, 3), encodeRenameRecord(rename)])
    expect(decodeLog(bytes).map((entry) => entry.kind)).toEqual(['main', 'rename'])
    expect(decodeRenames(bytes)).toEqual([rename])
    expect(decodeRenames(encodeRenameRecord({ ...rename, previous: null, dir: '' }))).toEqual([
      { ...rename, previous: null, dir: '' },
    ])
    // Objects and refs read as before.
    expect(decodeMains(bytes)).toEqual([{ oid: C, seq: 3 }])
    const record = encodeRenameRecord(rename)
    expect(decodeLog(record.subarray(0, record.length - 1))).toEqual([])
    const altered = Buffer.from(record)
    altered[altered.length - 2] ^= 1
    expect(decodeLog(Buffer.concat([altered, encodeRefRecord(D, 4)]))).toEqual([])
  })

  it('stop a reader that knows only object and ref records: its length reads as past any log', () => {
    const word = encodeRenameRecord(rename).readUInt32BE(0)
    expect(word & 0x8000_0000).toBe(0)
    expect(word).toBeGreaterThanOrEqual(0x4000_0000)
  })

  /** A folder for `append` to keep, with a counter of its opens. */
  function keptFolder(dir: string) {
    const kept = { opens: 0, key: `folder:${dir}` }
    return {
      kept,
      folder: {
        key: kept.key,
        open: () => {
          kept.opens++
          return nodeDisk.openSync(dir, 0)
        },
      },
    }
  }

  // Three records (the commit, the ref, the rename): 64 such commits stay under a checkpoint's
  // bound (whose checkpoint would start a new file).
  async function commitWithRename(store: ObjectStore, parent: string | null, dir: string) {
    const tree = T
    const body = serializeCommit({
      tree,
      parent,
      author: { name: 'Test', email: 'test@example.invalid' },
      timestamp: 1_700_000_000 + (parent ? 1 : 0),
      message: 'test\n',
    })
    const oid = await store.write('commit', body)
    const ref = prepareMainRef(gitdir, oid)
    const { kept, folder } = keptFolder(dir)
    const { commit: _c, seq: _s, ...record } = rename
    const logged = await store.flush(oid, { record, folder })
    return { oid, ref, logged: logged!, kept }
  }

  it("a checkpoint flushes a logged rename's folder before it empties the log, once per folder", async () => {
    const memoryDir = path.join(dataDir, 'memories')
    mkdirSync(memoryDir, { recursive: true })
    const store = await openStore()
    const first = await commitWithRename(store, null, memoryDir)
    expect(first.logged.renameLogged).toBe(true)
    first.ref.move()
    await first.logged.moved()
    const second = await commitWithRename(store, first.oid, memoryDir)
    second.ref.move()
    await second.logged.moved()
    // One descriptor for the two renames in the same folder.
    expect(first.kept.opens + second.kept.opens).toBe(1)
    expect(decodeRenames(readFileSync(logPath(0))).map(({ commit }) => commit)).toEqual([
      first.oid,
      second.oid,
    ])
    const calls = recordCalls()
    await store.checkpoint()
    const emptied = calls.indexOf(`emptied ${logPath(0)}`)
    expect(emptied).toBeGreaterThan(-1)
    expect(calls.filter((call) => call === memoryDir)).toHaveLength(1)
    expect(calls.indexOf(memoryDir)).toBeLessThan(emptied)
  })

  it('a rename after a checkpoint began flushing its file has its folder flushed by its commit', async () => {
    mkdirSync(path.join(dataDir, 'memories'), { recursive: true })
    const store = await openStore()
    const { ref, logged } = await commitWithRename(store, null, path.join(dataDir, 'memories'))
    await store.checkpoint()
    ref.move()
    let asked = 0
    await logged.moved(async () => void asked++)
    expect(asked).toBe(1)
    // With no checkpoint since its append, the commit flushes nothing.
    const next = await commitWithRename(store, null, path.join(dataDir, 'memories'))
    next.ref.move()
    await next.logged.moved(async () => void asked++)
    expect(asked).toBe(1)
  })

  it('is not logged past the cap of kept folders: the commit flushes its folder itself', async () => {
    const store = await openStore()
    let parent: string | null = null
    for (let i = 0; i <= MAX_KEPT_FOLDERS; i++) {
      const dir = path.join(dataDir, 'memories', `f${i}`)
      mkdirSync(dir, { recursive: true })
      const { oid, ref, logged } = await commitWithRename(store, parent, dir)
      expect(logged.renameLogged).toBe(i < MAX_KEPT_FOLDERS)
      ref.move()
      await logged.moved()
      parent = oid
    }
    expect(decodeRenames(readFileSync(logPath(0)))).toHaveLength(MAX_KEPT_FOLDERS)
  })
})
