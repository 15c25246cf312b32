import fsSync from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { hookDisk, type DiskCall } from '../lib/disk-hooks'
import { createMemoryTool } from './memory-tool'
import { makeSandbox, text, type Sandbox } from './test-support'
import type { MemoryLimits } from './types'
import { measure, STALE_AFTER_MS, UsageCache } from './usage'

// perf14-usage: review13-tool R2's fix made a growing write whose total was older than 2 s
// walk the whole folder (140 ms at 10,000 files, on nearly every create in real use). The
// check now looks at the folders (one lstat each) and reads again only those that changed.

let box: Sandbox | undefined
let restoreDisk: (() => void) | null = null
afterEach(async () => {
  restoreDisk?.()
  restoreDisk = null
  await box?.cleanup()
  box = undefined
})

const NOTE = 'a note\n'

/** `files` files of NOTE in folders of 50 (`topic-000/note-00.md` …), or flat when `flat`. */
async function populate(root: string, files: number, flat = false): Promise<void> {
  for (let start = 0; start < files; start += 50) {
    const dir = flat ? root : path.join(root, `topic-${String(start / 50).padStart(3, '0')}`)
    await fs.mkdir(dir, { recursive: true })
    const writes: Promise<void>[] = []
    for (let i = start; i < Math.min(files, start + 50); i++) {
      writes.push(fs.writeFile(path.join(dir, `note-${String(i).padStart(5, '0')}.md`), NOTE))
    }
    await Promise.all(writes)
  }
}

/** Counts, from now on, the folders read (`readdir`) and the files looked at one by one. */
function countReads(): { readonly folders: string[]; fileStats: () => number } {
  const folders: string[] = []
  let fileStats = 0
  const hooked = hookDisk(nodeDisk, (call: DiskCall) => {
    if (call.name === 'promises.readdir' || call.name === 'readdirSync') {
      // A folder open by handle is listed through /proc/self/fd (the case-twin check lists
      // the folder a create writes to that way): counted as the folder it is.
      const at = String(call.args[0])
      folders.push(at.startsWith('/proc/self/fd/') ? fsSync.readlinkSync(at) : at)
    }
    if (call.name === 'promises.lstat' && String(call.args[0]).endsWith('.md')) fileStats++
  })
  restoreDisk = setDisk(hooked.disk)
  return { folders, fileStats: () => fileStats }
}

