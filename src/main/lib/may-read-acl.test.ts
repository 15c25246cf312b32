import { execFileSync } from 'node:child_process'
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

// hunt13-followups D4: a memory folder another account shares through a POSIX ACL (mode 0700,
// root's, with `u:nobody:rwx`) was named unreadable by its mode bits, though the kernel lets
// Cairn read and write it: `view /memories` said "cannot be read", and the person's edits
// there were never committed. Cairn runs as `nobody` here (a real account, a real ACL).
const CHILD = path.resolve('test/acl/acl-child.ts')
const NOBODY = 65534
const hasTools = (() => {
  try {
    execFileSync('setfacl', ['--version'], { stdio: 'ignore' })
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' })
    return process.getuid?.() === 0
  } catch {
    return false
  }
})()

let dataDir: string
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-acl-'))
  await chown(dataDir, NOBODY, NOBODY)
})
afterEach(() => rm(dataDir, { recursive: true, force: true }))

function asNobody(...args: string[]): string {
  return execFileSync(
    'setpriv',
    [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      '--clear-groups',
      'env',
      `HOME=${dataDir}`,
      `TMPDIR=${dataDir}`,
      ...args,
    ],
    { encoding: 'utf8', cwd: process.cwd() },
  )
}

describe.skipIf(!hasTools)(
  'a memory folder shared through a POSIX ACL (needs root, setfacl)',
  () => {
    it(
      'is listed as readable, and the person’s edit there is committed',
      { timeout: 120_000 },
      async () => {
        const child = (step: string) =>
          asNobody(process.execPath, '--import', 'tsx', CHILD, dataDir, step)
        child('make')
        const shared = path.join(dataDir, 'memories', 'shared')
        await chown(shared, 0, 0)
        await chmod(shared, 0o700)
        execFileSync('setfacl', ['-m', `u:${NOBODY}:rwx`, shared])
        // The mode bits say no to nobody; the kernel says yes.
        expect(execFileSync('getfacl', ['-cpn', shared], { encoding: 'utf8' })).toContain(
          `user:${NOBODY}:rwx`,
        )
        await writeFile(path.join(shared, 'notes.md'), 'edited by the person\n')
        const seen = JSON.parse(child('check').trim().split('\n').at(-1) as string) as {
          view: unknown
          afterOpen: string
          afterCommit: string
        }
        expect(JSON.stringify(seen.view)).toContain('shared/')
        expect(JSON.stringify(seen.view)).not.toContain('cannot be read')
        expect(seen.afterOpen).toBe('edited by the person\n')
        expect(seen.afterCommit).toBe('edited by the person\n')
      },
    )
  },
)
