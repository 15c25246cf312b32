import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CairnError } from '../lib/errors'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import {
  gitCli,
  headFiles,
  folderFiles,
  indexDirIn,
  leftoverTempFiles,
  treeHash,
  CLAUDE,
} from './test-helpers'

// An independent acceptance check of issue #9 ("nothing lost, nothing escapes"), for damage
// damage.test.ts does not make: bits flipped inside loose objects and packs, objects and the
// side index replaced by a folder or by a link pointing outside the data folder. After each,
// open: the memory folder byte-identical, nothing outside the data folder touched, HEAD's
// tree the folder, every file of HEAD readable through Cairn, the next command commits, and
// nothing that reaches a person or Claude names a host path.

let scratch: string
let outside: string
beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'probe32b-damage-'))
  outside = path.join(scratch, 'outside')
})
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true, maxRetries: 10 }))

interface Seeded {
  readonly dataDir: string
  readonly commits: ReadonlyArray<string>
}

let seeds = 0
async function seed(): Promise<Seeded> {
  const dataDir = path.join(scratch, `data-${++seeds}`)
  let time = 1_700_000_000_000
  const memory = await openVersionedMemory({
    dataDir,
    watch: false,
    now: () => (time += 1000),
    logger: createRecordingLogger(),
  })
  const run = async (input: Record<string, unknown>) => {
    const result = await memory.execute(input, CLAUDE)
    expect(result.isError, String(result.content)).toBe(false)
  }
  await run({
    command: 'create',
    path: '/memories/notes.md',
    file_text: 'first notes\n'.repeat(40),
  })
  await run({ command: 'create', path: '/memories/dir/a.md', file_text: 'a\n' })
  await run({ command: 'create', path: '/memories/old.md', file_text: 'only in the past\n' })
  await run({ command: 'str_replace', path: '/memories/old.md', old_str: 'past', new_str: 'now' })
  await run({ command: 'insert', path: '/memories/notes.md', insert_line: 1, insert_text: 'more' })
  await memory.close()
  return { dataDir, commits: gitCli(dataDir, 'rev-list', 'main').trim().split('\n') }
}

const gitdir = (s: Seeded) => path.join(s.dataDir, 'history.git')
const rev = (s: Seeded, spec: string) => gitCli(s.dataDir, 'rev-parse', spec).trim()
const objectFile = (s: Seeded, oid: string) =>
  path.join(gitdir(s), 'objects', oid.slice(0, 2), oid.slice(2))

/** Flips one bit in the middle of `file` (made writable first). */
function flipBit(file: string, at = 0.5): void {
  fs.chmodSync(file, 0o644)
  const bytes = fs.readFileSync(file)
  const i = Math.min(bytes.length - 1, Math.floor(bytes.length * at))
  bytes[i] = bytes[i]! ^ 0x10
  fs.writeFileSync(file, bytes)
}

/** A folder outside the data folder holding what a link may point at. */
function outsideFolder(name: string, files: Record<string, string | Buffer>): string {
  const dir = path.join(outside, `${seeds}-${name}`)
  fs.mkdirSync(dir, { recursive: true })
  for (const [file, bytes] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), bytes)
  return dir
}

/** Packs the history (`git gc`); returns the path of its pack's file ending in `ext`. */
function packed(s: Seeded, ext: '.idx' | '.pack'): string {
  gitCli(s.dataDir, 'gc', '--quiet', '--prune=now')
  const dir = path.join(gitdir(s), 'objects', 'pack')
  return path.join(
    dir,
    fs.readdirSync(dir).find((name) => name.endsWith(ext))!,
  )
}

/** Packs the history (`git gc`), then flips a bit in the middle of `oid`'s packed data. */
function flipInPack(s: Seeded, oid: string): void {
  const idx = packed(s, '.idx')
  // "<oid> <type> <size> <size in pack> <offset>" per object.
  const line = gitCli(s.dataDir, 'verify-pack', '-v', idx)
    .split('\n')
    .find((l) => l.startsWith(oid))!
  const [, , , inPack, offset] = line.split(/\s+/).map(Number)
  const pack = idx.replace(/\.idx$/, '.pack')
  fs.chmodSync(pack, 0o644)
  const bytes = fs.readFileSync(pack)
  const at = offset! + Math.floor(inPack! / 2)
  bytes[at] = bytes[at]! ^ 0x10
  fs.writeFileSync(pack, bytes)
}

interface Damage {
  readonly name: string
  /** The history cannot be read at all: set aside whole and started again from the files. */
  readonly setAside?: true
  /** A maintenance pass is refused (it would write and remove outside the data folder). */
  readonly passRefused?: true
  /** What open keeps in cairn-damaged/ (the start of its name there), never deleted. */
  readonly kept?: string
  /** Applies the damage; returns the id of an old object lost for good, if any. */
  apply(s: Seeded): string | void
}

