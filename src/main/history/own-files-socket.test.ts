import { execFileSync } from 'node:child_process'
import { lstatSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { expect, it } from 'vitest'
import { errorCode, isNotPlainFile, readPlainFile } from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { COMMAND_INTENT_FILE } from './command-intent'
import { commitCount, fsck, recoveryRepo } from './test-helpers'

// disk30: a socket at one of Cairn's own files. Its open fails with ENXIO, which was taken for
// an I/O error, not damage: a socket at the note of a command in flight was never kept aside,
// so every later command's note failed (logged each time). It is now damage as a fifo is.

const repo = recoveryRepo()

// A unix socket at `file`, left behind by the process that bound it.
function socketAt(file: string): void {
  execFileSync('python3', [
    '-c',
    'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])',
    file,
  ])
  expect(lstatSync(file).isSocket()).toBe(true)
}

it('a socket at an own file is damage, not an I/O error', async () => {
  const memory = await repo.open()
  await memory.close()
  const file = path.join(repo.gitdir, 'cairn-socket')
  socketAt(file)
  let error: unknown
  try {
    readPlainFile(file, OWN_FILE_CAP.TINY)
  } catch (thrown) {
    error = thrown
  }
  expect(errorCode(error)).toBe('ENXIO')
  expect(isNotPlainFile(error)).toBe(true)
})

it('a socket at the note of a command in flight is kept aside, and open goes on', async () => {
  const memory = await repo.open()
  await repo.create(memory, 'notes.md', 'notes\n')
  await memory.close()
  const note = path.join(repo.gitdir, COMMAND_INTENT_FILE)
  socketAt(note)
  const again = await repo.open()
  await repo.create(again, 'after.md', 'after\n')
  await again.close()
  expect(commitCount(repo.dataDir)).toBe(2)
  const kept = readdirSync(path.join(repo.gitdir, 'cairn-damaged'))
  expect(kept.filter((name) => name.startsWith(`${COMMAND_INTENT_FILE}-`))).toHaveLength(1)
  expect(fsck(repo.dataDir)).not.toMatch(/error|missing|broken/i)
})

// Untried last stop: the second log file a fifo, and a socket at the first. Both were read
// in the code (one check for either file), never run.
it('a fifo at cairn-wal-1 and a socket at cairn-wal-0: both kept aside, a fresh log', async () => {
  const memory = await repo.open()
  await repo.create(memory, 'notes.md', 'notes\n')
  await memory.close()
  const logs = ['cairn-wal-0', 'cairn-wal-1'].map((name) => path.join(repo.gitdir, name))
  for (const log of logs) execFileSync('rm', ['-f', log])
  socketAt(logs[0]!)
  execFileSync('mkfifo', [logs[1]!])
  const again = await repo.open()
  await repo.create(again, 'after.md', 'after\n')
  await again.close()
  expect(commitCount(repo.dataDir)).toBe(2)
  const kept = readdirSync(path.join(repo.gitdir, 'cairn-damaged')).sort()
  expect(kept.map((name) => name.replace(/-\d+$/, ''))).toEqual(['cairn-wal-0', 'cairn-wal-1'])
  expect(fsck(repo.dataDir)).not.toMatch(/error|missing|broken/i)
})
