import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import {
  type Stats,
  constants,
  existsSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import path from 'node:path'
import os from 'node:os'
import { afterEach, describe, expect, it, onTestFinished } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk } from '../lib/disk-hooks'
import { CairnError } from '../lib/errors'
import { fsck, gitCli, memoryTestBed } from './test-helpers'

// Stop 30 (outside30), left over by live29: Cairn moved `main` without git's own lock, so a
// `git update-ref` landing between Cairn's last look at the ref and its write could be written
// over. Cairn now takes `refs/heads/main.lock` as git does (main-lock.ts): git at that moment
// fails cleanly, and a lock git holds is waited for, then refused in plain words.

let clock = 1_700_000_000_000
const warnings: unknown[] = []
const bed = memoryTestBed({
  memory: {
    now: () => (clock += 1000),
    watch: false,
    logger: { warn: (_message, error) => warnings.push(error), error: () => {} },
  },
})

let toolUse = 0
async function create(file: string, text: string): Promise<{ pending: boolean; oid?: string }> {
  const outcome = await bed.memory.execute(
    { command: 'create', path: `/memories/${file}`, file_text: text },
    { actor: 'claude', conversationId: 'conv-lock', toolUseId: `toolu_lock${++toolUse}` },
  )
  if (outcome.isError) throw new Error(String(outcome.content))
  return { pending: outcome.commitPending === true, oid: outcome.commit?.oid }
}

const gitdir = () => path.join(bed.dataDir, 'history.git')
const lockFile = () => path.join(gitdir(), 'refs', 'heads', 'main.lock')
// An hour before this system started: when an earlier boot's note was written.
const beforeBoot = () => new Date(Date.now() - os.uptime() * 1000 - 3_600_000).toISOString()
const mainOid = () => gitCli(bed.dataDir, 'rev-parse', 'main').trim()
const gitEnv = () => ({
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: bed.dataDir,
  GIT_AUTHOR_NAME: 'Ann Smith',
  GIT_AUTHOR_EMAIL: 'ann@example.com',
  GIT_COMMITTER_NAME: 'Ann Smith',
  GIT_COMMITTER_EMAIL: 'ann@example.com',
})

/** Ann's commit on `main`'s tree, not yet on `main`. */
function annCommit(): string {
  const tree = gitCli(bed.dataDir, 'rev-parse', 'main^{tree}').trim()
  return execFileSync(
    'git',
    ['--git-dir', gitdir(), 'commit-tree', tree, '-p', 'main', '-m', 'Ann'],
    { encoding: 'utf8', env: gitEnv() },
  ).trim()
}

/**
 * `git update-ref --stdin` moving `main` to `to` in a transaction, stopped once prepared: git
 * holds `main.lock` until `commit()` is sent.
 */
async function gitHoldingMain(
  to: string,
  beforeTake: () => void = () => {},
): Promise<{ commit(): Promise<number> }> {
  const from = mainOid()
  const git = spawn('git', ['--git-dir', gitdir(), 'update-ref', '--stdin'], { env: gitEnv() })
  let out = ''
  const prepared = new Promise<void>((resolve, reject) => {
    git.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8')
      if (out.includes('prepare: ok')) resolve()
    })
    git.on('exit', (code) => reject(new Error(`git exited (${code}) before it prepared: ${out}`)))
  })
  beforeTake()
  git.stdin.write(`start\nupdate refs/heads/main ${to} ${from}\nprepare\n`)
  await prepared
  return {
    commit() {
      const exited = new Promise<number>((resolve) => git.on('exit', (code) => resolve(code ?? -1)))
      git.stdin.end('commit\n')
      return exited
    },
  }
}

/** Fails the next release's unlink of `main.lock` with `code`; the returned function undoes it. */
function failOnce(code: string): () => void {
  let failed = false
  return setDisk(
    hookDisk(nodeDisk, (call) => {
      if (failed || call.name !== 'unlinkSync' || call.args[0] !== lockFile()) return
      failed = true
      return errnoError(call, code)
    }).disk,
  )
}

