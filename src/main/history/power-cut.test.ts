import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory } from './index'
import { decodeRecords, LOG_FILES } from './objects/object-log'
import { CLAUDE, commitCount, fsck, gitCli, headMatchesFolder, tempDataDir } from './test-helpers'

// A power cut after acknowledged commands, before any checkpoint (docs/durability.md, "Cost"):
// their objects' loose files were written but never fsynced, so the disk may hold them
// missing, cut short or zeroed, and the folders made for them may be gone. Only the
// write-ahead log was fsynced. A child process runs the commands and kills itself (no close,
// no checkpoint); the loose files and new folders the log covers are then damaged as a power
// cut may leave them, and open must bring every commit back.

let dataDir: string
let cleanup: () => Promise<void>

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'alpha\n' }, CLAUDE)
  await memory.execute({ command: 'create', path: '/memories/b.md', file_text: 'beta\n' }, CLAUDE)
  // A clean close checkpoints: the log is empty, every object so far durable.
  await memory.close()
})

afterEach(() => cleanup())

const gitdir = () => path.join(dataDir, 'history.git')
const logSizes = () => LOG_FILES.map((name) => fs.statSync(path.join(gitdir(), name)).size)

/** Runs `commands` in a child process that then kills itself, with no close and no checkpoint. */
async function runAndKill(commands: ReadonlyArray<Record<string, unknown>>): Promise<void> {
  const script = `
    const { openVersionedMemory } = await import(${JSON.stringify(path.resolve('src/main/history/index.ts'))})
    const memory = await openVersionedMemory({ dataDir: ${JSON.stringify(dataDir)}, watch: false, maintenance: false })
    for (const input of ${JSON.stringify(commands)}) {
      const outcome = await memory.execute(input, ${JSON.stringify(CLAUDE)})
      if (outcome.isError || !outcome.commit) throw new Error('not committed: ' + JSON.stringify(outcome))
    }
    process.stdout.write('acknowledged\\n')
    process.kill(process.pid, 'SIGKILL')
  `
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, killed) => resolve(killed)),
  )
  expect(out, err).toContain('acknowledged')
  expect(signal).toBe('SIGKILL')
}

/** The ids of every record the log holds. */
function loggedIds(): string[] {
  return LOG_FILES.flatMap((name) =>
    decodeRecords(fs.readFileSync(path.join(gitdir(), name))).map(({ oid }) => oid),
  )
}

type Loss = 'missing' | 'cut' | 'zeroed'

/**
 * What a power cut may leave of loose files written since the last checkpoint: gone, cut
 * short or zeroed, and (for `missing`) the object folders holding nothing else gone too.
 */
function losePowerCut(oids: ReadonlyArray<string>, loss: Loss): void {
  const logged = new Set(oids)
  for (const oid of logged) {
    const file = path.join(gitdir(), 'objects', oid.slice(0, 2), oid.slice(2))
    if (!fs.existsSync(file)) continue
    const size = fs.statSync(file).size
    if (loss === 'missing') fs.rmSync(file)
    else if (loss === 'cut') fs.truncateSync(file, Math.floor(size / 3))
    else {
      fs.truncateSync(file, 0)
      fs.truncateSync(file, size)
    }
  }
  if (loss !== 'missing') return
  for (const prefix of new Set(oids.map((oid) => oid.slice(0, 2)))) {
    const dir = path.join(gitdir(), 'objects', prefix)
    if (fs.readdirSync(dir).every((name) => logged.has(prefix + name))) {
      fs.rmSync(dir, { recursive: true })
    }
  }
}

/** Every file of every commit in `range` read through Cairn equals what `git show` gives. */
async function expectReadableLikeGit(
  memory: Awaited<ReturnType<typeof openVersionedMemory>>,
  commits: ReadonlyArray<string>,
): Promise<void> {
  for (const commit of commits) {
    const files = gitCli(dataDir, 'ls-tree', '-r', '--name-only', commit)
      .split('\n')
      .filter(Boolean)
    for (const file of files) {
      const expected = gitCli(dataDir, 'show', `${commit}:${file}`)
      expect(await memory.readAt(`/memories/${file}`, commit)).toBe(expected)
    }
  }
}

