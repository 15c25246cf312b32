import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from './disk'
import { hookDisk } from './disk-hooks'
import { CairnError } from './errors'
import { acquireInstanceLock, LOCK_FILE, LOCK_SETTLE_MS, type InstanceLock } from './instance-lock'

// Every commit asks whether this instance still holds its data folder. Once the lock file's
// last change is older than any file system's timestamp step, an unchanged lstat answers
// instead of a read; these check that every way the lock can be taken still shows.

let root: string
const held: InstanceLock[] = []

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-lock-'))
})
afterEach(() => {
  for (const lock of held.splice(0)) lock.release()
  fs.rmSync(root, { recursive: true, force: true })
})

function lockIn(name: string): { lock: InstanceLock; file: string } {
  const dataDir = path.join(root, name)
  fs.mkdirSync(dataDir)
  const lock = acquireInstanceLock(dataDir)
  held.push(lock)
  return { lock, file: path.join(dataDir, LOCK_FILE) }
}

/** Waits (in real time) until every file's last change is older than `LOCK_SETTLE_MS`. */
async function settle(files: ReadonlyArray<string>): Promise<void> {
  const newest = Math.max(...files.map((file) => fs.lstatSync(file).ctimeMs))
  const left = newest + LOCK_SETTLE_MS + 50 - Date.now()
  if (left > 0) await new Promise((resolve) => setTimeout(resolve, left))
}

/** Reads of `file` made through the disk seam while `run` runs. */
function readsOf(file: string, run: () => void): number {
  let reads = 0
  const { disk } = hookDisk(nodeDisk, (call) => {
    if (call.name === 'readFileSync' && call.args[0] === file) reads++
  })
  const restore = setDisk(disk)
  try {
    run()
  } finally {
    restore()
  }
  return reads
}

function expectTaken(lock: InstanceLock): void {
  let error: unknown = null
  try {
    lock.assertHeld()
  } catch (caught) {
    error = caught
  }
  expect(error).toBeInstanceOf(CairnError)
  expect(error).toMatchObject({ code: 'locked' })
}

// A lock of another instance, as long as this one's (the same host and pid digits, a token).
function otherText(file: string): string {
  const mine = fs.readFileSync(file, 'utf8')
  const other = mine.replace(/"token":"([0-9a-f]+)"/, (_, token: string) => {
    const flipped = token.replace(/./g, (digit) => (digit === '0' ? '1' : '0'))
    return `"token":"${flipped}"`
  })
  expect(other).not.toBe(mine)
  expect(other.length).toBe(mine.length)
  return other
}

describe('the instance lock check', () => {
  it('reads the lock until its last change has settled, then trusts an unchanged lstat', async () => {
    const { lock, file } = lockIn('a')
    expect(readsOf(file, () => lock.assertHeld())).toBe(1)
    await settle([file])
    expect(readsOf(file, () => lock.assertHeld())).toBe(1)
    expect(readsOf(file, () => [1, 2, 3].forEach(() => lock.assertHeld()))).toBe(0)
    // The checkpoint's check (before emptying the write-ahead log) always reads.
    expect(readsOf(file, () => lock.assertHeldByContent())).toBe(1)
    // Times changed with the text kept (a backup tool restoring it, a touch): read again, held.
    fs.utimesSync(file, new Date(), new Date())
    expect(readsOf(file, () => lock.assertHeld())).toBe(1)
  })

  it('catches, after the lstat is trusted, a takeover, a rewrite in place and a removal', async () => {
    const takeover = lockIn('takeover')
    const rewrite = lockIn('rewrite')
    const removal = lockIn('removal')
    const all = [takeover, rewrite, removal]
    await settle(all.map(({ file }) => file))
    for (const { lock, file } of all) {
      lock.assertHeld()
      expect(readsOf(file, () => lock.assertHeld())).toBe(0)
    }
    // As another Cairn takes a lock over: this one renamed aside and removed (its inode free
    // for reuse), a lock of the same size linked in from a temp file.
    const aside = `${takeover.file}.stale-test`
    const other = otherText(takeover.file)
    fs.renameSync(takeover.file, aside)
    fs.unlinkSync(aside)
    fs.writeFileSync(`${takeover.file}.tmp-test`, other)
    fs.linkSync(`${takeover.file}.tmp-test`, takeover.file)
    fs.unlinkSync(`${takeover.file}.tmp-test`)
    expectTaken(takeover.lock)
    // The same inode, the same size, other text.
    fs.writeFileSync(rewrite.file, otherText(rewrite.file))
    expectTaken(rewrite.lock)
    fs.rmSync(removal.file)
    expectTaken(removal.lock)
  })
})