describe("git's lock on main", () => {
  it('a git command holding it makes a write wait, then leaves main to git; the write is saved after', async () => {
    await create('plan.md', 'a\n')
    const before = mainOid()
    const ann = annCommit()
    const git = await gitHoldingMain(ann)
    warnings.length = 0
    const written = await create('n.md', 'n\n')
    // The file is written (Claude is told the truth); its commit is owed, main untouched.
    expect(written.pending).toBe(true)
    expect(mainOid()).toBe(before)
    expect(existsSync(lockFile())).toBe(true)
    const refused = warnings.find((error) => error instanceof CairnError)
    expect(refused).toMatchObject({ code: 'conflict' })
    expect(String((refused as Error).message)).toContain('refs/heads/main.lock')
    // git finishes its move, which nothing wrote over.
    expect(await git.commit()).toBe(0)
    expect(mainOid()).toBe(ann)
    const next = await create('later.md', 'l\n')
    const onMain = gitCli(bed.dataDir, 'rev-list', 'main').trim().split('\n')
    expect(onMain).toContain(ann)
    expect(onMain[0]).toBe(next.oid)
    // The owed write is Claude's, with its tool use, on top of Ann's commit.
    expect(gitCli(bed.dataDir, 'log', '-1', '--format=%B', 'main~1')).toContain(
      'Tool-Use-Id: toolu_lock2',
    )
    expect(existsSync(lockFile())).toBe(false)
    fsck(bed.dataDir)
  })

  it('a lock a killed git left is refused in plain words, never waited on for good; removed, all goes on', async () => {
    await create('plan.md', 'a\n')
    const first = mainOid()
    const edited = await bed.memory.execute(
      { command: 'str_replace', path: '/memories/plan.md', old_str: 'a', new_str: 'b' },
      { actor: 'claude', conversationId: 'conv-lock', toolUseId: 'toolu_edit' },
    )
    expect(edited.commit).not.toBeNull()
    writeFileSync(lockFile(), '')
    // git itself refuses to move main while it is there.
    expect(() =>
      execFileSync('git', ['--git-dir', gitdir(), 'update-ref', 'refs/heads/main', first], {
        env: gitEnv(),
        stdio: 'pipe',
      }),
    ).toThrow(/main\.lock': File exists/)
    const before = mainOid()
    const refused = await bed.memory.restoreFile('/memories/plan.md', first).catch((e) => e)
    expect(refused).toBeInstanceOf(CairnError)
    expect(refused).toMatchObject({ code: 'conflict' })
    expect((refused as Error).message).toContain('remove that file')
    expect((refused as Error).message).not.toContain(bed.dataDir)
    expect(mainOid()).toBe(before)
    // The person removes it: the next change saves what is owed, and its own.
    execFileSync('rm', [lockFile()])
    const later = await create('later.md', 'l\n')
    expect(later.pending).toBe(false)
    expect(mainOid()).toBe(later.oid)
    fsck(bed.dataDir)
  })

  // Found by faults.test's full run (a fault in the release's unlink, in a revert): the lock
  // Cairn could not remove refused every later move of main until a restart, each change owed.
  it("its own lock left by a failed release is removed by the next move, never git's lock in its place", async () => {
    await create('plan.md', 'a\n')
    let restore = failOnce('EIO')
    let kept: { pending: boolean; oid?: string }
    try {
      kept = await create('kept.md', 'k\n')
    } finally {
      restore()
    }
    expect(kept.pending).toBe(false)
    expect(existsSync(lockFile()), 'the release failed: its lock is still there').toBe(true)
    // git refuses while it is there; Cairn's next move removes its own and goes on, at once.
    const next = await create('next.md', 'n\n')
    expect(next.pending).toBe(false)
    expect(mainOid()).toBe(next.oid)
    expect(existsSync(lockFile())).toBe(false)
    fsck(bed.dataDir)
    // Left again; a person removes it and a git command takes the lock meanwhile: git's stays.
    restore = failOnce('EACCES')
    try {
      expect((await create('again.md', 'g\n')).pending).toBe(false)
    } finally {
      restore()
    }
    execFileSync('rm', [lockFile()])
    writeFileSync(lockFile(), `${mainOid()}\n`)
    const waited = await create('waited.md', 'w\n')
    expect(waited.pending).toBe(true)
    expect(readFileSync(lockFile(), 'utf8')).toBe(`${mainOid()}\n`)
    execFileSync('rm', [lockFile()])
    expect((await create('after.md', 'a\n')).pending).toBe(false)
    fsck(bed.dataDir)
  })

  // rhist33: a lock left behind as a second name of cairn-main-lock was known by its inode
  // alone. A person clearing the history's locks removes both names; ext4 hands the freed inode
  // at once to the next file made, git's main.lock, which Cairn removed while git held it (and
  // moved main under git's feet). It is Cairn's only while it is a name of cairn-main-lock.
  it("its own lock left behind, then removed with cairn-main-lock: git's lock on the freed inode stays", async () => {
    await create('plan.md', 'a\n')
    const restore = failOnce('EIO')
    try {
      expect((await create('kept.md', 'k\n')).pending).toBe(false)
    } finally {
      restore()
    }
    const stuck = statSync(lockFile()).ino
    const ann = annCommit()
    const git = await gitHoldingMain(ann, () => {
      rmSync(path.join(gitdir(), 'cairn-main-lock'))
      rmSync(lockFile())
    })
    onTestFinished(() => void git.commit())
    // ext4 often hands the freed inode to git's main.lock (1 time in 3 in a shell loop here);
    // where it did not this time, the disk reports it so, as it would.
    const undo =
      statSync(lockFile()).ino === stuck
        ? () => {}
        : setDisk({
            ...nodeDisk,
            lstatIfThere: (where) => {
              const stats = nodeDisk.lstatIfThere(where)
              if (where !== lockFile() || !stats) return stats
              return Object.assign(Object.create(Object.getPrototypeOf(stats) as object), stats, {
                ino: stuck,
              }) as Stats
            },
          })
    let waited: { pending: boolean }
    try {
      waited = await create('waited.md', 'w\n')
    } finally {
      undo()
    }
    expect(waited.pending, "git holds main: Cairn's change is owed").toBe(true)
    expect(existsSync(lockFile()), "git's lock stays").toBe(true)
    expect(await git.commit()).toBe(0)
    expect(mainOid()).toBe(ann)
    const next = await create('after.md', 'a\n')
    expect(next.pending).toBe(false)
    expect(mainOid()).toBe(next.oid)
    expect(gitCli(bed.dataDir, 'log', '--format=%s', '-3', 'main')).toContain('waited.md')
    expect(gitCli(bed.dataDir, 'rev-list', 'main').split('\n')).toContain(ann)
    fsck(bed.dataDir)
  })

  it('is held while Cairn moves main: a git update-ref at that moment fails cleanly', async () => {
    await create('plan.md', 'a\n')
    const ann = annCommit()
    let gitSaid: string | null = null
    const undo = setDisk(
      hookDisk(nodeDisk, (call) => {
        const [first, second] = call.args
        const movesMain =
          (call.name === 'openSync' &&
            String(first).endsWith(path.join('heads', 'main')) &&
            (Number(second) & constants.O_RDWR) !== 0) ||
          (call.name === 'renameSync' && String(second).endsWith(path.join('heads', 'main')))
        if (gitSaid === null && movesMain) {
          try {
            execFileSync('git', ['--git-dir', gitdir(), 'update-ref', 'refs/heads/main', ann], {
              env: gitEnv(),
              stdio: 'pipe',
            })
            gitSaid = 'moved'
          } catch (error) {
            gitSaid = String((error as { stderr?: Buffer }).stderr)
          }
        }
        return undefined
      }).disk,
    )
    let made: { pending: boolean; oid?: string }
    try {
      made = await create('n.md', 'n\n')
    } finally {
      undo()
    }
    expect(gitSaid).toMatch(/main\.lock': File exists/)
    expect(made.pending).toBe(false)
    expect(mainOid()).toBe(made.oid)
    expect(existsSync(lockFile())).toBe(false)
    fsck(bed.dataDir)
  })

  // Stop 30 (rout30): open removed every `*.lock` in refs/heads, so a git command holding
  // `main.lock` while Cairn opened lost it, and the Cairn just opened could move main under
  // git's feet. Open now removes only its own: a link to cairn-main-lock, or one too old for a
  // running git.
  it('open leaves the lock of a running git alone; git finishes its move', async () => {
    await create('plan.md', 'a\n')
    const ann = annCommit()
    await bed.close()
    const git = await gitHoldingMain(ann)
    await bed.reopen()
    expect(existsSync(lockFile())).toBe(true)
    expect(await git.commit()).toBe(0)
    expect(mainOid()).toBe(ann)
    const next = await create('later.md', 'l\n')
    expect(gitCli(bed.dataDir, 'rev-parse', 'main~1').trim()).toBe(ann)
    expect(mainOid()).toBe(next.oid)
    fsck(bed.dataDir)
  })

  it("a Cairn killed holding the lock: git refuses until the next open, which removes Cairn's own and a stale one", async () => {
    await create('plan.md', 'a\n')
    const first = mainOid()
    await create('n.md', 'n\n')
    const linked = path.join(gitdir(), 'cairn-main-lock')
    expect(existsSync(linked)).toBe(true)
    // A child takes the lock as lockMain does (a second name of cairn-main-lock) and is
    // killed holding it.
    const child = spawn(process.execPath, [
      '-e',
      `require('fs').linkSync(${JSON.stringify(linked)}, ${JSON.stringify(lockFile())}); console.log('held'); setInterval(() => {}, 1000)`,
    ])
    await new Promise<void>((resolve) => child.stdout.on('data', () => resolve()))
    const killed = new Promise((resolve) => child.on('exit', resolve))
    child.kill('SIGKILL')
    await killed
    expect(statSync(lockFile()).ino).toBe(statSync(linked).ino)
    const moveMain = () =>
      execFileSync('git', ['--git-dir', gitdir(), 'update-ref', 'refs/heads/main', first], {
        env: gitEnv(),
        stdio: 'pipe',
      })
    expect(moveMain).toThrow(/main\.lock': File exists/)
    // A killed git's lock on another branch, an hour old, and a fresh one.
    const stale = path.join(gitdir(), 'refs', 'heads', 'old.lock')
    const fresh = path.join(gitdir(), 'refs', 'heads', 'work.lock')
    writeFileSync(stale, '')
    writeFileSync(fresh, '')
    const hourAgo = new Date(Date.now() - 3_600_000)
    utimesSync(stale, hourAgo, hourAgo)
    await bed.reopen()
    expect(existsSync(lockFile())).toBe(false)
    expect(existsSync(stale)).toBe(false)
    expect(existsSync(fresh)).toBe(true)
    moveMain()
    expect(mainOid()).toBe(first)
    execFileSync('rm', [fresh])
  })
})

// Stop 31 (outside31), left by rout30: where the file system refuses hard links, Cairn's own
// `main.lock` was an empty file told from git's only by its age, so a Cairn killed holding it
// blocked every change for up to a minute after the next open. It now names its process, and
// open removes it at once when that process is gone (never while it runs).
describe('where hard links are refused', () => {
  // A test that fails half way never leaves its child holding the lock running.
  const children: ChildProcess[] = []
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
  })

  const here = (file: string) => JSON.stringify(path.resolve('src/main', file))

  /**
   * A process taking the lock through Cairn's own code, links refused (EPERM), then idling; with
   * `ownPidNamespace`, in a process namespace of its own (`unshare -p`, as root), where it is pid 1.
   */
  async function childHoldingLock(
    ownPidNamespace = false,
  ): Promise<{ pid: number; kill(): Promise<void> }> {
    const code = `
      const { nodeDisk, setDisk } = require(${here('lib/disk.ts')})
      const { hookDisk, errnoError } = require(${here('lib/disk-hooks.ts')})
      const { lockMain } = require(${here('history/main-lock.ts')})
      setDisk(hookDisk(nodeDisk, (call) => call.name === 'linkSync' ? errnoError(call, 'EPERM') : undefined).disk)
      lockMain(${JSON.stringify(gitdir())}).then(() => { console.log('held'); setInterval(() => {}, 1000) })
    `
    const node = [process.execPath, '--import', 'tsx', '-e', code]
    const unshare = ['unshare', '-p', '-f', '--mount-proc', '--kill-child']
    const [command, ...args] = ownPidNamespace ? [...unshare, ...node] : node
    const child = spawn(command!, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    children.push(child)
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', () => resolve())
      child.on('exit', (exit) => reject(new Error(`the child exited (${exit}) before it held`)))
    })
    return {
      pid: child.pid!,
      kill() {
        const gone = new Promise<void>((resolve) => child.on('exit', () => resolve()))
        child.kill('SIGKILL')
        return gone
      },
    }
  }

  it("a Cairn killed holding its own lock file: the next open removes it at once, a live one's stays", async () => {
    await create('plan.md', 'a\n')
    const first = mainOid()
    await create('n.md', 'n\n')
    // Cairn's kept file is not linked: the lock is a file of its own.
    const child = await childHoldingLock()
    expect(statSync(lockFile()).nlink).toBe(1)
    const note = readFileSync(lockFile(), 'utf8')
    expect(note).toMatch(/^cairn-main-lock \{/)
    expect(JSON.parse(note.slice('cairn-main-lock '.length))).toMatchObject({ pid: child.pid })
    const moveMain = () =>
      execFileSync('git', ['--git-dir', gitdir(), 'update-ref', 'refs/heads/main', first], {
        env: gitEnv(),
        stdio: 'pipe',
      })
    expect(moveMain).toThrow(/main\.lock': File exists/)
    // Its process runs: an open leaves its lock alone.
    await bed.reopen()
    expect(existsSync(lockFile())).toBe(true)
    await child.kill()
    expect(moveMain).toThrow(/main\.lock': File exists/)
    // Killed seconds ago, well inside the minute a git lock is given: its own name says it is left.
    await bed.reopen()
    expect(existsSync(lockFile())).toBe(false)
    const later = await create('later.md', 'l\n')
    expect(later.pending).toBe(false)
    expect(mainOid()).toBe(later.oid)
    moveMain()
    expect(mainOid()).toBe(first)
    fsck(bed.dataDir)
  })

  it("another machine's lock file (a shared data folder) is left at open until it is a minute old; this machine's from an earlier boot goes at once", async () => {
    await create('plan.md', 'a\n')
    const note = (host: string, since = new Date().toISOString()) =>
      `cairn-main-lock ${JSON.stringify({
        pid: 4_000_000,
        since,
        host,
        boot: 'another-boot-0000',
        started: '1',
      })}\n`
    const elsewhere = note(`not-${os.hostname()}`)
    writeFileSync(lockFile(), elsewhere)
    await bed.reopen()
    expect(readFileSync(lockFile(), 'utf8')).toBe(elsewhere)
    // An older note, no machine named, from another boot: the same.
    const unnamed = elsewhere.replace(/,"host":"[^"]*"/, '')
    writeFileSync(lockFile(), unnamed)
    await bed.reopen()
    expect(readFileSync(lockFile(), 'utf8')).toBe(unnamed)
    // Over a minute old: nothing holds a lock on main that long.
    const old = new Date(Date.now() - 2 * 60_000)
    utimesSync(lockFile(), old, old)
    await bed.reopen()
    expect(existsSync(lockFile())).toBe(false)
    // This machine's, from an earlier boot (written before this system started): gone at once.
    writeFileSync(lockFile(), note(os.hostname(), beforeBoot()))
    await bed.reopen()
    expect(existsSync(lockFile())).toBe(false)
    fsck(bed.dataDir)
  })

  it('a machine named like this one but with another machine id waits for the minute rule; this machine id from an earlier boot goes at once', async () => {
    await create('plan.md', 'a\n')
    // This system's machine id, the same whether the host has one or not (a bare container).
    const ours = 'c0ffee00c0ffee00c0ffee00c0ffee00'
    onTestFinished(
      setDisk({
        ...nodeDisk,
        readFileSync: (file) =>
          file === '/etc/machine-id' ? Buffer.from(`${ours}\n`) : nodeDisk.readFileSync(file),
      }),
    )
    const note = (machine: string, since = new Date().toISOString()) =>
      `cairn-main-lock ${JSON.stringify({
        pid: 4_000_000,
        since,
        host: os.hostname(),
        machine,
        boot: 'another-boot-0000',
        started: '1',
      })}\n`
    // Two machines both called, say, localhost, sharing the folder: the other's lock stays.
    const alike = note(ours.replace(/^./, (c) => (c === '0' ? '1' : '0')))
    writeFileSync(lockFile(), alike)
    await bed.reopen()
    expect(readFileSync(lockFile(), 'utf8')).toBe(alike)
    const old = new Date(Date.now() - 2 * 60_000)
    utimesSync(lockFile(), old, old)
    await bed.reopen()
    expect(existsSync(lockFile())).toBe(false)
    // This machine id from another boot, written while this system ran: a clone's (a container
    // or VM image copied with its machine id), running now; it stays (stop 33: it went at once).
    const clone = note(ours)
    writeFileSync(lockFile(), clone)
    await bed.reopen()
    expect(readFileSync(lockFile(), 'utf8')).toBe(clone)
    // Written before this system started, on this local disk: an earlier boot's, gone at once.
    writeFileSync(lockFile(), note(ours, beforeBoot()))
    await bed.reopen()
    expect(existsSync(lockFile())).toBe(false)
    fsck(bed.dataDir)
  })

  // Stop 32 (mendL): a Cairn in another process namespace (a Flatpak Cairn beside a native one)
  // names a pid of that namespace, which this /proc does not show or shows as another process:
  // its live lock was taken for left at open, and two Cairns moved main at once.
  it('a lock file of a Cairn in another process namespace is left at open while it runs, and goes once it is gone and a minute old', async () => {
    if (process.getuid?.() !== 0) {
      throw new Error(
        'this test needs root, to run a Cairn in a process namespace of its own (unshare -p)',
      )
    }
    await create('plan.md', 'a\n')
    const child = await childHoldingLock(true)
    const note = readFileSync(lockFile(), 'utf8')
    const holder = JSON.parse(note.slice('cairn-main-lock '.length)) as {
      pid: number
      pidns: string
    }
    expect(holder.pid).toBe(1)
    expect(holder.pidns).toMatch(/^pid:\[\d+\]$/)
    expect(holder.pidns).not.toBe(
      execFileSync('readlink', ['/proc/self/ns/pid'], { encoding: 'utf8' }).trim(),
    )
    await bed.reopen()
    expect(readFileSync(lockFile(), 'utf8')).toBe(note)
    // Gone, but its namespace's ids cannot be looked at from here: it waits for the minute rule.
    await child.kill()
    await bed.reopen()
    expect(readFileSync(lockFile(), 'utf8')).toBe(note)
    const old = new Date(Date.now() - 2 * 60_000)
    utimesSync(lockFile(), old, old)
    await bed.reopen()
    expect(existsSync(lockFile())).toBe(false)
    const later = await create('later.md', 'l\n')
    expect(later.pending).toBe(false)
    expect(mainOid()).toBe(later.oid)
    fsck(bed.dataDir)
  }, 60_000)

  it("a fresh lock of git's, empty or holding an id, or one naming a live process, is left at open", async () => {
    await create('plan.md', 'a\n')
    const cases = [
      '',
      `${mainOid()}\n`,
      `cairn-main-lock ${JSON.stringify({ pid: process.pid, since: new Date().toISOString() })}\n`,
      'cairn-main-lock {"pid":"x"}\n',
    ]
    for (const text of cases) {
      writeFileSync(lockFile(), text)
      await bed.reopen()
      expect(readFileSync(lockFile(), 'utf8')).toBe(text)
    }
    execFileSync('rm', [lockFile()])
  })
})
