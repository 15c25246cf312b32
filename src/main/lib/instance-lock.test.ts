import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { createInterface } from 'node:readline'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk, type Disk } from './disk'
import { errnoError, hookDisk } from './disk-hooks'
import { acquireInstanceLock, LOCK_FILE, type InstanceLock } from './instance-lock'

// Taking over a stale lock (issue #9, "one writer"): two Cairns starting together on the lock
// of a process that is gone must never both get it. Found by a reviewer: the first taker's
// clean-up deleted the second's aside copy, which then took its own lock over the first's.

let dir: string
let file: string

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-lock-'))
  file = path.join(dir, LOCK_FILE)
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10 }))

/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!
}

function writeStaleLock(): void {
  const owner = { pid: deadPid(), host: os.hostname(), token: 'dead', since: '' }
  fs.writeFileSync(file, `${JSON.stringify(owner)}\n`)
}

function holds(lock: InstanceLock | null): boolean {
  if (!lock) return false
  try {
    lock.assertHeld()
    return true
  } catch {
    return false
  }
}

function tryAcquire(): InstanceLock | null {
  try {
    return acquireInstanceLock(dir)
  } catch (error) {
    expect(error).toMatchObject({ code: 'locked' })
    return null
  }
}

describe('the check before each commit', () => {
  it('holds only while the file says exactly what this one wrote', () => {
    const lock = acquireInstanceLock(dir)
    const text = fs.readFileSync(file, 'utf8')
    expect(holds(lock)).toBe(true)
    // The same owner with more after it (the check reads one byte past what it expects).
    fs.writeFileSync(file, `${text}more`)
    expect(holds(lock)).toBe(false)
    // Cut short by a byte.
    fs.writeFileSync(file, text.slice(0, -1))
    expect(holds(lock)).toBe(false)
    // The same length, one character changed.
    fs.writeFileSync(file, `${text.slice(0, -2)}x\n`)
    expect(holds(lock)).toBe(false)
    fs.rmSync(file)
    expect(holds(lock)).toBe(false)
    fs.writeFileSync(file, text)
    expect(holds(lock)).toBe(true)
    lock.release()
  })
  it('reads on after a short read, so a whole file read a few bytes at a time is still held', () => {
    const lock = acquireInstanceLock(dir)
    const restore = setDisk({
      ...nodeDisk,
      readSync: (fd, buffer, offset, length, position) =>
        nodeDisk.readSync(fd, buffer, offset, Math.min(length, 10), position),
    })
    try {
      expect(holds(lock)).toBe(true)
      fs.writeFileSync(file, `${fs.readFileSync(file, 'utf8')}more`)
      expect(holds(lock)).toBe(false)
    } finally {
      restore()
    }
    lock.release()
  })

  it('fails a check whose read fails with that error, and leaves no descriptor open', () => {
    const lock = acquireInstanceLock(dir)
    let lockFd = -1
    const { disk } = hookDisk(nodeDisk, (call) => {
      if (call.name === 'openSync' && String(call.args[0]).endsWith(LOCK_FILE)) lockFd = -2
      else if (call.name === 'readSync' && lockFd === -2) return errnoError(call, 'EIO')
      return undefined
    })
    const open = () => fs.readdirSync('/proc/self/fd').length
    const before = open()
    const restore = setDisk(disk)
    try {
      for (let i = 0; i < 20; i++) expect(() => lock.assertHeld()).toThrow(/EIO/)
    } finally {
      restore()
    }
    expect(open()).toBe(before)
    expect(holds(lock)).toBe(true)
    lock.release()
  })
})