describe('the usage check of a growing write past the short age', () => {
  it('reads no folder but the one it wrote to at 10,000 nested files when nothing changed outside', async () => {
    let clock = 0
    box = await makeSandbox({ now: () => clock })
    await populate(box.root, 10_000)
    // Well after every mtime: no folder is racy when counted.
    clock = Date.now() + 60_000
    // The first write counts the folder.
    const first = await box.run({
      command: 'create',
      path: '/memories/topic-007/new-1.md',
      file_text: 'one\n',
    })
    expect(first.isError, text(first)).toBe(false)
    clock += STALE_AFTER_MS + 1000
    const reads = countReads()
    const second = await box.run({
      command: 'create',
      path: '/memories/topic-123/new-2.md',
      file_text: 'two\n',
    })
    expect(second.isError, text(second)).toBe(false)
    // At most the folder the first write changed is listed (when its mtime was racy when
    // recorded); no file is looked at one by one (main walked 201 folders and 10,001 files).
    // The folders written to (each create lists its own for a case twin) and nothing else.
    const written = ['topic-007', 'topic-123'].map((dir) => path.join(box!.root, dir))
    expect(reads.folders.filter((dir) => !written.includes(dir))).toEqual([])
    expect(reads.fileStats()).toBe(0)
  }, 300_000)

  it('reads no file one by one in a flat folder of 10,000 files when nothing changed outside', async () => {
    let clock = 0
    box = await makeSandbox({ now: () => clock })
    await populate(box.root, 10_000, true)
    clock = Date.now() + 60_000
    const first = await box.run({ command: 'create', path: '/memories/a.md', file_text: 'a\n' })
    expect(first.isError, text(first)).toBe(false)
    clock += STALE_AFTER_MS + 1000
    const reads = countReads()
    const second = await box.run({ command: 'create', path: '/memories/b.md', file_text: 'b\n' })
    expect(second.isError, text(second)).toBe(false)
    // At most one listing of its names (racy after the first write), no stat of its files.
    expect(reads.folders.filter((dir) => dir !== box!.root)).toEqual([])
    expect(reads.fileStats()).toBe(0)
  }, 300_000)

  it('still sees outside changes larger than the margin, far from the limit', async () => {
    let clock = Date.now()
    box = await makeSandbox({ limits: { maxFiles: 1000 }, now: () => clock })
    const sandbox = box
    const create = (file: string) =>
      sandbox.run({ command: 'create', path: `/memories/${file}`, file_text: 'x\n' })
    for (let i = 0; i < 5; i++) expect((await create(`d/own-${i}.md`)).isError).toBe(false)
    const expectRefusedAfter = async (change: () => Promise<void>, holds: number) => {
      await change()
      clock += STALE_AFTER_MS + 1000
      const result = await create('d/one-more.md')
      expect(result.isError, text(result)).toBe(true)
      expect(text(result)).toContain(`memory already holds ${holds.toLocaleString('en-US')} files`)
    }
    // 995 files dropped into a folder the tool wrote to.
    await expectRefusedAfter(() => populateIn(sandbox.root, 'd', 995), 1000)
    // Room made outside (the folder removed) is seen too.
    await fs.rm(path.join(sandbox.root, 'd'), { recursive: true })
    clock += STALE_AFTER_MS + 1000
    expect((await create('e/own.md')).isError).toBe(false)
    // A new sub-folder full of files.
    await expectRefusedAfter(() => populateIn(sandbox.root, 'e/sub/deeper', 999), 1000)
    await fs.rm(path.join(sandbox.root, 'e/sub'), { recursive: true })
    // Files renamed in from a hidden folder (which does not count).
    await populateIn(sandbox.root, '.staging', 999)
    clock += STALE_AFTER_MS + 1000
    expect((await create('e/own-2.md')).isError).toBe(false)
    await expectRefusedAfter(
      () => fs.rename(path.join(sandbox.root, '.staging'), path.join(sandbox.root, 'e/in')),
      1001,
    )
    // A folder swapped for another of the same name (a new identity, its parent unchanged).
    await fs.rename(path.join(sandbox.root, 'e/in'), path.join(sandbox.root, '.away'))
    clock += STALE_AFTER_MS + 1000
    expect((await create('f/own.md')).isError).toBe(false)
    await expectRefusedAfter(async () => {
      await fs.rename(path.join(sandbox.root, 'f'), path.join(sandbox.root, '.old-f'))
      await fs.rename(path.join(sandbox.root, '.away'), path.join(sandbox.root, 'f'))
    }, 1001)
  }, 300_000)

  it('still sees 20 files of 1 MB dropped in under a 20 MiB limit', async () => {
    let clock = Date.now()
    box = await makeSandbox({ limits: { maxTotalBytes: 20 * 1024 * 1024 }, now: () => clock })
    expect(
      (await box.run({ command: 'create', path: '/memories/d/a.md', file_text: 'a' })).isError,
    ).toBe(false)
    for (let i = 0; i < 20; i++) await box.write(`d/big-${i}.md`, 'b'.repeat(1_040_000))
    clock += STALE_AFTER_MS + 1000
    const result = await box.run({
      command: 'create',
      path: '/memories/d/more.md',
      file_text: 'm'.repeat(500_000),
    })
    expect(result.isError, text(result)).toBe(true)
    expect(text(result)).toContain('over the limit of 20,971,520 bytes')
  }, 300_000)

  it('lists a folder again whose mtime was racy when recorded, though it has not changed', async () => {
    // A write outside in the same clock tick as the tool's own re-stat of the folder leaves
    // its mtime as recorded. Simulated exactly: the folder's mtime is set to a whole second
    // `stamp` before each disk call after the tool's rename, and again after the drop.
    const stamp = Math.floor(Date.now() / 1000) - 1
    let clock = stamp * 1000
    box = await makeSandbox({ limits: { maxFiles: 1000 }, now: () => clock })
    const root = box.root
    await populateIn(root, 'notes', 3)
    let renamed = false
    restoreDisk = setDisk(
      hookDisk(nodeDisk, (call) => {
        if (call.name === 'renameSync') renamed = true
        else if (renamed) fsSync.utimesSync(root, stamp, stamp)
      }).disk,
    )
    expect(
      (await box.run({ command: 'create', path: '/memories/own.md', file_text: 'x' })).isError,
    ).toBe(false)
    restoreDisk()
    restoreDisk = null
    expect(fsSync.lstatSync(root).mtimeMs).toBe(stamp * 1000)
    // 996 files in a new folder, the root's mtime left as the tool recorded it.
    await populateIn(root, 'dropped', 996)
    fsSync.utimesSync(root, stamp, stamp)
    clock += STALE_AFTER_MS + 1000
    const result = await box.run({
      command: 'create',
      path: '/memories/notes/one-more.md',
      file_text: 'y',
    })
    expect(result.isError, text(result)).toBe(true)
    expect(text(result)).toContain('memory already holds 1,000 files, the limit is 1,000')
  })
})

