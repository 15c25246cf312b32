/**
 * Builds large history fixtures fast, for the history benchmark: objects go straight into the
 * repository as loose files (what Cairn leaves before maintenance), then — for `pack` storage —
 * into one pack by Cairn's own maintenance; the side index is written alongside, and the
 * memory folder holds HEAD's files, so opening it needs no recovery.
 *
 * A packed fixture's loose objects are written and packed in a scratch repository on a
 * memory-backed folder (/dev/shm where there is one), and only the pack is copied to the disk:
 * tens of thousands of loose files created and deleted on the disk just before its commands
 * are timed would slow those commands for minutes on a file system that holds off reusing
 * freed inodes (ext4 without a journal, as on the bench machine: docs/durability.md), which
 * is the fixture's making, not the history it stands for.
 *
 * Shapes: `nested-1024` (8 areas x 8 topics x 16 notes), `nested-10000` (10 x 10 x 100) and
 * `flat-1000` (1,000 notes in the root folder, whose tree is rewritten by every commit).
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { deflateSync } from 'node:zlib'
import {
  AUTHORS,
  formatCommitMessage,
  type CairnCommitMeta,
} from '../src/main/history/commit-message'
import { initRepository, serializeCommit, writeMainRef } from '../src/main/history/object-store'
import { hashObject, ObjectDatabase } from '../src/main/history/objects/object-database'
import type { ObjectKind } from '../src/main/history/objects/pack-file'
import { repack } from '../src/main/history/objects/repack'
import { indexDirOf, writeIndex, type IndexEntry } from '../src/main/history/side-index'

export type Shape = 'nested-1024' | 'nested-10000' | 'flat-1000'
export type Storage = 'loose' | 'pack'

export interface Fixture {
  readonly dataDir: string
  readonly files: number
  readonly commits: number
  readonly shape: Shape
  /** The file followed through a rename: its name now and before the rename. */
  readonly target: string
  readonly targetBefore: string
  /** Current `revision N` number of every file (relative path -> N). */
  readonly revisions: Map<string, number>
  /** Commits that changed the target, oldest first. */
  readonly targetCommits: ReadonlyArray<string>
  /** A file changed by only a few commits spread over the whole history (relative path). */
  readonly sparse: string | null
  /** The commits that changed `sparse`, oldest first (its creation included). */
  readonly sparseCommits: ReadonlyArray<string>
}

export interface FixtureOptions {
  readonly shape?: Shape
  readonly storage?: Storage
  /** How many commits change the sparse file, spread evenly (its creation counts). */
  readonly sparseTouches?: number
}

const SHAPES: Readonly<Record<Shape, ReadonlyArray<number>>> = {
  'nested-1024': [8, 8, 16],
  'nested-10000': [10, 10, 100],
  'flat-1000': [1000],
}

export function fileContent(relative: string, revision: number): Buffer {
  return Buffer.from(
    `# ${relative}\n\nThe user prefers short answers and metric units.\n` +
      `Project notes: keep the changelog tidy; release on Thursdays.\n\nrevision ${revision}\n`,
  )
}

interface Sink {
  add(kind: ObjectKind, content: Buffer, path: string): Promise<string>
}