describe('a power cut after acknowledged commands, before any checkpoint', () => {
  for (const loss of ['missing', 'cut', 'zeroed'] as const) {
    it(`brings back every commit whose objects' loose files were left ${loss}`, async () => {
      const before = commitCount(dataDir)
      const commands = [
        { command: 'create', path: '/memories/new/deep/c.md', file_text: 'gamma\n' },
        { command: 'str_replace', path: '/memories/a.md', old_str: 'alpha', new_str: 'ALPHA' },
        { command: 'insert', path: '/memories/new/deep/c.md', insert_line: 1, insert_text: 'more' },
        { command: 'create', path: '/memories/other/d.md', file_text: 'delta\n' },
        { command: 'rename', old_path: '/memories/b.md', new_path: '/memories/new/b.md' },
        { command: 'delete', path: '/memories/other/d.md' },
      ]
      await runAndKill(commands)
      const head = gitCli(dataDir, 'rev-parse', 'main').trim()
      const logged = loggedIds()
      // The log holds the commits' objects: every new commit and its tree at least.
      const added = gitCli(dataDir, 'rev-list', `main~${commands.length}..main`)
        .split('\n')
        .filter(Boolean)
      expect(added).toHaveLength(commands.length)
      expect(added[0]).toBe(head)
      for (const commit of added) {
        expect(logged).toContain(commit)
        expect(logged).toContain(gitCli(dataDir, 'rev-parse', `${commit}^{tree}`).trim())
      }
      losePowerCut(logged, loss)
      // The damage is real: git itself cannot read the history now.
      expect(() => fsck(dataDir)).toThrow()

      const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
      try {
        // Every logged object is back and durable: the log is empty.
        expect(logSizes()).toEqual([0, 0])
        expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(head)
        expect(commitCount(dataDir)).toBe(before + commands.length)
        fsck(dataDir)
        expect(await headMatchesFolder(dataDir)).toBe(true)
        await expectReadableLikeGit(memory, added)
        // And the history goes on.
        const next = await memory.execute(
          { command: 'create', path: '/memories/after.md', file_text: 'after\n' },
          CLAUDE,
        )
        expect(next.commit).not.toBeNull()
      } finally {
        await memory.close()
      }
      expect(logSizes()).toEqual([0, 0])
      fsck(dataDir)
    })
  }
})

/**
 * The ref file as a power cut may leave it when its move (written in place, or renamed) was
 * never made durable: its old value, emptied, gone, or its block zeroed.
 */
type RefLoss = 'reverted' | 'emptied' | 'missing' | 'zeroed' | 'torn'

function losePowerCutRef(loss: RefLoss, old: string): void {
  const file = path.join(gitdir(), 'refs', 'heads', 'main')
  if (loss === 'reverted') fs.writeFileSync(file, `${old}\n`)
  else if (loss === 'emptied') fs.truncateSync(file, 0)
  else if (loss === 'zeroed') fs.writeFileSync(file, Buffer.alloc(41))
  // An in-place write cut mid-id: the new value's first half, the old one's second half.
  else if (loss === 'torn') {
    const now = fs.readFileSync(file, 'utf8')
    fs.writeFileSync(file, `${now.slice(0, 20)}${old.slice(20, 40)}\n`)
  } else fs.rmSync(file)
}

/** The commands of the ref tests: a new folder, an edit, an insert. */
const REF_COMMANDS = [
  { command: 'create', path: '/memories/new/c.md', file_text: 'gamma\n' },
  { command: 'str_replace', path: '/memories/a.md', old_str: 'alpha', new_str: 'ALPHA' },
  { command: 'insert', path: '/memories/b.md', insert_line: 1, insert_text: 'more' },
]

describe("a power cut that loses the ref file's move (only the log was flushed)", () => {
  for (const loss of ['reverted', 'emptied', 'missing', 'zeroed', 'torn'] as const) {
    it(`moves main forward to the last acknowledged commit when the ref was ${loss}`, async () => {
      const old = gitCli(dataDir, 'rev-parse', 'main').trim()
      const before = commitCount(dataDir)
      await runAndKill(REF_COMMANDS)
      const head = gitCli(dataDir, 'rev-parse', 'main').trim()
      expect(head).not.toBe(old)
      losePowerCutRef(loss, old)
      // The objects' loose files are lost too (the harder case: the log brings back both).
      if (loss === 'missing') losePowerCut(loggedIds(), 'missing')

      const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
      try {
        expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(head)
        expect(commitCount(dataDir)).toBe(before + REF_COMMANDS.length)
        // No recovery commit: the folder is the acknowledged commit's tree.
        expect(memory.recovery).toBeNull()
        expect(logSizes()).toEqual([0, 0])
        fsck(dataDir)
        expect(await headMatchesFolder(dataDir)).toBe(true)
      } finally {
        await memory.close()
      }
      fsck(dataDir)
    })
  }
})

describe('a logged value of main that a durable move has passed', () => {
  // The log holds the commands' commits and main's value C; then main was moved durably
  // (a sync, a switch, git itself) to a commit with C's tree: open must leave it there.
  const commitTree = (...args: string[]) =>
    gitCli(
      dataDir,
      '-c',
      'user.name=Git',
      '-c',
      'user.email=git@example.invalid',
      'commit-tree',
      ...args,
    )
  const moves = {
    'to a commit that does not descend from it': (c: string) =>
      commitTree(`${c}^{tree}`, '-m', 'elsewhere'),
    'to a sibling of it': (c: string) => commitTree(`${c}^{tree}`, '-p', `${c}^`, '-m', 'sibling'),
    'to a descendant of it': (c: string) => commitTree(`${c}^{tree}`, '-p', c, '-m', 'after'),
  }
  for (const [name, make] of Object.entries(moves)) {
    it(`never moves main back nor aside: moved ${name}`, async () => {
      await runAndKill(REF_COMMANDS)
      const logged = gitCli(dataDir, 'rev-parse', 'main').trim()
      const moved = make(logged).trim()
      gitCli(dataDir, 'update-ref', 'refs/heads/main', moved)

      const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
      try {
        expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(moved)
        expect(logSizes()).toEqual([0, 0])
        fsck(dataDir)
        expect(await headMatchesFolder(dataDir)).toBe(true)
      } finally {
        await memory.close()
      }
    })
  }
})