describe('what a killed start leaves', () => {
  it('removes a lock temp file however young, so none outlives the next open', () => {
    // A start killed between writing its temp file and linking it as the lock.
    const temp = `${file}.0123456789abcdef.tmp`
    fs.writeFileSync(temp, '')
    const lock = acquireInstanceLock(dir)
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE])
    lock.release()
  })

  it('refuses, as locked, a start whose temp file the holder tidied away before its link', () => {
    let a: InstanceLock | null = null
    const hooked: Disk = Object.create(nodeDisk) as Disk
    hooked.linkSync = (from, to) => {
      if (to === file && a === null) {
        // A starts and takes the lock in the moment between B's write and B's link.
        const restore = setDisk(nodeDisk)
        try {
          a = acquireInstanceLock(dir)
        } finally {
          restore()
        }
      }
      nodeDisk.linkSync(from, to)
    }
    const restore = setDisk(hooked)
    let b: InstanceLock | null
    try {
      b = tryAcquire()
    } finally {
      restore()
    }
    expect(a).not.toBeNull()
    expect(b).toBeNull()
    expect(holds(a)).toBe(true)
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE])
  })
})

describe('taking over a stale lock', () => {
  it('lets only one of two starting instances take it, whichever step the other interrupts', () => {
    writeStaleLock()
    // B is about to change the lock file (its take-over's rename). At that moment A, another
    // starting Cairn, runs its whole start; B's rename lands when A lists the folder for
    // leftovers (right after A made its lock), or after A gave up.
    let a: InstanceLock | null = null
    let ranA = false
    let inA = false
    let pending: (() => void) | null = null
    const hooked: Disk = Object.create(nodeDisk) as Disk
    hooked.renameSync = (from, to) => {
      if (!ranA && !inA && (from === file || to === file)) {
        ranA = true
        pending = () => nodeDisk.renameSync(from, to)
        inA = true
        try {
          a = tryAcquire()
        } finally {
          inA = false
        }
        if (pending) {
          pending()
          pending = null
        }
        return
      }
      nodeDisk.renameSync(from, to)
    }
    hooked.readdirSync = (p) => {
      if (inA && pending) {
        pending()
        pending = null
      }
      return nodeDisk.readdirSync(p)
    }
    const restore = setDisk(hooked)
    let b: InstanceLock | null
    try {
      b = tryAcquire()
    } finally {
      restore()
    }
    expect(ranA).toBe(true)
    // Acquiring is what counts: an instance that acquired opens and may commit at once.
    const acquired = [a, b].filter((lock) => lock !== null)
    expect(acquired).toHaveLength(1)
    expect(holds(acquired[0]!)).toBe(true)
    // Whoever was refused was refused for good: a third start is refused too.
    expect(tryAcquire()).toBeNull()
    const left = fs.readdirSync(dir)
    expect(left).toEqual([LOCK_FILE])
  })

  it('takes it over when the temp file of the failed link could not be removed', () => {
    writeStaleLock()
    // The link fails (the stale lock is in the way) and its temp file's removal fails too (a
    // disk error, ignored): the take-over's own temp file must not run into the one left. (It
    // did, under the same name: open failed with a raw EEXIST naming the host path; found by
    // the fault run's reopen of a folder left with a stale lock.)
    let failed: string | null = null
    const hooked = hookDisk(nodeDisk, (call) => {
      if (failed !== null || call.name !== 'unlinkSync') return undefined
      if (!String(call.args[0]).endsWith('.tmp')) return undefined
      failed = String(call.args[0])
      return errnoError(call, 'EIO')
    })
    const restore = setDisk(hooked.disk)
    let lock: InstanceLock
    try {
      lock = acquireInstanceLock(dir)
    } finally {
      restore()
    }
    expect(failed).toMatch(/^.*\/cairn\.lock\.[0-9a-f-]+\.tmp$/)
    expect(lock.tookOver).toBe(true)
    expect(holds(lock)).toBe(true)
    // The temp file left is tidied away once the lock is held.
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE])
    lock.release()
    expect(fs.readdirSync(dir)).toEqual([])
  })

  it('backs off when the lock changed between reading it and taking it over', () => {
    writeStaleLock()
    // A takes the stale lock over while B has read it but not yet taken it.
    let a: InstanceLock | null = null
    let reads = 0
    const hooked: Disk = Object.create(nodeDisk) as Disk
    hooked.lstatSync = (p) => {
      if (p === file && ++reads === 1) {
        const restore = setDisk(nodeDisk)
        try {
          a = tryAcquire()
        } finally {
          restore()
        }
      }
      return nodeDisk.lstatSync(p)
    }
    const restore = setDisk(hooked)
    let b: InstanceLock | null
    try {
      b = tryAcquire()
    } finally {
      restore()
    }
    expect(holds(a)).toBe(true)
    expect(b).toBeNull()
  })

  it('steps past the take-over mutex of a Cairn killed in the middle of a take-over', () => {
    writeStaleLock()
    // Another Cairn made the mutex for this stale lock and was killed: its mutex is stale too.
    // It is put in place just before this start makes the same one.
    const killed = { pid: deadPid(), host: os.hostname(), token: 'killed', since: '' }
    const mutexes: string[] = []
    const hooked: Disk = Object.create(nodeDisk) as Disk
    hooked.linkSync = (from, to) => {
      if (to.includes('.takeover-') && mutexes.length === 0) {
        fs.writeFileSync(to, `${JSON.stringify(killed)}\n`)
      }
      if (to.includes('.takeover-')) mutexes.push(to)
      nodeDisk.linkSync(from, to)
    }
    const restore = setDisk(hooked)
    let lock: InstanceLock | null
    try {
      lock = tryAcquire()
    } finally {
      restore()
    }
    expect(holds(lock)).toBe(true)
    expect(lock!.tookOver).toBe(true)
    // The killed one's mutex was stepped past (a second, different mutex), then cleaned up.
    expect(new Set(mutexes).size).toBe(2)
    expect(fs.readdirSync(dir)).toEqual([LOCK_FILE])
  })

  it('never lets two of three racing processes hold it (many trials)', async () => {
    const children = Array.from({ length: 3 }, () => startChild())
    try {
      await Promise.all(children.map((child) => child.next()))
      const dead = deadPid()
      let trials = 0
      for (; trials < 80; trials++) {
        const trialDir = path.join(dir, `t${trials}`)
        fs.mkdirSync(trialDir)
        const owner = { pid: dead, host: os.hostname(), token: 'dead', since: '' }
        fs.writeFileSync(path.join(trialDir, LOCK_FILE), `${JSON.stringify(owner)}\n`)
        // All three spin until the same instant, then take the lock.
        const at = Date.now() + 40
        const answers = await Promise.all(
          children.map((child) => {
            child.send({ dir: trialDir, at })
            return child.next()
          }),
        )
        expect(answers.filter((a) => a === 'acquired')).toHaveLength(1)
        expect(answers.filter((a) => a !== 'acquired').every((a) => a === 'locked')).toBe(true)
        // Checked once all three are done: exactly the one that acquired still holds it.
        const held = await Promise.all(
          children.map((child) => {
            child.send('check')
            return child.next()
          }),
        )
        expect(held.filter((h) => h === 'held')).toHaveLength(1)
        expect(held.indexOf('held')).toBe(answers.indexOf('acquired'))
      }
      expect(trials).toBe(80)
    } finally {
      for (const child of children) child.process.kill('SIGKILL')
    }
  })
})

