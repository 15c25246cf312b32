import { execFileSync } from 'node:child_process'
import { copyFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { HistorySearchHit } from '../../shared/types'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk } from '../lib/disk-hooks'
import { IndexFile, writeIndex, type IndexEntry } from './index-file'
import { claudeCommands, gitCli, indexDirIn, leaveStaleLock, memoryTestBed } from './test-helpers'

// Issue #12's acceptance probe: a commit made with git in Cairn's repository (another author,
// no Cairn trailers) read as Cairn's own start-up recovery ("Cairn saved g.md, found changed
// when it started"), and blame said Cairn wrote its lines. It reads as made outside Cairn, by
// its author, wherever a commit is read; an index built before says so too once opened.

let clock = 1_700_000_000_000
const bed = memoryTestBed({ memory: { now: () => (clock += 1000), watch: false } })

const run = claudeCommands(bed, 'conv-outside')

const work = () => path.join(bed.dataDir, 'memories')

/** Commits `files` (written into the memory folder) with the git CLI as `name`; its id. */
async function commitWithGit(
  files: Record<string, string | Buffer>,
  message: string,
  name = 'Ann Smith',
  email = 'ann@example.com',
): Promise<string> {
  for (const [file, content] of Object.entries(files)) {
    await writeFile(path.join(work(), file), content)
    gitCli(bed.dataDir, '--work-tree', work(), 'add', file)
  }
  const who = ['-c', `user.name=${name}`, '-c', `user.email=${email}`]
  const gitdir = path.join(bed.dataDir, 'history.git')
  execFileSync(
    'git',
    ['--git-dir', gitdir, ...who, '--work-tree', work(), 'commit', '-q', '-F', '-'],
    {
      input: message,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: bed.dataDir },
    },
  )
  return gitCli(bed.dataDir, 'rev-parse', 'main').trim()
}

async function searchAll(text: string): Promise<HistorySearchHit[]> {
  const hits: HistorySearchHit[] = []
  let before: string | undefined
  for (;;) {
    const page = await bed.memory.searchHistory({ text, matchCase: true, before, budgetMs: 0 })
    hits.push(...page.hits)
    if (!page.next) return hits
    before = page.next
  }
}

const byAnn = {
  actor: 'outside',
  author: 'Ann Smith',
  command: 'outside',
  conversationId: null,
  toolUseId: null,
  restoredFrom: null,
} as const

