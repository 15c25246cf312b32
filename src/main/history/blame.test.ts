import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { CommitSummary } from '../../shared/types'
import type { Origin } from './index'
import { BLAME_MAX_BYTES, BLAME_MAX_LINES } from './blame'
import { gitCli, memoryTestBed, userWrite } from './test-helpers'

let clock = 1_700_000_000_000
const bed = memoryTestBed({ memory: { now: () => (clock += 1000) } })

let toolUse = 0
const claude = (): Origin => ({
  actor: 'claude',
  conversationId: 'conv-blame',
  toolUseId: `toolu_${++toolUse}`,
})

async function run(input: Record<string, unknown>): Promise<CommitSummary> {
  const outcome = await bed.memory.execute(input, claude())
  if (outcome.isError || !outcome.commit) {
    throw new Error(`${JSON.stringify(input)} failed: ${String(outcome.content)}`)
  }
  return outcome.commit
}

interface GitLine {
  readonly sha: string
  /** 1-based line number in the blamed commit's version. */
  readonly origLine: number
  /** Path in the blamed commit. */
  readonly file: string
  readonly text: string
}

/** `git blame --porcelain` of `file` (relative) at `rev`, line by line. */
function gitBlame(rev: string, file: string, extra: ReadonlyArray<string> = []): GitLine[] {
  const out = gitCli(bed.dataDir, ...extra, 'blame', '--porcelain', rev, '--', file)
  const lines: GitLine[] = []
  const files = new Map<string, string>()
  let sha = ''
  let orig = 0
  for (const line of out.split('\n')) {
    const header = /^([0-9a-f]{40}) (\d+) (\d+)/.exec(line)
    if (header) {
      sha = header[1] as string
      orig = Number(header[2])
    } else if (line.startsWith('filename ')) {
      files.set(sha, line.slice('filename '.length))
    } else if (line.startsWith('\t')) {
      lines.push({ sha, origLine: orig, file: files.get(sha) ?? file, text: line.slice(1) })
    }
  }
  return lines
}

const byOid = new Map<string, CommitSummary>()
async function summaries(): Promise<Map<string, CommitSummary>> {
  const page = await bed.memory.log({ offset: 0, limit: 500 })
  for (const entry of page.entries) byOid.set(entry.oid, entry)
  return byOid
}

/** The commit a plain-copy restore took the file's content from (git's view aside). */
function restoreSource(commit: CommitSummary, known: Map<string, CommitSummary>): string | null {
  if (!commit.restoredFrom) return null
  if (commit.command === 'revert') return known.get(commit.restoredFrom)?.parent ?? null
  return ['restore-file', 'restore-deleted', 'restore-all'].includes(commit.command)
    ? commit.restoredFrom
    : null
}

function blobOf(rev: string, file: string): string | null {
  try {
    return gitCli(bed.dataDir, 'rev-parse', `${rev}:${file}`).trim()
  } catch {
    return null
  }
}

/**
 * What Cairn must answer for a line git attributes to `line.sha`: git's answer, except that a
 * line git gives to a restore that copied an earlier version as it was goes on to whoever
 * wrote it in that version (found with git blame there, recursively).
 */
function expected(line: GitLine, known: Map<string, CommitSummary>): string {
  const commit = known.get(line.sha)
  const source = commit ? restoreSource(commit, known) : null
  if (!commit || !source || blobOf(line.sha, line.file) !== blobOf(source, line.file)) {
    return line.sha
  }
  const there = gitBlame(source, line.file)[line.origLine - 1]
  if (!there || there.text !== line.text) throw new Error('restore is not a plain copy')
  return expected(there, known)
}

function seeded(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
    return state / 2_147_483_648
  }
}

/** Files in HEAD's tree per git, relative. */
function filesAt(rev: string): string[] {
  return gitCli(bed.dataDir, 'ls-tree', '-r', '--name-only', rev).split('\n').filter(Boolean)
}

/**
 * A random history of Claude's and the person's changes where no line is ever written twice
 * (except by a restore): creates, edits, inserts, removed lines, overwrites, renames of files
 * and folders, deletions, and all four kinds of restore.
 */