const DAMAGES: ReadonlyArray<Damage> = [
  {
    name: "a bit flipped in HEAD's blob",
    apply: (s) => flipBit(objectFile(s, rev(s, 'main:notes.md'))),
  },
  {
    name: "a bit flipped in HEAD's tree",
    apply: (s) => flipBit(objectFile(s, rev(s, 'main^{tree}'))),
  },
  {
    name: 'a bit flipped in the HEAD commit',
    apply: (s) => flipBit(objectFile(s, rev(s, 'main'))),
  },
  {
    name: "HEAD's commit zeroed (its size kept)",
    apply: (s) => {
      const file = objectFile(s, rev(s, 'main'))
      fs.chmodSync(file, 0o644)
      fs.writeFileSync(file, Buffer.alloc(fs.statSync(file).size))
    },
  },
  {
    name: "HEAD's blob replaced by a folder",
    apply: (s) => {
      const file = objectFile(s, rev(s, 'main:old.md'))
      fs.rmSync(file)
      fs.mkdirSync(file)
      fs.writeFileSync(path.join(file, 'inside'), 'x')
    },
  },
  {
    name: "HEAD's blob a link to a file outside",
    apply: (s) => {
      const file = objectFile(s, rev(s, 'main:old.md'))
      const target = path.join(outsideFolder('blob', { other: 'not an object\n' }), 'other')
      fs.rmSync(file)
      fs.symlinkSync(target, file)
    },
  },
  {
    name: "HEAD's blob a dangling link to a path outside",
    apply: (s) => {
      const file = objectFile(s, rev(s, 'main:old.md'))
      fs.rmSync(file)
      fs.symlinkSync(path.join(outside, `${seeds}-nothing-here`, 'object'), file)
    },
  },
  {
    name: 'an object folder a link to a folder outside',
    apply: (s) => {
      const oid = rev(s, 'main:old.md')
      const folder = path.dirname(objectFile(s, oid))
      const target = outsideFolder('objects', { [oid.slice(2)]: 'garbage' })
      fs.rmSync(folder, { recursive: true })
      fs.symlinkSync(target, folder)
    },
  },
  {
    name: 'the side index a link to a folder outside',
    apply: (s) => {
      const index = indexDirIn(s.dataDir)
      const target = path.join(outside, `${seeds}-index`)
      fs.cpSync(index, target, { recursive: true })
      fs.rmSync(index, { recursive: true })
      fs.symlinkSync(target, index)
    },
  },
  {
    name: "the side index's commits file replaced by a folder",
    apply: (s) => {
      const file = path.join(indexDirIn(s.dataDir), 'commits')
      fs.rmSync(file)
      fs.mkdirSync(file)
    },
  },
  {
    name: "the side index's commits file a link to a file outside",
    apply: (s) => {
      const file = path.join(indexDirIn(s.dataDir), 'commits')
      const target = path.join(outsideFolder('commits', {}), 'commits')
      fs.copyFileSync(file, target)
      fs.rmSync(file)
      fs.symlinkSync(target, file)
    },
  },
  {
    name: "a bit flipped in a pack, inside HEAD's tree (git gc)",
    apply: (s) => flipInPack(s, rev(s, 'main^{tree}')),
  },
  {
    name: 'a bit flipped in a pack, inside the first commit (git gc)',
    apply: (s) => {
      const first = s.commits.at(-1)!
      flipInPack(s, first)
      return first
    },
  },
  {
    name: 'a pack index zeroed (git gc)',
    // Built again from its pack (hist33b): the history kept, the zeroed index kept aside.
    kept: 'pack-',
    apply: (s) => {
      const idx = packed(s, '.idx')
      fs.chmodSync(idx, 0o644)
      fs.writeFileSync(idx, Buffer.alloc(fs.statSync(idx).size))
    },
  },
  {
    name: 'the pack folder a link to a folder outside (git gc)',
    passRefused: true,
    apply: (s) => {
      const dir = path.dirname(packed(s, '.pack'))
      const target = path.join(outside, `${seeds}-pack`)
      fs.cpSync(dir, target, { recursive: true })
      fs.rmSync(dir, { recursive: true })
      fs.symlinkSync(target, dir)
    },
  },
  {
    // rhist33: open and each pass cleared pack leftovers through the link, deleting another
    // repository's temp pack and unindexed pack outside the data folder (its gc under way).
    name: "the pack folder a link to a folder outside where another git's gc is under way",
    passRefused: true,
    apply: (s) => {
      gitCli(s.dataDir, 'gc', '--quiet', '--prune=now')
      const dir = path.join(gitdir(s), 'objects', 'pack')
      const target = path.join(outside, `${seeds}-shared-pack`)
      fs.cpSync(dir, target, { recursive: true })
      fs.rmSync(dir, { recursive: true })
      fs.symlinkSync(target, dir)
      fs.writeFileSync(path.join(target, 'tmp_pack_Ab12Cd'), 'PACK being written by git')
      fs.writeFileSync(path.join(target, 'tmp_idx_Ab12Cd'), 'its index, being written')
      fs.writeFileSync(path.join(target, `pack-${'7'.repeat(40)}.pack`), 'PACK, index next')
      fs.writeFileSync(path.join(target, '.cairn-tmp-not-ours'), 'a file of its own')
    },
  },
  {
    name: 'the pack file replaced by a folder (git gc)',
    setAside: true,
    apply: (s) => {
      const pack = packed(s, '.pack')
      fs.rmSync(pack)
      fs.mkdirSync(pack)
    },
  },
  {
    name: 'the pack index a link to a copy outside (git gc)',
    apply: (s) => {
      const idx = packed(s, '.idx')
      const target = path.join(outsideFolder('idx', {}), path.basename(idx))
      fs.copyFileSync(idx, target)
      fs.rmSync(idx)
      fs.symlinkSync(target, idx)
    },
  },
  {
    name: 'a folder at cairn-index-base',
    apply: (s) => {
      fs.rmSync(path.join(gitdir(s), 'cairn-index-base'), { force: true })
      fs.mkdirSync(path.join(gitdir(s), 'cairn-index-base'))
    },
  },
  {
    name: 'a file where an object folder belongs',
    apply: (s) => {
      const folder = path.dirname(objectFile(s, rev(s, 'main:old.md')))
      fs.rmSync(folder, { recursive: true })
      fs.writeFileSync(folder, 'not a folder')
    },
  },
  {
    // git refused every command on the history ("packed-refs: Is a directory"), and so did
    // each maintenance pass: kept aside in cairn-damaged/ at open.
    name: 'a folder at packed-refs',
    kept: 'packed-refs-',
    apply: (s) => {
      fs.mkdirSync(path.join(gitdir(s), 'packed-refs'))
      fs.writeFileSync(path.join(gitdir(s), 'packed-refs', 'inside'), 'x')
    },
  },
  {
    name: 'a fifo at packed-refs',
    kept: 'packed-refs-',
    apply: (s) => {
      execFileSync('mkfifo', [path.join(gitdir(s), 'packed-refs')])
    },
  },
  {
    name: 'packed-refs a link to a file outside',
    kept: 'packed-refs-',
    apply: (s) => {
      const target = path.join(outsideFolder('packed', {}), 'packed-refs')
      fs.writeFileSync(
        target,
        `# pack-refs with: peeled fully-peeled sorted \n${rev(s, 'main')} refs/heads/other\n`,
      )
      fs.symlinkSync(target, path.join(gitdir(s), 'packed-refs'))
    },
  },
  {
    name: 'a file at objects/pack',
    kept: 'objects-pack-',
    apply: (s) => {
      const dir = path.join(gitdir(s), 'objects', 'pack')
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
      fs.writeFileSync(dir, 'not a folder')
    },
  },
  {
    // rhist33: open cleared temp files and old locks through the link before it kept the
    // link aside, deleting files of a folder outside the data folder.
    name: 'refs/heads a link to a folder outside holding old locks and temp files',
    kept: 'refs-heads-',
    apply: (s) => {
      const heads = path.join(gitdir(s), 'refs', 'heads')
      const target = outsideFolder('heads', {
        'main.lock': 'a lock of its own\n',
        'main.x.lock': 'Cairn names its ref temp files so\n',
        '.cairn-tmp-x': 'a file of its own\n',
      })
      const old = new Date(Date.now() - 3_600_000)
      fs.utimesSync(path.join(target, 'main.lock'), old, old)
      fs.copyFileSync(path.join(heads, 'main'), path.join(target, 'main'))
      fs.rmSync(heads, { recursive: true })
      fs.symlinkSync(target, heads)
    },
  },
  {
    name: 'refs/heads/main a link to a file outside',
    apply: (s) => {
      const ref = path.join(gitdir(s), 'refs', 'heads', 'main')
      const target = path.join(outsideFolder('ref', {}), 'main')
      fs.copyFileSync(ref, target)
      fs.rmSync(ref)
      fs.symlinkSync(target, ref)
    },
  },
]