describe("the tool's own changes", () => {
  it('keep the record equal to a whole walk, with no folder read again', async () => {
    // Well after every mtime: nothing is racy, so a wrong record is not read again.
    const clock = { now: Date.now() + 600_000 }
    let cache!: UsageCache
    box = await makeSandbox({
      usageFor: (root) => (cache = new UsageCache(root, 60_000, () => clock.now)),
    })
    await populate(box.root, 120)
    const commands: Array<Record<string, unknown>> = [
      { command: 'create', path: '/memories/topic-000/a.md', file_text: 'a\n' },
      { command: 'create', path: '/memories/new/deep/b.md', file_text: 'bb\n' },
      { command: 'create', path: '/memories/topic-001/note-00050.md', file_text: 'longer\n' },
      {
        command: 'str_replace',
        path: '/memories/topic-000/a.md',
        old_str: 'a',
        new_str: 'a much longer line',
      },
      { command: 'insert', path: '/memories/new/deep/b.md', insert_line: 0, insert_text: 'x' },
      { command: 'rename', old_path: '/memories/topic-002', new_path: '/memories/new/moved' },
      { command: 'rename', old_path: '/memories/topic-000/a.md', new_path: '/memories/top.md' },
      { command: 'delete', path: '/memories/topic-001/note-00051.md' },
      { command: 'delete', path: '/memories/new/deep' },
    ]
    for (const input of commands) {
      const result = await box.run(input)
      expect(result.isError, text(result)).toBe(false)
      clock.now += STALE_AFTER_MS + 1000
      const reads = countReads()
      const checked = await cache.recheck()
      restoreDisk!()
      restoreDisk = null
      expect({ input, read: reads.folders }).toEqual({ input, read: [] })
      expect(checked).toEqual(await measure(box.root))
    }
  })
})

describe('UsageCache.recheck', () => {
  it('equals a whole walk after outside creates, removals, renames and replaced folders', async () => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-usage-'))
    try {
      // Well after every mtime: changes are found by mtime and identity, not as racy.
      let clock = Date.now() + 600_000
      const cache = new UsageCache(base, 60_000, () => clock)
      await populate(base, 500)
      expect(await cache.get()).toEqual(await measure(base))
      const steps: Array<() => Promise<unknown>> = [
        () => fs.writeFile(path.join(base, 'topic-001/new.md'), 'new file\n'),
        () => fs.rm(path.join(base, 'topic-002'), { recursive: true }),
        () => fs.rename(path.join(base, 'topic-003'), path.join(base, 'moved')),
        () => fs.rename(path.join(base, 'topic-004/note-00200.md'), path.join(base, 'x.md')),
        () => populateIn(base, 'fresh/a/b', 30),
        () => fs.rm(path.join(base, 'topic-005/note-00250.md')),
        async () => {
          await fs.rename(path.join(base, 'topic-006'), path.join(base, '.hidden'))
          await fs.rename(path.join(base, 'topic-007'), path.join(base, 'topic-006'))
        },
        () => fs.rename(path.join(base, 'fresh/a'), path.join(base, 'topic-008/a')),
        () => fs.writeFile(path.join(base, 'topic-009/.hidden.md'), 'not counted\n'),
      ]
      for (const step of steps) {
        await step()
        clock += STALE_AFTER_MS + 1000
        expect(await cache.recheck()).toEqual(await measure(base))
      }
      // The memory folder gone: nothing counted; back, it is walked again.
      await fs.rm(base, { recursive: true })
      clock += STALE_AFTER_MS + 1000
      expect(await cache.recheck()).toEqual({ files: 0, bytes: 0 })
      await populate(base, 60)
      expect(await cache.get()).toEqual(await measure(base))
    } finally {
      await fs.rm(base, { recursive: true, force: true, maxRetries: 10 })
    }
  }, 120_000)
})

