/**
 * Builds large history fixtures fast, for the history benchmark: every object is written
 * straight into one packfile (with its .idx), the side index is written alongside, and the
 * memory folder holds HEAD's files — so opening it needs no recovery.
 */
import { createHash } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { crc32 } from 'node:zlib'
import { AUTHORS, formatCommitMessage, type CommitMeta } from '../src/main/history/commit-message'
import {
  initRepository,
  serializeCommit,
  serializeTree,
  writeMainRef,
  type RawTreeEntry,
} from '../src/main/history/object-store'
import { indexFileOf, writeIndexFile, type IndexEntry } from '../src/main/history/side-index'

export interface Fixture {
  readonly dataDir: string
  readonly files: number
  readonly commits: number
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
  /** How many commits change the sparse file, spread evenly (its creation counts). */
  readonly sparseTouches?: number
}

const SHAPE = [8, 8, 16] as const // 8 areas x 8 topics x 16 notes = 1,024 files
const TYPE_CODES = { commit: 1, tree: 2, blob: 3 } as const
type Kind = keyof typeof TYPE_CODES

function fileContent(relative: string, revision: number): Buffer {
  return Buffer.from(
    `# ${relative}\n\nThe user prefers short answers and metric units.\n` +
      `Project notes: keep the changelog tidy; release on Thursdays.\n\nrevision ${revision}\n`,
  )
}