async function randomHistory(seed: number, steps: number): Promise<string[]> {
  const random = seeded(seed)
  let fresh = 0
  const line = () => `line-${String(++fresh).padStart(6, '0')} ${random().toString(36).slice(2, 7)}`
  const pick = <T>(items: ReadonlyArray<T>): T => items[Math.floor(random() * items.length)] as T
  const commits: string[] = []
  const deleted: string[] = []
  let folder = 0
  const read = (file: string) => gitCli(bed.dataDir, 'show', `main:${file}`)

  for (let step = 0; step < steps; step++) {
    const files = commits.length > 0 ? filesAt('main') : []
    const roll = random()
    try {
      let commit: CommitSummary | null = null
      if (files.length === 0 || roll < 0.12) {
        const dir = random() < 0.4 ? `topic-${folder++ % 3}/` : ''
        const text = Array.from({ length: 1 + Math.floor(random() * 8) }, line).join('\n') + '\n'
        commit = await run({
          command: 'create',
          path: `/memories/${dir}f${step}.md`,
          file_text: text,
        })
      } else {
        const file = pick(files)
        const lines = read(file).split('\n').slice(0, -1)
        if (roll < 0.35 && lines.length > 0) {
          const old = pick(lines)
          const replacement = Array.from({ length: Math.floor(random() * 3) }, line)
          commit = await run({
            command: 'str_replace',
            path: `/memories/${file}`,
            old_str: `${old}\n`,
            new_str: replacement.map((text) => `${text}\n`).join(''),
          })
        } else if (roll < 0.5) {
          commit = await run({
            command: 'insert',
            path: `/memories/${file}`,
            insert_line: Math.floor(random() * (lines.length + 1)),
            insert_text: line(),
          })
        } else if (roll < 0.57) {
          // Claude rewrites the file: some old lines kept in order, new ones between.
          const kept = lines.filter(() => random() < 0.6)
          const text = kept.flatMap((old) => (random() < 0.4 ? [line(), old] : [old]))
          commit = await run({
            command: 'create',
            path: `/memories/${file}`,
            file_text: `${[...text, line()].join('\n')}\n`,
          })
        } else if (roll < 0.63) {
          const edited = lines.map((old) => (random() < 0.3 ? line() : old))
          commit = (await userWrite(bed.memory, `/memories/${file}`, `${edited.join('\n')}\n`))
            .commit
        } else if (roll < 0.7) {
          const dir = file.includes('/') ? file.slice(0, file.indexOf('/')) : null
          const from = dir && random() < 0.5 ? dir : file
          const to = from === dir ? `${dir}-moved-${step}` : `renamed-${step}.md`
          commit = await run({
            command: 'rename',
            old_path: `/memories/${from}`,
            new_path: `/memories/${to}`,
          })
        } else if (roll < 0.76 && files.length > 2) {
          commit = await run({ command: 'delete', path: `/memories/${file}` })
          deleted.push(file)
        } else if (roll < 0.84 && commits.length > 2) {
          const older = pick(commits.slice(0, -1))
          const target = filesAt(older).includes(file) ? file : null
          if (target) commit = (await bed.memory.restoreFile(`/memories/${target}`, older)).commit
        } else if (roll < 0.88 && deleted.length > 0) {
          const gone = deleted.splice(Math.floor(random() * deleted.length), 1)[0] as string
          if (!files.includes(gone)) {
            commit = (await bed.memory.restoreDeleted(`/memories/${gone}`)).commit
          }
        } else if (roll < 0.94 && commits.length > 1) {
          commit = (await bed.memory.revert(commits.at(-1 - Math.floor(random() * 3)) ?? '')).commit
        } else if (commits.length > 3) {
          commit = (await bed.memory.restoreAll(pick(commits.slice(1, -1)))).commit
        }
        if (commit) commits.push(commit.oid)
        continue
      }
      if (commit) commits.push(commit.oid)
    } catch {
      // A refused change (a revert whose files changed since, a name in use) is no step.
    }
  }
  return commits
}

