/**
 * Stop 33: Cairn's own `index.lock`, left by a kill while it wrote git's index. Where Cairn runs
 * in a process namespace of its own (Flatpak, a container) no git lock is ever taken for left,
 * since a git outside is not listed there, so Cairn's own stayed until a person deleted it by
 * hand: git refused `git add` and `git commit`, and Cairn's index write waited. A note beside the
 * lock (`cairn-index-lock`) now names Cairn's process: a lock whose holder is gone for sure (this
 * boot, this namespace, its process gone) is taken back at once; one whose holder cannot be
 * looked at (another namespace) stays. Real kills of real processes, checked with the git CLI.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { writeGitIndex, type PreparedIndex } from './git-index'
import { INDEX_LOCK_NOTE } from './git-lock-left'

let dir: string
let gitdir: string
let lock: string
const children: ChildProcess[] = []

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-index-lock-own-'))
  gitdir = path.join(dir, 'history.git')
  execFileSync('git', ['init', '-q', '--bare', gitdir])
  lock = path.join(gitdir, 'index.lock')
  writeFileSync(path.join(dir, 'holder.mts'), holderScript)
  writeFileSync(path.join(dir, 'writer.mts'), writerScript)
})

// Last registered, run first: no child outlives its folder.
afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGKILL')
      await gone
    }
  }
  rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
})

// An empty index of a commit no one reads: what a write needs to take the lock and fill it.
const prepared: PreparedIndex = {
  kind: 'write',
  files: [],
  hashed: [],
  head: 'a'.repeat(40),
  found: null,
  bare: false,
  noted: null,
}

const here = (file: string) => JSON.stringify(path.resolve('src/main', file))

// Writes the index through Cairn's own code and stops before the rename, holding the lock, then
// says so by creating the file `argv[3]`.
const holderScript = `
import { writeFileSync } from 'node:fs'
import { nodeDisk, setDisk } from ${here('lib/disk.ts')}
import { writeGitIndex } from ${here('history/git-index.ts')}
const [gitdir, holding] = process.argv.slice(2)
// A promise that never settles keeps no process alive: this does, until the kill.
setInterval(() => {}, 1000)
setDisk({
  ...nodeDisk,
  promises: {
    ...nodeDisk.promises,
    rename: () => {
      writeFileSync(holding, String(process.pid))
      return new Promise(() => {})
    },
  },
})
await writeGitIndex(gitdir, ${JSON.stringify(prepared)})
`

// One write of the index through Cairn's own code; prints its outcome.
const writerScript = `
import { writeGitIndex } from ${here('history/git-index.ts')}
console.log(await writeGitIndex(process.argv[2], ${JSON.stringify(prepared)}))
`

// Node itself with tsx loaded (not tsx's launcher, whose child would hold the lock).
const node = process.execPath

/** A holder in this namespace, holding Cairn's `index.lock` once this resolves. */
async function holder(): Promise<ChildProcess> {
  const holding = path.join(dir, 'holding')
  const child = spawn(node, ['--import', 'tsx', path.join(dir, 'holder.mts'), gitdir, holding], {
    stdio: 'inherit',
  })
  children.push(child)
  await vi.waitFor(() => expect(existsSync(holding)).toBe(true), { timeout: 30_000, interval: 20 })
  return child
}

async function kill(child: ChildProcess): Promise<void> {
  const gone = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await gone
}

/**
 * Runs `sh` as process 1 of a process namespace of its own (as root), with Node, the scripts'
 * folder and the history as `$0`, `$1`, `$2`; returns what it printed.
 */
function inNamespace(script: string): string {
  if (process.getuid?.() !== 0) {
    throw new Error('this test needs root, to run Cairn in a process namespace of its own')
  }
  return execFileSync(
    'unshare',
    ['-p', '-f', '--mount-proc', 'sh', '-c', script, node, dir, gitdir],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  ).trim()
}

// In the namespace: the holder is started, holds the lock, and is SIGKILLed.
const killedHolder = `"$0" --import tsx "$1/holder.mts" "$2" "$1/holding" & h=$!
while [ ! -e "$1/holding" ]; do sleep 0.05; done
kill -9 $h; wait $h || true`

const git = (...args: string[]) =>
  execFileSync('git', ['--git-dir', gitdir, ...args], { encoding: 'utf8', stdio: 'pipe' })