// Stop 32 (mendL): a Cairn in another process namespace (a Flatpak Cairn beside a native one)
// names a pid of that namespace, which this /proc does not show or shows as another process:
// its live lock was taken over, and two Cairns wrote one history.
describe('a lock of a Cairn in another process namespace', () => {
  it('refuses a start outside it while it runs, and after it is gone until a reboot; one from an earlier boot is taken', async () => {
    if (process.getuid?.() !== 0) {
      throw new Error(
        'this test needs root, to run a Cairn in a process namespace of its own (unshare -p)',
      )
    }
    const child = startChild(true)
    try {
      expect(await child.next()).toBe('ready')
      child.send({ dir, at: 0 })
      expect(await child.next()).toBe('acquired')
      const owner = JSON.parse(fs.readFileSync(file, 'utf8')) as { pid: number; pidns: string }
      expect(owner.pid).toBe(1)
      expect(owner.pidns).not.toBe(fs.readlinkSync('/proc/self/ns/pid'))
      // Its process 1 is none of this system's: the refusal says where it runs instead (stop 33;
      // before, "(process 1)").
      expect(() => acquireInstanceLock(dir)).toThrow(
        'Cairn is already open on this data folder (in an app sandbox or a container on this computer, such as Flatpak or Docker).',
      )
      // Gone: its namespace's ids cannot be looked at from here, so it holds until a reboot.
      const gone = new Promise((resolve) => child.process.once('exit', resolve))
      child.process.kill('SIGKILL')
      await gone
      expect(tryAcquire()).toBeNull()
    } finally {
      child.process.kill('SIGKILL')
    }
    // Written before this system started (another boot id alone may be a clone's, running now).
    const beforeBoot = new Date(Date.now() - os.uptime() * 1000 - 3_600_000).toISOString()
    const earlierBoot = fs
      .readFileSync(file, 'utf8')
      .replace(/"boot":"[^"]*"/, '"boot":"earlier"')
      .replace(/"since":"[^"]*"/, `"since":"${beforeBoot}"`)
    fs.writeFileSync(file, earlierBoot)
    const lock = tryAcquire()
    expect(lock?.tookOver).toBe(true)
    expect(holds(lock)).toBe(true)
    lock!.release()
  }, 60_000)
})