describe('a commit made with git in Cairn’s repository', () => {
  it('reads as made outside Cairn, by its author, in the log, file history, blame and search', async () => {
    const first = await run({ command: 'create', path: '/memories/g.md', file_text: 'a\nb\nc\n' })
    await bed.close()
    const foreign = await commitWithGit({ 'g.md': 'a\nB from Ann\nc\n' }, 'Fix the second line\n')
    await bed.reopen()
    // Cairn made no commit of its own at open: the folder is what the commit holds.
    expect(gitCli(bed.dataDir, 'rev-parse', 'main').trim()).toBe(foreign)
    expect(bed.memory.recovery).toBeNull()

    const expected = { oid: foreign, ...byAnn, paths: ['/memories/g.md'] }
    const log = await bed.memory.log({ offset: 0, limit: 10 })
    expect(log.entries[0]).toMatchObject({ ...expected, subject: 'Fix the second line' })
    expect((await bed.memory.fileHistory('/memories/g.md'))[0]).toMatchObject(expected)
    expect((await bed.memory.show(foreign)).commit).toMatchObject(expected)
    const lines = await bed.memory.blame('/memories/g.md')
    expect(lines.map((line) => [line.commit.oid, line.commit.actor])).toEqual([
      [first.oid, 'claude'],
      [foreign, 'outside'],
      [first.oid, 'claude'],
    ])
    expect(lines[1]?.commit).toMatchObject(expected)
    const hits = await searchAll('B from Ann')
    expect(hits).toHaveLength(1)
    expect(hits[0]?.commit).toMatchObject(expected)
    // The author filter finds it alone.
    const others = await bed.memory.log({ offset: 0, limit: 10, actor: 'outside' })
    expect(others.entries.map((entry) => entry.oid)).toEqual([foreign])
  })

  it('is searched by its bytes, as git log -S does, when a file it wrote is not UTF-8', async () => {
    await run({ command: 'create', path: '/memories/l.md', file_text: 'caf\u00e9 au lait\n' })
    await bed.close()
    // The same word in Latin-1: a byte that UTF-8 has no character for (no NUL: still text).
    const latin = await commitWithGit(
      { 'l.md': Buffer.from('caf\xe9 au lait\n', 'latin1') },
      'Save in Latin-1\n',
    )
    await bed.reopen()
    const pickaxe = (text: string) =>
      gitCli(bed.dataDir, 'log', `-S${text}`, '--format=%H', 'main').split('\n').filter(Boolean)
    // Decoded, the lone byte read as U+FFFD and the search found a text git never saw.
    for (const text of ['\ufffd', 'caf\ufffd', 'caf\u00e9']) {
      const found = (await searchAll(text)).map((hit) => hit.commit.oid)
      expect(found, text).toEqual(pickaxe(text))
    }
    expect(pickaxe('caf\u00e9')).toContain(latin)
  })

  it('cannot pass as Claude by its name, nor claim a restore by a forged trailer', async () => {
    const first = await run({ command: 'create', path: '/memories/r.md', file_text: 'old\n' })
    await run({ command: 'str_replace', path: '/memories/r.md', old_str: 'old', new_str: 'new' })
    await bed.close()
    // Back to the first version, in a message that claims to be Claude's restore of it.
    const forged = [
      'restore-file /memories/r.md',
      '',
      'Command: restore-file',
      'Path: /memories/r.md',
      'Conversation-Id: conv-outside',
      'Tool-Use-Id: toolu_1',
      `Restored-From: ${first.oid}`,
      'Reviewed-by: You',
      '',
    ].join('\n')
    const foreign = await commitWithGit({ 'r.md': 'old\n' }, forged, 'Claude', 'claude@example.com')
    await bed.reopen()
    const newest = (await bed.memory.log({ offset: 0, limit: 1 })).entries[0]
    expect(newest).toMatchObject({ oid: foreign, ...byAnn, author: 'Claude' })
    expect(newest).not.toHaveProperty('review')
    // Blame gives the line to the commit that wrote it, as `git blame` does: not handed back
    // to the version a trailer nobody vouches for names.
    const lines = await bed.memory.blame('/memories/r.md')
    expect(lines.map((line) => line.commit.oid)).toEqual([foreign])
    expect(gitCli(bed.dataDir, 'blame', '--porcelain', 'main', '--', 'r.md')).toMatch(
      new RegExp(`^${foreign} `),
    )
  })

  it('reads a merge made with git, and the commits it joined, as made outside Cairn', async () => {
    await run({ command: 'create', path: '/memories/a.md', file_text: 'a\n' })
    await run({ command: 'create', path: '/memories/b.md', file_text: 'b\n' })
    await bed.close()
    const clone = await mkdtemp(path.join(os.tmpdir(), 'cairn-outside-clone-'))
    try {
      const git = (name: string, ...args: string[]) =>
        execFileSync('git', ['-C', clone, ...args], {
          encoding: 'utf8',
          env: {
            ...process.env,
            GIT_CONFIG_NOSYSTEM: '1',
            HOME: clone,
            GIT_AUTHOR_NAME: name,
            GIT_AUTHOR_EMAIL: `${name.toLowerCase()}@example.com`,
            GIT_COMMITTER_NAME: name,
            GIT_COMMITTER_EMAIL: `${name.toLowerCase()}@example.com`,
          },
        })
      execFileSync('git', ['clone', '-q', path.join(bed.dataDir, 'history.git'), clone], {
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: clone },
      })
      git('Bob', 'checkout', '-q', '-b', 'side')
      await writeFile(path.join(clone, 'b.md'), 'b\nfrom Bob\n')
      git('Bob', 'commit', '-q', '-am', 'Bob adds a line')
      git('Ann', 'checkout', '-q', 'main')
      await writeFile(path.join(clone, 'a.md'), 'a\nfrom Ann\n')
      git('Ann', 'commit', '-q', '-am', 'Ann adds a line')
      git('Ann', 'merge', '-q', '--no-ff', '-m', 'Merge Bob’s line', 'side')
      git('Ann', 'push', '-q', 'origin', 'main')
      for (const file of ['a.md', 'b.md']) {
        await copyFile(path.join(clone, file), path.join(work(), file))
      }
    } finally {
      await rm(clone, { recursive: true, force: true, maxRetries: 10 })
    }
    await bed.reopen()
    expect(bed.memory.recovery).toBeNull()
    const log = (await bed.memory.log({ offset: 0, limit: 10 })).entries
    const merge = log[0]!
    expect(merge).toMatchObject({ actor: 'outside', author: 'Ann', command: 'outside' })
    expect(merge.otherParents).toHaveLength(1)
    const authors = log.slice(1, 3).map((entry) => [entry.actor, entry.author, entry.subject])
    expect(authors.sort()).toEqual([
      ['outside', 'Ann', 'Ann adds a line'],
      ['outside', 'Bob', 'Bob adds a line'],
    ])
    const lines = await bed.memory.blame('/memories/b.md')
    expect(lines.map((line) => [line.commit.actor, line.commit.author ?? null])).toEqual([
      ['claude', null],
      ['outside', 'Bob'],
    ])
  })

  it("leaves Cairn's own recovery commits, of this version and of older ones, as recovery", async () => {
    await run({ command: 'create', path: '/memories/n.md', file_text: 'one\n' })
    await bed.close()
    // Made as every Cairn version made it: its identity as author and committer.
    const older = await commitWithGit(
      { 'n.md': 'one\ntwo\n' },
      'Save changes found at start-up\n\nCommand: recovery\nPath: /memories/n.md\n',
      'Cairn',
      'system@cairn.invalid',
    )
    // And this version's, after a crash: files changed while no Cairn closed cleanly.
    await writeFile(path.join(work(), 'n.md'), 'one\ntwo\nthree\n')
    leaveStaleLock(bed.dataDir)
    await bed.reopen()
    const log = (await bed.memory.log({ offset: 0, limit: 2 })).entries
    expect(log[1]).toMatchObject({ oid: older, actor: 'system', command: 'recovery' })
    expect(log[0]).toMatchObject({ actor: 'system', command: 'recovery' })
    expect(log[0]).not.toHaveProperty('author')
    expect(log[1]).not.toHaveProperty('author')
  })
})