describe("Cairn's own index.lock left by a kill", () => {
  it('is kept while its Cairn runs, and taken back at once when it was killed; git works again', async () => {
    const child = await holder()
    expect(existsSync(lock)).toBe(true)
    expect(readFileSync(path.join(gitdir, INDEX_LOCK_NOTE), 'utf8')).toMatch(
      new RegExp(`^cairn-index-lock \\{"pid":${child.pid},`),
    )
    expect(await writeGitIndex(gitdir, prepared)).toBe('locked')
    await kill(child)
    expect(() => git('read-tree', '--empty')).toThrow(/index\.lock': File exists/)
    // Seconds old, well inside the minute a git's lock is given: its note says it is left.
    expect(await writeGitIndex(gitdir, prepared)).toBe('written')
    expect(existsSync(lock)).toBe(false)
    expect(existsSync(path.join(gitdir, INDEX_LOCK_NOTE))).toBe(false)
    expect(git('ls-files', '--stage')).toBe('')
    git('read-tree', '--empty')
  }, 60_000)

  it('is taken back by a Cairn in the same process namespace of its own (a container), where no git lock is ever taken for left', () => {
    expect(inNamespace(`${killedHolder}\n"$0" --import tsx "$1/writer.mts" "$2"`)).toBe('written')
    expect(existsSync(lock)).toBe(false)
    git('read-tree', '--empty')
  }, 120_000)

  it('stays when its holder ran in another process namespace, which cannot be looked at from here', () => {
    inNamespace(killedHolder)
    expect(existsSync(lock)).toBe(true)
    // From a new namespace (a Flatpak Cairn started again), as from another container.
    expect(inNamespace(`"$0" --import tsx "$1/writer.mts" "$2"`)).toBe('locked')
    expect(existsSync(lock)).toBe(true)
    expect(() => git('read-tree', '--empty')).toThrow(/index\.lock': File exists/)
  }, 120_000)

  // rcode33: the lock was made in place and noted after, so a kill between the two (hit by a kill
  // loop racing `git add`) left a lock taken for git's, kept for a minute here and for good in
  // Flatpak or a container. The holder stops (and is killed) as it writes the note.
  it('a kill as the note is written leaves no lock, or one the next write takes back', async () => {
    const noting = path.join(dir, 'noting')
    writeFileSync(
      path.join(dir, 'noter.mts'),
      `
import { writeFileSync } from 'node:fs'
import { nodeDisk, setDisk } from ${here('lib/disk.ts')}
import { writeGitIndex } from ${here('history/git-index.ts')}
const [gitdir, noting] = process.argv.slice(2)
setDisk({
  ...nodeDisk,
  openSync: (file, ...rest) => {
    if (String(file).endsWith(${JSON.stringify(INDEX_LOCK_NOTE)})) {
      writeFileSync(noting, String(process.pid))
      // Stopped here until the kill.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)
    }
    return nodeDisk.openSync(file, ...rest)
  },
})
await writeGitIndex(gitdir, ${JSON.stringify(prepared)})
`,
    )
    const child = spawn(node, ['--import', 'tsx', path.join(dir, 'noter.mts'), gitdir, noting], {
      stdio: 'inherit',
    })
    children.push(child)
    await vi.waitFor(() => expect(existsSync(noting)).toBe(true), { timeout: 30_000, interval: 20 })
    await kill(child)
    // Seconds old, well inside the minute a git's lock is given.
    expect(await writeGitIndex(gitdir, prepared)).toBe('written')
    expect(existsSync(lock)).toBe(false)
    git('read-tree', '--empty')
  }, 60_000)

  // rcode33: the note's lock was told from a git's lock on the same inode by its birth time
  // against the note's time, so a clock set back after the kill (an NTP step, a clock kept in
  // local time corrected) made a live git's lock look Cairn's own, and it was removed under git.
  it("stays when git's lock took the inode after the kill, even with the clock set back since", async () => {
    await kill(await holder())
    const note = path.join(gitdir, INDEX_LOCK_NOTE)
    const noted = readFileSync(note, 'utf8')
    const [dev, ino] = /"lock":"(\d+):(\d+)"/.exec(noted)!.slice(1).map(Number)
    // A person removes the lock by hand, and a git command makes its own: on ext4 it gets the
    // freed inode again, most often at once (tried until it does, a hundred times at most).
    rmSync(lock)
    let made = openSync(lock, 'wx')
    for (let tries = 0; tries < 100 && fstatSync(made).ino !== ino; tries++) {
      closeSync(made)
      rmSync(lock)
      made = openSync(lock, 'wx')
    }
    const gitLock = fstatSync(made)
    closeSync(made)
    expect(gitLock.dev).toBe(dev)
    // Where the file system did not hand it out again (tmpfs), the note names git's lock as if it
    // had; and the clock was an hour ahead when the note was written.
    writeFileSync(
      note,
      noted
        .replace(/"lock":"[^"]*"/, `"lock":"${gitLock.dev}:${gitLock.ino}"`)
        .replace(/"since":"[^"]*"/, `"since":"${new Date(Date.now() + 3_600_000).toISOString()}"`),
    )
    expect(await writeGitIndex(gitdir, prepared)).toBe('locked')
    expect(existsSync(lock)).toBe(true)
    expect(statSync(lock).ino).toBe(gitLock.ino)
  }, 60_000)

  // Both notes were written by name (`writeFileSync`): a fifo put at either made the index write's
  // open wait for a reader forever, holding git's lock. Run in a child, whose open can be timed
  // out (this process's could not be).
  it('a fifo at either note beside the index never holds the write', () => {
    for (const note of [INDEX_LOCK_NOTE, 'cairn-index-base']) {
      rmSync(path.join(gitdir, note), { force: true })
      execFileSync('mkfifo', [path.join(gitdir, note)])
      const outcome = execFileSync(
        node,
        ['--import', 'tsx', path.join(dir, 'writer.mts'), gitdir],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 30_000 },
      )
      expect(outcome.trim()).toBe('written')
      expect(existsSync(lock)).toBe(false)
      git('ls-files', '--stage')
      rmSync(path.join(gitdir, 'index'))
    }
  }, 120_000)
})