async function expectSameAsGit(rev: string, file: string): Promise<void> {
  const known = await summaries()
  const ours = await bed.memory.blame(`/memories/${file}`, rev === 'main' ? undefined : rev)
  const git = gitBlame(rev, file)
  expect(ours.map((l) => l.text)).toEqual(git.map((l) => l.text))
  expect(
    ours.map((l) => `${l.line} ${l.commit.oid}`),
    `${file} at ${rev.slice(0, 7)}`,
  ).toEqual(git.map((l, i) => `${i + 1} ${expected(l, known)}`))
}

describe('blame', () => {
  it('gives each line the commit that last changed it, with its summary', async () => {
    const first = await run({ command: 'create', path: '/memories/a.md', file_text: 'one\ntwo\n' })
    const second = await run({
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'two',
      new_str: 'TWO',
    })
    const lines = await bed.memory.blame('/memories/a.md')
    expect(lines.map((l) => [l.line, l.text, l.commit.oid])).toEqual([
      [1, 'one', first.oid],
      [2, 'TWO', second.oid],
    ])
    expect(lines[1]?.commit).toEqual(second)
    expect((await bed.memory.blame('/memories/a.md', first.oid)).map((l) => l.text)).toEqual([
      'one',
      'two',
    ])
  })

  it('agrees with git blame on random histories whose lines are unique', async () => {
    for (const seed of [1, 2, 3]) {
      const commits = await randomHistory(seed * 7919, 70)
      for (const file of filesAt('main')) await expectSameAsGit('main', file)
      const random = seeded(seed)
      for (let k = 0; k < 6; k++) {
        const rev = commits[Math.floor(random() * commits.length)] as string
        for (const file of filesAt(rev)) await expectSameAsGit(rev, file)
      }
      // The next history starts from a clean folder.
      await bed.startOver()
      byOid.clear()
    }
    // Three histories of 70 commits, each file blamed at seven revisions by Cairn and the git
    // CLI: under 17 s on a quiet machine, past the default 30 s on a loaded one.
  }, 180_000)

  it('agrees with git blame where lines repeat, as git diffs without its indent heuristic', async () => {
    const random = seeded(5)
    const common = ['', '- item', '}', '## Notes', '']
    const line = () =>
      random() < 0.5 ? (common[Math.floor(random() * common.length)] as string) : `x${random()}`
    await run({ command: 'create', path: '/memories/r.md', file_text: 'start\n' })
    for (let step = 0; step < 60; step++) {
      const lines = gitCli(bed.dataDir, 'show', 'main:r.md').split('\n').slice(0, -1)
      const edited = [...lines]
      for (let k = 0; k < 3; k++) {
        const at = Math.floor(random() * (edited.length + 1))
        if (random() < 0.6) edited.splice(at, 0, line())
        else edited.splice(at, 1)
      }
      if (edited.join('\n') === lines.join('\n')) edited.push(line())
      await userWrite(bed.memory, '/memories/r.md', `${edited.join('\n')}\n`)
    }
    const ours = await bed.memory.blame('/memories/r.md')
    const git = gitBlame('main', 'r.md', ['-c', 'diff.indentHeuristic=false'])
    expect(ours.map((l) => `${l.commit.oid} ${l.text}`)).toEqual(
      git.map((l) => `${l.sha} ${l.text}`),
    )
  })

  it('keeps tracing through a version saved in Latin-1, as git blame does', async () => {
    const facts = Array.from({ length: 6 }, (_, i) => `fact ${i}\n`).join('')
    await run({ command: 'create', path: '/memories/n.md', file_text: facts })
    // An editor saves the file in Latin-1 ("café" with a lone 0xE9 byte), then in UTF-8.
    const file = path.join(bed.dataDir, 'memories', 'n.md')
    await writeFile(file, Buffer.concat([Buffer.from(`${facts}caf`), Buffer.from([0xe9, 0x0a])]))
    await bed.reopen()
    await bed.close()
    await writeFile(file, `${facts}café\n`)
    await bed.reopen()
    const ours = await bed.memory.blame('/memories/n.md')
    const git = gitBlame('main', 'n.md')
    expect(ours.map((l) => `${l.commit.oid} ${l.text}`)).toEqual(
      git.map((l) => `${l.sha} ${l.text}`),
    )
    // The six facts keep the commit that wrote them; only the fixed line is the last one's.
    expect(new Set(ours.slice(0, 6).map((l) => l.commit.command))).toEqual(new Set(['create']))
  })

  it('refuses what has no lines to trace: a binary file, a folder, a missing file', async () => {
    await writeFile(path.join(bed.dataDir, 'memories', 'pic.bin'), Buffer.from([0, 1, 2, 0]))
    await run({ command: 'create', path: '/memories/d/a.md', file_text: 'a\n' })
    await bed.reopen()
    await expect(bed.memory.blame('/memories/pic.bin')).rejects.toMatchObject({ code: 'not-text' })
    await expect(bed.memory.blame('/memories/d')).rejects.toMatchObject({ code: 'not-found' })
    await expect(bed.memory.blame('/memories/')).rejects.toMatchObject({ code: 'not-a-file' })
    await expect(bed.memory.blame('/memories/none.md')).rejects.toMatchObject({ code: 'not-found' })
    await expect(bed.memory.blame('/elsewhere/a.md')).rejects.toMatchObject({
      code: 'invalid-path',
    })
  })

  it('refuses a file too large to trace, in plain words, and traces one at the limit', async () => {
    const numbered = (count: number) =>
      Array.from({ length: count }, (_, i) => `line ${i}\n`).join('')
    await writeFile(path.join(bed.dataDir, 'memories', 'long.md'), numbered(BLAME_MAX_LINES + 1))
    await writeFile(path.join(bed.dataDir, 'memories', 'limit.md'), numbered(BLAME_MAX_LINES))
    await writeFile(
      path.join(bed.dataDir, 'memories', 'wide.md'),
      `${'x'.repeat(BLAME_MAX_BYTES)}\n`,
    )
    await bed.reopen()
    // All three are versioned files git can blame; Cairn refuses the two over its bounds.
    expect(gitCli(bed.dataDir, 'ls-tree', '--name-only', 'main').split('\n')).toEqual(
      expect.arrayContaining(['long.md', 'limit.md', 'wide.md']),
    )
    for (const name of ['long.md', 'wide.md']) {
      const refused = bed.memory.blame(`/memories/${name}`)
      await expect(refused).rejects.toMatchObject({ code: 'too-large' })
      await expect(refused).rejects.toThrow(`/memories/${name} is too large to trace line by line`)
    }
    expect(await bed.memory.blame('/memories/limit.md')).toHaveLength(BLAME_MAX_LINES)
  })

  it('keeps provenance for the next session, and never trusts a damaged copy', async () => {
    const first = await run({ command: 'create', path: '/memories/a.md', file_text: 'one\ntwo\n' })
    const second = await run({
      command: 'insert',
      path: '/memories/a.md',
      insert_line: 1,
      insert_text: 'middle',
    })
    const expected = (await bed.memory.blame('/memories/a.md')).map((l) => l.commit.oid)
    expect(expected).toEqual([first.oid, second.oid, first.oid])
    const dir = path.join(bed.dataDir, 'history.git', 'cairn-blame')
    const [saved] = await readdir(dir)
    const file = path.join(dir, saved as string)
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({
      path: '/memories/a.md',
      commit: second.oid,
    })

    // A later session answers from the saved copy, and alike.
    await bed.reopen()
    expect((await bed.memory.blame('/memories/a.md')).map((l) => l.commit.oid)).toEqual(expected)

    // A copy that claims other commits for the lines, or is not JSON, is not used.
    for (const damage of [
      (text: string) => text.replaceAll(first.oid, 'f'.repeat(40)),
      (text: string) => text.replace(/"runs":\[[^\]]*\]/, '"runs":[0,1]'),
      (text: string) => text.slice(0, 20),
    ]) {
      const body = await readFile(file, 'utf8')
      await writeFile(file, damage(body))
      await bed.close()
      await bed.reopen()
      expect((await bed.memory.blame('/memories/a.md')).map((l) => l.commit.oid)).toEqual(expected)
    }
  })
})