function expectNoHostPath(text: string, s: Seeded): void {
  expect(text).not.toContain(s.dataDir)
  expect(text).not.toContain(scratch)
  expect(text).not.toMatch(/\n\s+at |\/tmp\//)
}

async function check(damage: Damage): Promise<void> {
  const s = await seed()
  const before = await folderFiles(s.dataDir)
  const lost = damage.apply(s)
  fs.mkdirSync(outside, { recursive: true })
  const outsideBefore = treeHash(outside)
  let memory: VersionedMemory | null = null
  try {
    memory = await openVersionedMemory({
      dataDir: s.dataDir,
      watch: false,
      logger: createRecordingLogger(),
    }).catch((error: unknown) => {
      expect(error, damage.name).toBeInstanceOf(CairnError)
      expectNoHostPath((error as Error).message, s)
      throw error
    })
    if (memory.recovery) expectNoHostPath(memory.recovery.message, s)
    const aside = fs.readdirSync(s.dataDir).filter((name) => name.startsWith('history.git.'))
    if (damage.setAside) {
      // Nothing left to find a commit in: set aside whole, never destroyed, and said so.
      expect(memory.recovery?.kind, damage.name).toBe('history-rebuilt')
      expect(aside, damage.name).toHaveLength(1)
      expect(fs.existsSync(path.join(s.dataDir, aside[0]!, 'objects', 'pack'))).toBe(true)
    } else {
      expect(aside, damage.name).toEqual([])
    }
    expect(await folderFiles(s.dataDir), damage.name).toEqual(before)
    expect(headFiles(s.dataDir), damage.name).toEqual(before)
    if (damage.kept) {
      const damaged = path.join(gitdir(s), 'cairn-damaged')
      expect(fs.readdirSync(damaged).filter((n) => n.startsWith(damage.kept!))).toHaveLength(1)
    }
    for (const [name, text] of before) {
      expect(await memory.readAt(`/memories/${name}`, rev(s, 'main')), damage.name).toBe(text)
    }
    const viewed = await memory.execute({ command: 'view', path: '/memories/old.md' }, CLAUDE)
    expect(viewed.isError, String(viewed.content)).toBe(false)
    const log = await memory.log({ offset: 0, limit: 100 })
    expect(log.total, damage.name).toBeGreaterThanOrEqual(1)
    // Every version shown reads, or says it is damaged: never an internal error or a path.
    for (const entry of log.entries) {
      for (const name of ['notes.md', 'old.md']) {
        await memory.readAt(`/memories/${name}`, entry.oid).catch((error: unknown) => {
          expect(error, `${damage.name}: ${name} at ${entry.oid}`).toBeInstanceOf(CairnError)
          expectNoHostPath((error as Error).message, s)
        })
      }
    }
    const next = await memory.execute(
      { command: 'create', path: '/memories/after.md', file_text: 'after\n' },
      CLAUDE,
    )
    expect(next.isError, String(next.content)).toBe(false)
    expect(next.commitPending ?? false, damage.name).toBe(false)
    // A pass packs the loose copies written in place of damaged packed ones, and drops the
    // damaged pack (what was sound in it is carried over).
    const pass = memory.maintain({ mergeAll: true })
    if (damage.passRefused) await expect(pass).rejects.toThrow(/not a folder/)
    else await pass
    await memory.close()
    memory = null
    expect(headFiles(s.dataDir), damage.name).toEqual(await folderFiles(s.dataDir))
    expect(leftoverTempFiles(s.dataDir), damage.name).toEqual([])
    expect(treeHash(outside), `${damage.name}: nothing outside touched`).toBe(outsideBefore)
    const fsck = spawnSync('git', ['--git-dir', gitdir(s), 'fsck', '--strict', '--no-dangling'], {
      encoding: 'utf8',
      env: { ...process.env, HOME: s.dataDir },
    })
    if (lost) {
      // An old object with no other copy: git names it, and only it; Cairn shows it as damaged.
      expect(fsck.status, damage.name).not.toBe(0)
      const named = new Set(
        [...fsck.stderr.matchAll(/(?:unpack|object|missing \w+) ([0-9a-f]{40})/g)].map((m) => m[1]),
      )
      expect([...named], damage.name).toEqual([lost])
      const read = await reopenedReadAt(s, lost)
      expect(read, damage.name).toMatchObject({ code: 'history-damaged' })
    } else {
      expect(fsck.stderr + fsck.stdout, damage.name).toBe('')
      expect(fsck.status, damage.name).toBe(0)
    }
  } finally {
    await memory?.close()
  }
}

/** What reading notes.md at `oid` gives in a fresh open (its error, when it fails). */
async function reopenedReadAt(s: Seeded, oid: string): Promise<unknown> {
  const memory = await openVersionedMemory({
    dataDir: s.dataDir,
    watch: false,
    logger: createRecordingLogger(),
  })
  try {
    return await memory.readAt('/memories/notes.md', oid).catch((error: unknown) => error)
  } finally {
    await memory.close()
  }
}

describe('damage beyond damage.test.ts, then open (issue #9)', () => {
  it.each(DAMAGES.map((d) => [d.name, d] as const))('%s', (_name, damage) => check(damage), 120_000)
})