/** Writes a repository with `commits` commits over 1,024 files into `dataDir`. */
export async function buildFixture(
  dataDir: string,
  commits: number,
  options: FixtureOptions = {},
): Promise<Fixture> {
  const gitdir = path.join(dataDir, 'history.git')
  await initRepository(gitdir)
  const pack = new PackWriter()

  // The tree, level by level: area -> topic -> note name -> blob id.
  const notes = new Map<string, Map<string, string>>() // "a/t" -> name -> blob
  const topicTrees = new Map<string, string>() // "a/t" -> tree id
  const areaTrees = new Map<string, string>() // "a" -> tree id
  const revisions = new Map<string, number>()
  const files: string[] = []
  for (let a = 0; a < SHAPE[0]; a++) {
    for (let t = 0; t < SHAPE[1]; t++) {
      const dir = `area-${a}/topic-${t}`
      const names = new Map<string, string>()
      for (let n = 0; n < SHAPE[2]; n++) {
        const relative = `${dir}/note-${n}.md`
        names.set(`note-${n}.md`, pack.add('blob', fileContent(relative, 0)))
        revisions.set(relative, 0)
        files.push(relative)
      }
      notes.set(dir, names)
    }
  }
  const target = 'area-0/topic-0/renamed-note.md'
  const targetBefore = 'area-0/topic-0/note-0.md'
  // A 20-line file in the last topic, changed at evenly spaced commits only.
  const sparse = options.sparseTouches ? 'area-7/topic-7/sparse.md' : null
  const sparseLines = Array.from({ length: 20 }, (_, i) => `sparse line ${i}: version 0`)
  const sparseContent = () => Buffer.from(`${sparseLines.join('\n')}\n`)
  const sparseAt = new Set<number>()
  if (sparse && options.sparseTouches) {
    notes.get('area-7/topic-7')?.set('sparse.md', pack.add('blob', sparseContent()))
    for (let k = 1; k < options.sparseTouches; k++) {
      // Off by a few, so that no touch lands on the commit that renames the target.
      sparseAt.add(Math.floor((k * commits) / options.sparseTouches) + 3)
    }
  }
  const sparseCommits: string[] = []

  const writeTopic = (dir: string) => {
    const entries: RawTreeEntry[] = []
    for (const [name, oid] of notes.get(dir) ?? [])
      entries.push({ name, kind: 'blob', oid, mode: '100644' })
    topicTrees.set(dir, pack.add('tree', serializeTree(entries)))
  }
  const writeArea = (area: string) => {
    const entries: RawTreeEntry[] = []
    for (let t = 0; t < SHAPE[1]; t++) {
      const oid = topicTrees.get(`${area}/topic-${t}`) as string
      entries.push({ name: `topic-${t}`, kind: 'tree', oid, mode: '40000' })
    }
    areaTrees.set(area, pack.add('tree', serializeTree(entries)))
  }
  const writeRoot = () => {
    const entries: RawTreeEntry[] = []
    for (let a = 0; a < SHAPE[0]; a++) {
      entries.push({
        name: `area-${a}`,
        kind: 'tree',
        oid: areaTrees.get(`area-${a}`) as string,
        mode: '40000',
      })
    }
    return pack.add('tree', serializeTree(entries))
  }
  for (const dir of notes.keys()) writeTopic(dir)
  for (let a = 0; a < SHAPE[0]; a++) writeArea(`area-${a}`)

  const entries: IndexEntry[] = []
  const targetCommits: string[] = []
  let parent: string | null = null
  let seed = 42
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648
  const start = 1_700_000_000

  const commit = (meta: CommitMeta, changed: ReadonlyArray<string>, time: number) => {
    const tree = writeRoot()
    const body = serializeCommit({
      tree,
      parent,
      author: AUTHORS[meta.actor],
      timestamp: time,
      message: formatCommitMessage(meta),
    })
    const oid = pack.add('commit', body)
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
  // The sparse file is in the first commit but never among the files picked at random.
  const initial = sparse ? [...files, sparse] : files
  const first = commit(
    {
      ...system,
      actor: 'system',
      command: 'init',
      subject: 'Start the history',
      paths: initial.map((f) => `/memories/${f}`),
    },
    initial,
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
      notes.get('area-7/topic-7')?.set('sparse.md', pack.add('blob', sparseContent()))
      writeTopic('area-7/topic-7')
      writeArea('area-7')
      const virtual = `/memories/${sparse}`
      sparseCommits.push(
        commit(
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
      const names = notes.get('area-0/topic-0') as Map<string, string>
      names.set('renamed-note.md', names.get('note-0.md') as string)
      names.delete('note-0.md')
      revisions.set(target, revisions.get(targetBefore) as number)
      revisions.delete(targetBefore)
      writeTopic('area-0/topic-0')
      writeArea('area-0')
      const paths = [`/memories/${targetBefore}`, `/memories/${target}`]
      targetCommits.push(
        commit(
          {
            ...conversation,
            actor: 'claude',
            command: 'rename',
            subject: `rename ${paths[0]} -> ${paths[1]}`,
            paths,
          },
          [targetBefore, target],
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
    const revision = (revisions.get(relative) as number) + 1
    revisions.set(relative, revision)
    const dir = path.posix.dirname(relative)
    ;(notes.get(dir) as Map<string, string>).set(
      path.posix.basename(relative),
      pack.add('blob', fileContent(relative, revision)),
    )
    writeTopic(dir)
    writeArea(dir.split('/')[0] as string)
    const virtual = `/memories/${relative}`
    const oid = commit(
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

  await pack.writeTo(path.join(gitdir, 'objects', 'pack'))
  await writeMainRef(gitdir, parent as unknown as string)
  await writeIndexFile(indexFileOf(gitdir), entries)

  const workRoot = path.join(dataDir, 'memories')
  for (const [relative, revision] of revisions) {
    const file = path.join(workRoot, relative)
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
    await writeFile(file, fileContent(relative, revision), { mode: 0o600 })
  }
  if (sparse) await writeFile(path.join(workRoot, sparse), sparseContent(), { mode: 0o600 })
  return {
    dataDir,
    files: revisions.size,
    commits,
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
 */
export async function buildBlameFixture(
  dataDir: string,
  options: { readonly lines: number; readonly commits: number },
): Promise<BlameFixture> {
  const gitdir = path.join(dataDir, 'history.git')
  await initRepository(gitdir)
  const pack = new PackWriter()
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
  const commit = (meta: CommitMeta, time: number) => {
    const blob = pack.add('blob', Buffer.from(`${content.join('\n')}\n`))
    const notesTree = pack.add(
      'tree',
      serializeTree([{ name: 'long.md', kind: 'blob', oid: blob, mode: '100644' }]),
    )
    const root = pack.add(
      'tree',
      serializeTree([{ name: 'notes', kind: 'tree', oid: notesTree, mode: '40000' }]),
    )
    const body = serializeCommit({
      tree: root,
      parent,
      author: AUTHORS[meta.actor],
      timestamp: time,
      message: formatCommitMessage(meta),
    })
    const oid = pack.add('commit', body)
    entries.push({ ...meta, oid, parent, time: time * 1000, files: [`/memories/${file}`] })
    parent = oid
  }
  const virtual = `/memories/${file}`
  const claude = (i: number, command: 'create' | 'str_replace' | 'insert'): CommitMeta => ({
    actor: 'claude',
    command,
    subject: `${command} ${virtual}`,
    paths: [virtual],
    conversationId: `conv-${i % 7}`,
    toolUseId: `toolu_${i}`,
    overwrite: false,
    restoredFrom: null,
  })
  commit(claude(0, 'create'), start)
  for (let i = 1; i <= options.commits; i++) {
    const roll = random()
    const at = Math.floor(random() * content.length)
    if (roll < 0.15) content.splice(at, 0, line())
    else if (roll < 0.3 && content.length > 1) content.splice(at, 1)
    else content[at] = line()
    commit(claude(i, roll < 0.15 ? 'insert' : 'str_replace'), start + i)
  }
  await pack.writeTo(path.join(gitdir, 'objects', 'pack'))
  await writeMainRef(gitdir, parent as unknown as string)
  await writeIndexFile(indexFileOf(gitdir), entries)
  const workRoot = path.join(dataDir, 'memories')
  await mkdir(path.join(workRoot, 'notes'), { recursive: true, mode: 0o700 })
  await writeFile(path.join(workRoot, file), `${content.join('\n')}\n`, { mode: 0o600 })
  return { dataDir, file, lines: content.length, commits: options.commits + 1, content }
}

function pickFile(files: ReadonlyArray<string>, random: () => number, ...avoid: string[]): string {
  for (;;) {
    const file = files[Math.floor(random() * files.length)] as string
    if (!avoid.includes(file)) return file
  }
}

/** Collects objects into one version-2 packfile plus its version-2 index. */
class PackWriter {
  private readonly chunks: Buffer[] = []
  private readonly objects: Array<{ oid: Buffer; offset: number; crc: number }> = []
  private readonly seen = new Set<string>()
  private offset = 12

  add(kind: Kind, content: Buffer): string {
    const hash = createHash('sha1')
      .update(`${kind} ${content.byteLength}\0`)
      .update(content)
      .digest()
    const oid = hash.toString('hex')
    if (this.seen.has(oid)) return oid
    this.seen.add(oid)
    const header = packHeader(TYPE_CODES[kind], content.byteLength)
    const data = storedZlib(content)
    const crc = crc32(data, crc32(header))
    this.objects.push({ oid: hash, offset: this.offset, crc })
    this.chunks.push(header, data)
    this.offset += header.byteLength + data.byteLength
    return oid
  }

  async writeTo(dir: string): Promise<void> {
    const head = Buffer.alloc(12)
    head.write('PACK', 0)
    head.writeUInt32BE(2, 4)
    head.writeUInt32BE(this.objects.length, 8)
    const packHash = createHash('sha1').update(head)
    for (const chunk of this.chunks) packHash.update(chunk)
    const packSum = packHash.digest()

    const sorted = [...this.objects].sort((a, b) => Buffer.compare(a.oid, b.oid))
    const counts = new Array<number>(256).fill(0)
    for (const object of sorted) counts[object.oid[0] as number]++
    const fanout = Buffer.alloc(256 * 4)
    let running = 0
    for (let i = 0; i < 256; i++) {
      running += counts[i] as number
      fanout.writeUInt32BE(running, i * 4)
    }
    const crcs = Buffer.alloc(sorted.length * 4)
    const offsets = Buffer.alloc(sorted.length * 4)
    sorted.forEach((object, i) => {
      crcs.writeUInt32BE(object.crc >>> 0, i * 4)
      offsets.writeUInt32BE(object.offset, i * 4)
    })
    const idxBody = Buffer.concat([
      Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2]),
      fanout,
      ...sorted.map((object) => object.oid),
      crcs,
      offsets,
      packSum,
    ])
    const idx = Buffer.concat([idxBody, createHash('sha1').update(idxBody).digest()])
    const name = `pack-${packSum.toString('hex')}`
    await mkdir(dir, { recursive: true })
    await writeFile(path.join(dir, `${name}.pack`), Buffer.concat([head, ...this.chunks, packSum]))
    await writeFile(path.join(dir, `${name}.idx`), idx)
  }
}

function packHeader(type: number, size: number): Buffer {
  const bytes: number[] = []
  let byte = (type << 4) | (size & 0x0f)
  size >>>= 4
  while (size > 0) {
    bytes.push(byte | 0x80)
    byte = size & 0x7f
    size >>>= 7
  }
  bytes.push(byte)
  return Buffer.from(bytes)
}

/**
 * Wraps `content` in a zlib stream of stored (uncompressed) blocks: valid for every inflater,
 * and far cheaper to produce by the hundred thousand than calling zlib each time.
 */
function storedZlib(content: Buffer): Buffer {
  const blocks = Math.max(1, Math.ceil(content.byteLength / 65_535))
  const out = Buffer.alloc(2 + content.byteLength + blocks * 5 + 4)
  out[0] = 0x78
  out[1] = 0x01
  let at = 2
  for (let i = 0; i < blocks; i++) {
    const chunk = content.subarray(i * 65_535, (i + 1) * 65_535)
    out[at] = i === blocks - 1 ? 1 : 0
    out.writeUInt16LE(chunk.byteLength, at + 1)
    out.writeUInt16LE(~chunk.byteLength & 0xffff, at + 3)
    chunk.copy(out, at + 5)
    at += 5 + chunk.byteLength
  }
  let a = 1
  let b = 0
  // Adler-32, reducing modulo only every 5,552 bytes (the most that cannot overflow).
  for (let start = 0; start < content.byteLength; start += 5_552) {
    const end = Math.min(start + 5_552, content.byteLength)
    for (let i = start; i < end; i++) {
      a += content[i] as number
      b += a
    }
    a %= 65_521
    b %= 65_521
  }
  out.writeUInt32BE(((b << 16) | a) >>> 0, at)
  return out
}