interface Child {
  readonly process: ChildProcessWithoutNullStreams
  send(message: unknown): void
  next(): Promise<string>
}

/**
 * A process that takes the lock of the folder it is sent, at the instant it is sent; with
 * `ownPidNamespace`, in a process namespace of its own (`unshare -p`, as root), where it is pid 1.
 */
function startChild(ownPidNamespace = false): Child {
  const script = `
    const { acquireInstanceLock } = await import(${JSON.stringify(path.resolve('src/main/lib/instance-lock.ts'))})
    const { createInterface } = await import('node:readline')
    let lock = null
    process.stdout.write('ready\\n')
    for await (const line of createInterface({ input: process.stdin })) {
      const message = JSON.parse(line)
      if (message === 'check') {
        let held = 'none'
        if (lock) { try { lock.assertHeld(); held = 'held' } catch { held = 'lost' } }
        lock?.release()
        lock = null
        process.stdout.write(held + '\\n')
        continue
      }
      while (Date.now() < message.at) {}
      try { lock = acquireInstanceLock(message.dir); process.stdout.write('acquired\\n') }
      catch (error) { process.stdout.write((error.code ?? String(error)) + '\\n') }
    }
  `
  const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e', script]
  const unshare = ['unshare', '-p', '-f', '--mount-proc', '--kill-child']
  const [command, ...args] = ownPidNamespace ? [...unshare, ...node] : node
  const child = spawn(command!, args, { stdio: ['pipe', 'pipe', 'pipe'] })
  const lines: string[] = []
  const waiting: ((line: string) => void)[] = []
  createInterface({ input: child.stdout }).on('line', (line) => {
    const resolve = waiting.shift()
    if (resolve) resolve(line)
    else lines.push(line)
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  child.once('exit', (code, signal) => {
    if (signal !== 'SIGKILL') {
      for (const resolve of waiting.splice(0)) resolve(`exited (${code}): ${stderr}`)
    }
  })
  return {
    process: child,
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    next: () =>
      new Promise((resolve) => {
        const line = lines.shift()
        if (line !== undefined) resolve(line)
        else waiting.push(resolve)
      }),
  }
}