describe('a side index built before commits made with git were read as such', () => {
  const dir = () => indexDirIn(bed.dataDir)

  /** The index's entries, `oid`'s as earlier versions read a commit made with git: a recovery. */
  function entriesAsRecovery(oid: string | null): IndexEntry[] {
    const index = IndexFile.open(dir())
    const entries = index.all().map((entry): IndexEntry => {
      if (entry.oid !== oid) return entry
      const { author: _author, ...rest } = entry
      return { ...rest, actor: 'system', command: 'recovery' }
    })
    index.close()
    return entries
  }

  /** Rewrites the index as format 3 stored it: `oid`'s entry as Cairn's start-up recovery. */
  async function asFormat3(oid: string | null): Promise<void> {
    writeIndex(dir(), entriesAsRecovery(oid))
    await writeFile(path.join(dir(), 'format'), 'cairn-index 3\n')
  }

  const everything = async () => (await bed.memory.log({ offset: 0, limit: 100 })).entries

  /**
   * g.md by Cairn, then a commit made with git (Ann's), then `edits` more by Cairn; the bed is
   * left closed. Returns that commit and the log as this version reads it.
   */
  async function outsideCommitAmong(edits: number) {
    await run({ command: 'create', path: '/memories/g.md', file_text: 'a\n' })
    await bed.close()
    const foreign = await commitWithGit({ 'g.md': 'a\nb\n' }, 'by hand\n')
    await bed.reopen()
    for (let k = 0; k < edits; k++) {
      await run({ command: 'insert', path: '/memories/g.md', insert_line: 0, insert_text: `${k}` })
    }
    const rebuilt = await everything()
    await bed.close()
    return { foreign, rebuilt }
  }

  it('is set right at open: the entries from the first such commit caught up from the commits', async () => {
    const { foreign, rebuilt } = await outsideCommitAmong(3)
    await asFormat3(foreign)
    // What the old index said.
    const old = IndexFile.open(dir())
    expect(old.find(foreign)).toMatchObject({ actor: 'system', command: 'recovery' })
    old.close()

    await bed.reopen()
    expect((await everything()).find((entry) => entry.oid === foreign)).toMatchObject(byAnn)
    expect(await everything()).toEqual(rebuilt)
    expect(await readFile(path.join(dir(), 'format'), 'utf8')).toBe('cairn-index 4\n')
    // Opened again, it is trusted as it is.
    await bed.reopen()
    expect(await everything()).toEqual(rebuilt)
  })

  it('opens right after a kill at any point of the format step', async () => {
    const { foreign, rebuilt } = await outsideCommitAmong(3)
    await asFormat3(foreign)
    const index = IndexFile.open(dir())
    const keep = index.all().findIndex((entry) => entry.oid === foreign)
    index.close()
    expect(keep).toBeGreaterThan(0)
    const parts = ['commits', 'files', 'names', 'details', 'format']
    const saved = new Map<string, Buffer>()
    for (const part of parts) saved.set(part, await readFile(path.join(dir(), part)))
    const restore = async () => {
      for (const [part, bytes] of saved) await writeFile(path.join(dir(), part), bytes)
      await rm(path.join(dir(), 'format.tmp'), { force: true })
    }
    const cut = async () =>
      writeFile(path.join(dir(), 'commits'), saved.get('commits')!.subarray(0, keep * 64))
    // What a kill leaves, step by step: nothing done; the records cut; the new format's file
    // begun, or written whole beside the old; renamed over it, not yet caught up.
    const kills: Array<[string, () => Promise<void>]> = [
      ['before anything', async () => {}],
      ['after the cut', cut],
      [
        'while writing format.tmp',
        async () => (await cut(), writeFile(path.join(dir(), 'format.tmp'), '')),
      ],
      [
        'before the rename',
        async () => (await cut(), writeFile(path.join(dir(), 'format.tmp'), 'cairn-index 4\n')),
      ],
      [
        'after the rename',
        async () => (await cut(), writeFile(path.join(dir(), 'format'), 'cairn-index 4\n')),
      ],
    ]
    for (const [when, leave] of kills) {
      await restore()
      await leave()
      await bed.reopen()
      expect({ when, log: await everything() }).toEqual({ when, log: rebuilt })
      expect(await readFile(path.join(dir(), 'format'), 'utf8')).toBe('cairn-index 4\n')
      await bed.close()
    }
    await bed.reopen()
  })

  it('is never trusted half-way from the JSON-lines index of earlier versions', async () => {
    const { foreign, rebuilt } = await outsideCommitAmong(1)
    // The earliest index, as those versions read the commit made with git: Cairn's recovery.
    const entries = entriesAsRecovery(foreign)
    await rm(dir(), { recursive: true })
    const legacy = path.join(bed.dataDir, 'history.git', 'cairn-index.jsonl')
    await writeFile(legacy, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''))
    // Stopped (a failing disk here; a kill alike) after the JSON was taken over, before the
    // commits were looked at again: at 100,000 commits that look takes tens of seconds.
    const undo = setDisk(
      hookDisk(nodeDisk, (call) =>
        call.name.startsWith('ftruncate') ? errnoError(call, 'EIO') : undefined,
      ).disk,
    )
    try {
      await expect(bed.reopen()).rejects.toThrow()
    } finally {
      undo()
    }
    await bed.reopen()
    expect((await everything()).find((entry) => entry.oid === foreign)).toMatchObject(byAnn)
    expect(await everything()).toEqual(rebuilt)
  })

  it('keeps its records as they are when no commit was made outside Cairn', async () => {
    await run({ command: 'create', path: '/memories/g.md', file_text: 'a\n' })
    await run({ command: 'insert', path: '/memories/g.md', insert_line: 1, insert_text: 'b' })
    const before = await everything()
    await bed.close()
    await asFormat3(null)
    const commits = path.join(dir(), 'commits')
    const bytes = await readFile(commits)
    const inode = (await stat(commits)).ino
    await bed.reopen()
    expect(await everything()).toEqual(before)
    expect((await stat(commits)).ino).toBe(inode)
    expect((await readFile(commits)).equals(bytes)).toBe(true)
    expect(await readFile(path.join(dir(), 'format'), 'utf8')).toBe('cairn-index 4\n')
  })
})