/** `count` small files in `relative` under `root`, made from outside the tool. */
async function populateIn(root: string, relative: string, count: number): Promise<void> {
  const dir = path.join(root, relative)
  await fs.mkdir(dir, { recursive: true })
  await Promise.all(
    Array.from({ length: count }, (_, i) => fs.writeFile(path.join(dir, `f-${i}.md`), 'f\n')),
  )
}

// The walk between commands once the total is past half its age held every command that came
// meanwhile (140 ms at 10,000 files; issue #15's periodic stall). It runs aside now: a command
// goes on with the cached total, and the walk's count is taken between commands.
describe('the walk between commands', () => {
  /** A `UsageCache` that tells when a walk aside began and when its count was taken. */
  class Watched extends UsageCache {
    readonly events: string[] = []
    private told: (() => void) | null = null
    readonly taken = new Promise<void>((resolve) => (this.told = resolve))
    override walkAside(): Promise<() => Promise<void>> | null {
      const walking = super.walkAside()
      if (!walking) return null
      this.events.push('walk')
      return walking.then((take) => async () => {
        await take()
        this.events.push('taken')
        this.told?.()
      })
    }
  }

  /** From `arm()` on, the next file `lstat` waits until `release()`; every `lstat` is told. */
  function holdOneLstat(events: string[]) {
    let armed = false
    let held = false
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let reached!: (target: string) => void
    const hit = new Promise<string>((resolve) => (reached = resolve))
    restoreDisk = setDisk({
      ...nodeDisk,
      promises: {
        ...nodeDisk.promises,
        lstat: async (target) => {
          if (armed && !held) {
            held = true
            reached(target)
            await released
          }
          const stats = await nodeDisk.promises.lstat(target)
          events.push('lstat')
          return stats
        },
      },
    })
    // Should a command wait for the walk after all (the code before), the walk goes on
    // after a while so that the test fails on the order below instead of hanging.
    const fallback = setTimeout(() => release(), 60_000)
    fallback.unref()
    return {
      arm: () => (armed = true),
      hit,
      release: () => {
        clearTimeout(fallback)
        release()
      },
    }
  }

  /**
   * A memory folder of `files` files (see `populate`) whose total is counted by a `Watched`
   * cache, and its tool (with `limits`), after one `create` of `first`. `holdWalk` starts the
   * walk between commands (the total past half its age, then a `view` of `first`) and holds it
   * at its next file `lstat`, whose path it returns.
   */
  async function walkingTool(files: number, first: string, limits?: Partial<MemoryLimits>) {
    let clock = Date.now() + 60_000
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-walk-aside-'))
    box = {
      cleanup: () => fs.rm(base, { recursive: true, force: true, maxRetries: 10 }),
    } as Sandbox
    const root = path.join(base, 'memories')
    await populate(root, files)
    const cache = new Watched(root, 60_000, () => clock)
    const tool = createMemoryTool({ root, usage: cache, ...(limits ? { limits } : {}) })
    const created = await tool.execute({ command: 'create', path: first, file_text: 'one\n' })
    expect(created.isError, text(created)).toBe(false)
    const holdWalk = async () => {
      const gate = holdOneLstat(cache.events)
      clock += 31_000
      await tool.execute({ command: 'view', path: first })
      gate.arm()
      return { at: await gate.hit, release: gate.release }
    }
    return { root, cache, tool, holdWalk }
  }

  it('lets a command that does not grow the total answer during the walk, then takes its count', async () => {
    const { root, cache, tool, holdWalk } = await walkingTool(400, '/memories/topic-000/first.md')
    // A file grown in place outside: its folder does not change, so only a walk sees it.
    await fs.truncate(path.join(root, 'topic-003', 'note-00150.md'), 5000)
    expect((await cache.recheck()).bytes).toBeLessThan((await measure(root)).bytes)
    const gate = await holdWalk()
    // In the folder the walk has listed already (its record must be read again), an edit that
    // shrinks a file (a growing write waits for the walk's count: the next test).
    const hit = gate.at
    const listed = path.basename(path.dirname(hit))
    const second = await tool.execute({
      command: 'str_replace',
      path: `/memories/${listed}/${path.basename(hit)}`,
      old_str: fsSync.readFileSync(hit, 'utf8').split('\n')[0],
      new_str: 'a',
    })
    const lstats = () => cache.events.filter((event) => event === 'lstat').length
    const seenWhenAnswered = lstats()
    gate.release()
    expect(second.isError, text(second)).toBe(false)
    // The command answered while the walk was held at one `lstat`, most of the 401 files not
    // looked at yet (the code before answered once the walk had looked at them all).
    expect(seenWhenAnswered).toBeLessThan(401)
    await cache.taken
    expect(lstats()).toBeGreaterThanOrEqual(401)
    expect(cache.events.filter((event) => event === 'walk' || event === 'taken')).toEqual([
      'walk',
      'taken',
    ])
    // The count taken holds the file grown outside and the command's own change.
    expect(await cache.get()).toEqual(await measure(root))
  }, 300_000)

  it('has a growing write during the walk wait for its count: a file grown outside is seen', async () => {
    // review15-misc R2: the write went on with the older total while the walk ran aside, and
    // passed a limit the walk between commands had made it keep.
    const MiB = 1024 * 1024
    const { root, cache, tool, holdWalk } = await walkingTool(50, '/memories/first.md', {
      maxTotalBytes: 20 * MiB,
    })
    // Outside, a file grows in place (its folder does not change) to just under the limit.
    await fs.truncate(path.join(root, 'topic-000', 'note-00007.md'), 20 * MiB - 60_000)
    const gate = await holdWalk()
    // Far from the limit by the older total: only the walk's count shows it would break it.
    const writing = tool.execute({
      command: 'create',
      path: '/memories/second.md',
      file_text: 'x'.repeat(100_000),
    })
    gate.release()
    const refused = await writing
    expect(refused.isError).toBe(true)
    expect(text(refused)).toContain('over the limit of 20,971,520 bytes')
    expect(fsSync.existsSync(path.join(root, 'second.md'))).toBe(false)
    await cache.taken
    expect(await cache.get()).toEqual(await measure(root))
  }, 120_000)

  it('keeps the count a command took meanwhile near a limit, not the older walk', async () => {
    const { root, cache, tool, holdWalk } = await walkingTool(400, '/memories/a.md', {
      maxFiles: 450,
    })
    const gate = await holdWalk()
    // While the walk is held, 49 files are dropped in outside: 450 in all.
    await populate(path.join(root, 'dropped'), 49, true)
    // Near the limit, the write is checked against a fresh count, walk or no walk (it waits
    // for the walk first: it adds a file).
    const refusing = tool.execute({
      command: 'create',
      path: '/memories/b.md',
      file_text: 'b\n',
    })
    gate.release()
    expect(text(await refusing)).toContain('memory already holds 450 files, the limit is 450')
    await cache.taken
    expect(await cache.get()).toEqual({ files: 450, bytes: (await measure(root)).bytes })
    const freed = await tool.execute({ command: 'delete', path: '/memories/a.md' })
    expect(freed.isError, text(freed)).toBe(false)
    const allowed = await tool.execute({
      command: 'create',
      path: '/memories/b.md',
      file_text: 'b\n',
    })
    expect(allowed.isError, text(allowed)).toBe(false)
    expect(await cache.get()).toEqual(await measure(root))
  }, 120_000)
})