function looseSink(gitdir: string): Sink {
  const made = new Set<string>()
  return {
    async add(kind, content) {
      const oid = hashObject(kind, content)
      const dir = path.join(gitdir, 'objects', oid.slice(0, 2))
      if (!made.has(dir)) {
        fs.mkdirSync(dir, { recursive: true })
        made.add(dir)
      }
      const file = path.join(dir, oid.slice(2))
      const data = deflateSync(
        Buffer.concat([Buffer.from(`${kind} ${content.length}\0`), content]),
        {
          level: 1,
        },
      )
      try {
        fs.writeFileSync(file, data, { flag: 'wx', mode: 0o444 })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
      return oid
    },
  }
}

/** A folder of the fixture: entries kept in git's order so a tree serializes without sorting. */
class Folder {
  private readonly keys: string[] = []
  readonly entries = new Map<string, { oid: string; tree: boolean; key: string }>()

  set(name: string, oid: string, tree: boolean): void {
    const known = this.entries.get(name)
    if (known) {
      known.oid = oid
      return
    }
    // Git orders by bytes, folders as if named `name/`; latin1 keeps one char per byte.
    const sortKey = Buffer.from(tree ? `${name}/` : name).toString('latin1')
    let low = 0
    let high = this.keys.length
    while (low < high) {
      const mid = (low + high) >>> 1
      if ((this.keys[mid] as string) < sortKey) low = mid + 1
      else high = mid
    }
    this.keys.splice(low, 0, sortKey)
    this.entries.set(name, { oid, tree, key: sortKey })
  }

  remove(name: string): void {
    const known = this.entries.get(name)
    if (!known) return
    this.entries.delete(name)
    this.keys.splice(this.keys.indexOf(known.key), 1)
  }

  serialize(): Buffer {
    const byKey = new Map([...this.entries].map(([name, entry]) => [entry.key, { name, ...entry }]))
    const parts: Buffer[] = []
    for (const sortKey of this.keys) {
      const entry = byKey.get(sortKey)!
      parts.push(
        Buffer.from(`${entry.tree ? '40000' : '100644'} ${entry.name}\0`),
        Buffer.from(entry.oid, 'hex'),
      )
    }
    return Buffer.concat(parts)
  }
}

/** Writes a repository with `commits` commits over the files of `shape` into `dataDir`. */
export async function buildFixture(
  dataDir: string,
  commits: number,
  options: FixtureOptions = {},
): Promise<Fixture> {
  const shape = options.shape ?? 'nested-1024'
  const gitdir = path.join(dataDir, 'history.git')
  await initRepository(gitdir)
  const staging = options.storage === 'pack' ? await stagingRepository() : gitdir
  const sink = looseSink(staging)

  const dims = SHAPES[shape]
  const folders = new Map<string, Folder>([['', new Folder()]])
  const revisions = new Map<string, number>()
  const files: string[] = []
  const walk = (prefix: string, level: number): void => {
    const count = dims[level] as number
    for (let i = 0; i < count; i++) {
      if (level === dims.length - 1) {
        const relative = `${prefix}note-${i}.md`
        revisions.set(relative, 0)
        files.push(relative)
      } else {
        const name = `${level === 0 ? 'area' : 'topic'}-${i}`
        folders.set(`${prefix}${name}`, new Folder())
        walk(`${prefix}${name}/`, level + 1)
      }
    }
  }
  walk('', 0)

  const dirOf = (relative: string) => path.posix.dirname(relative).replace(/^\.$/, '')
  // Rewrites the trees from `dir` up to the root; returns the root tree's id.
  const writeUp = async (dir: string): Promise<string> => {
    for (let current = dir; ; current = dirOf(current)) {
      const folder = folders.get(current)!
      const oid = await sink.add('tree', folder.serialize(), current)
      if (current === '') return oid
      folders.get(dirOf(current))!.set(path.posix.basename(current), oid, true)
    }
  }
  for (const relative of files) {
    const oid = await sink.add('blob', fileContent(relative, 0), relative)
    folders.get(dirOf(relative))!.set(path.posix.basename(relative), oid, false)
  }
  // A 20-line file beside the last note, changed at evenly spaced commits only (one line
  // each time), never among the files picked at random.
  const sparse = options.sparseTouches
    ? path.posix.join(dirOf(files[files.length - 1] as string), 'sparse.md')
    : null
  const sparseLines = Array.from({ length: 20 }, (_, i) => `sparse line ${i}: version 0`)
  const sparseContent = () => Buffer.from(`${sparseLines.join('\n')}\n`)
  const sparseAt = new Set<number>()
  const sparseCommits: string[] = []
  if (sparse && options.sparseTouches) {
    const oid = await sink.add('blob', sparseContent(), sparse)
    folders.get(dirOf(sparse))!.set(path.posix.basename(sparse), oid, false)
    for (let k = 1; k < options.sparseTouches; k++) {
      // Off by a few, so that no touch lands on the commit that renames the target.
      sparseAt.add(Math.floor((k * commits) / options.sparseTouches) + 3)
    }
  }
  // Folders deepest first, so every parent sees its children's ids.
  const byDepth = [...folders.keys()]
    .filter(Boolean)
    .sort((a, b) => b.split('/').length - a.split('/').length)
  for (const dir of byDepth) {
    const oid = await sink.add('tree', folders.get(dir)!.serialize(), dir)
    folders.get(dirOf(dir))!.set(path.posix.basename(dir), oid, true)
  }
  let rootTree = await sink.add('tree', folders.get('')!.serialize(), '')

  const target = shape === 'flat-1000' ? 'renamed-note.md' : 'area-0/topic-0/renamed-note.md'
  const targetBefore = shape === 'flat-1000' ? 'note-0.md' : 'area-0/topic-0/note-0.md'
  const entries: IndexEntry[] = []
  const targetCommits: string[] = []
  let parent: string | null = null
  let seed = 42
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
  const start = 1_700_000_000

  const commit = async (meta: CairnCommitMeta, changed: ReadonlyArray<string>, time: number) => {
    const body = serializeCommit({
      tree: rootTree,
      parent,
      author: AUTHORS[meta.actor],
      timestamp: time,
      message: formatCommitMessage(meta),
    })
    const oid = await sink.add('commit', body, '')
    entries.push({
      ...meta,
      oid,
      parent,
      time: time * 1000,
      files: changed.map((file) => `/memories/${file}`),
    })
    parent = oid
    return oid
  }
  const system = { conversationId: null, toolUseId: null, overwrite: false, restoredFrom: null }
  const initial = sparse ? [...files, sparse] : files
  const first = await commit(
    {
      ...system,
      actor: 'system',
      command: 'init',
      subject: 'Start the history',
      paths: initial.map((f) => `/memories/${f}`),
    },
    [...initial].sort(),
    start,
  )
  if (sparse) sparseCommits.push(first)

  const renameAt = Math.floor(commits / 2)
  for (let i = 1; i < commits; i++) {
    const time = start + i
    const conversation = {
      conversationId: `conv-${i % 997}`,
      toolUseId: `toolu_${i}`,
      overwrite: false,
      restoredFrom: null,
    }
    if (sparse && sparseAt.has(i)) {
      // One line of the sparse file changes; the rest keep their first commit.
      const line = (sparseCommits.length * 7) % sparseLines.length
      sparseLines[line] = `sparse line ${line}: changed at commit ${i}`
      const blob = await sink.add('blob', sparseContent(), sparse)
      folders.get(dirOf(sparse))!.set(path.posix.basename(sparse), blob, false)
      rootTree = await writeUp(dirOf(sparse))
      const virtual = `/memories/${sparse}`
      sparseCommits.push(
        await commit(
          {
            ...conversation,
            actor: 'claude',
            command: 'str_replace',
            subject: `str_replace ${virtual}`,
            paths: [virtual],
          },
          [sparse],
          time,
        ),
      )
      continue
    }
    if (i === renameAt) {
      const folder = folders.get(dirOf(targetBefore))!
      folder.set(
        path.posix.basename(target),
        folder.entries.get(path.posix.basename(targetBefore))!.oid,
        false,
      )
      folder.remove(path.posix.basename(targetBefore))
      revisions.set(target, revisions.get(targetBefore)!)
      revisions.delete(targetBefore)
      files[files.indexOf(targetBefore)] = target
      rootTree = await writeUp(dirOf(target))
      const paths = [`/memories/${targetBefore}`, `/memories/${target}`]
      targetCommits.push(
        await commit(
          {
            ...conversation,
            actor: 'claude',
            command: 'rename',
            subject: `rename ${paths[0]} -> ${paths[1]}`,
            paths,
          },
          [targetBefore, target].sort(),
          time,
        ),
      )
      continue
    }
    const current = i < renameAt ? targetBefore : target
    const relative =
      i % 97 === 0
        ? current
        : pickFile(files, random, current, i < renameAt ? target : targetBefore)
    const revision = revisions.get(relative)! + 1
    revisions.set(relative, revision)
    const blob = await sink.add('blob', fileContent(relative, revision), relative)
    folders.get(dirOf(relative))!.set(path.posix.basename(relative), blob, false)
    rootTree = await writeUp(dirOf(relative))
    const virtual = `/memories/${relative}`
    const oid = await commit(
      {
        ...conversation,
        actor: 'claude',
        command: 'str_replace',
        subject: `str_replace ${virtual}`,
        paths: [virtual],
      },
      [relative],
      time,
    )
    if (relative === current) targetCommits.push(oid)
  }

  await writeMainRef(gitdir, parent as unknown as string)
  // Packed the way Cairn's maintenance packs it (newest version of each path whole).
  if (options.storage === 'pack') await packInto(staging, gitdir, parent)
  writeIndex(indexDirOf(gitdir), entries)

  // HEAD's files, with times in the past so the first open trusts their stat after one hash.
  const workRoot = path.join(dataDir, 'memories')
  const past = new Date(Date.now() - 60_000)
  for (const [relative, revision] of revisions) {
    const file = path.join(workRoot, relative)
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
    await writeFile(file, fileContent(relative, revision), { mode: 0o600 })
    await utimes(file, past, past)
  }
  if (sparse) {
    const file = path.join(workRoot, sparse)
    await writeFile(file, sparseContent(), { mode: 0o600 })
    await utimes(file, past, past)
  }
  return {
    dataDir,
    files: revisions.size,
    commits,
    shape,
    target,
    targetBefore,
    revisions,
    targetCommits,
    sparse,
    sparseCommits,
  }
}

/** A history in which one long file is changed by every commit (for line provenance). */
export interface BlameFixture {
  readonly dataDir: string
  /** The file's relative path. */
  readonly file: string
  readonly lines: number
  readonly commits: number
  /** The file's lines now. */
  readonly content: ReadonlyArray<string>
}

/**
 * Writes a history in which a file of `lines` lines is created, then changed by each of
 * `commits` more commits, as Claude edits a growing memory file: most replace a line, some
 * insert one and some remove one (its length stays about the same). Every line is unique.
 * Its objects are packed, as maintenance leaves an older history.
 */
export async function buildBlameFixture(
  dataDir: string,
  options: { readonly lines: number; readonly commits: number },
): Promise<BlameFixture> {
  const gitdir = path.join(dataDir, 'history.git')
  await initRepository(gitdir)
  const staging = await stagingRepository()
  const sink = looseSink(staging)
  const file = 'notes/long.md'
  let seed = 7
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
  let fresh = 0
  const line = () =>
    `- Fact ${++fresh}: the user mentioned ${Math.floor(random() * 1e6)} in passing, worth keeping.`
  const content = Array.from({ length: options.lines }, line)
  const entries: IndexEntry[] = []
  let parent: string | null = null
  const start = 1_700_000_000
  const notes = new Folder()
  const root = new Folder()
  const commit = async (meta: CairnCommitMeta, time: number) => {
    notes.set(
      'long.md',
      await sink.add('blob', Buffer.from(`${content.join('\n')}\n`), file),
      false,
    )
    root.set('notes', await sink.add('tree', notes.serialize(), 'notes'), true)
    const body = serializeCommit({
      tree: await sink.add('tree', root.serialize(), ''),
      parent,
      author: AUTHORS[meta.actor],
      timestamp: time,
      message: formatCommitMessage(meta),
    })
    const oid = await sink.add('commit', body, '')
    entries.push({ ...meta, oid, parent, time: time * 1000, files: [`/memories/${file}`] })
    parent = oid
  }
  const virtual = `/memories/${file}`
  const claude = (i: number, command: 'create' | 'str_replace' | 'insert'): CairnCommitMeta => ({
    actor: 'claude',
    command,
    subject: `${command} ${virtual}`,
    paths: [virtual],
    conversationId: `conv-${i % 7}`,
    toolUseId: `toolu_${i}`,
    overwrite: false,
    restoredFrom: null,
  })
  await commit(claude(0, 'create'), start)
  for (let i = 1; i <= options.commits; i++) {
    const roll = random()
    const at = Math.floor(random() * content.length)
    if (roll < 0.15) content.splice(at, 0, line())
    else if (roll < 0.3 && content.length > 1) content.splice(at, 1)
    else content[at] = line()
    await commit(claude(i, roll < 0.15 ? 'insert' : 'str_replace'), start + i)
  }
  await writeMainRef(gitdir, parent as unknown as string)
  await packInto(staging, gitdir, parent)
  writeIndex(indexDirOf(gitdir), entries)
  const workRoot = path.join(dataDir, 'memories')
  await mkdir(path.join(workRoot, 'notes'), { recursive: true, mode: 0o700 })
  const past = new Date(Date.now() - 60_000)
  await writeFile(path.join(workRoot, file), `${content.join('\n')}\n`, { mode: 0o600 })
  await utimes(path.join(workRoot, file), past, past)
  return { dataDir, file, lines: content.length, commits: options.commits + 1, content }
}

/** A scratch repository for loose objects that are to be packed (see the top of the file). */
async function stagingRepository(): Promise<string> {
  const shm = '/dev/shm'
  const base = fs.existsSync(shm) ? shm : os.tmpdir()
  const dir = await mkdtemp(path.join(base, 'cairn-fixture-'))
  await initRepository(path.join(dir, 'history.git'))
  return path.join(dir, 'history.git')
}

/** Packs the staged loose objects reachable or not from `tip`, and copies the pack to `gitdir`. */
async function packInto(staging: string, gitdir: string, tip: string | null): Promise<void> {
  const db = new ObjectDatabase(staging)
  await repack(db, tip ? [tip] : [])
  db.close()
  for (const name of fs.readdirSync(db.packDir)) {
    fs.copyFileSync(path.join(db.packDir, name), path.join(gitdir, 'objects', 'pack', name))
  }
  await rm(path.dirname(staging), { recursive: true, force: true })
}

function pickFile(files: ReadonlyArray<string>, random: () => number, ...avoid: string[]): string {
  for (;;) {
    const file = files[Math.floor(random() * files.length)] as string
    if (!avoid.includes(file)) return file
  }
}

/** A unique scratch name (for copies of a fixture). */
export function scratchName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`
}
