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
afterEach(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10 }))

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

// rfirst30: the other way round. A file of another account whose mode bits let everyone read
// it, and an ACL entry that refuses this account by name (`u:nobody:---`):
// the bits said readable and the kernel said no, so the tree listed it as a file to open and
// history's scans, told it was readable, failed on it instead of keeping its last version.
describe.skipIf(!hasTools)(
  'a file an ACL refuses to this account by name (needs root, setfacl)',
  () => {
    it('is named unreadable, as the kernel tells', { timeout: 120_000 }, async () => {
      await chmod(dataDir, 0o755)
      const byUser = path.join(dataDir, 'refused-by-name.md')
      const plain = path.join(dataDir, 'plain.md')
      const folder = path.join(dataDir, 'refused-folder')
      for (const file of [byUser, plain]) {
        await writeFile(file, 'text\n')
        await chmod(file, 0o644)
      }
      execFileSync('mkdir', ['-m', '755', folder])
      execFileSync('setfacl', ['-m', `u:${NOBODY}:---`, byUser])
      execFileSync('setfacl', ['-m', `u:${NOBODY}:---`, folder])
      const answers = JSON.parse(
        execFileSync(
          'setpriv',
          [
            `--reuid=${NOBODY}`,
            `--regid=${NOBODY}`,
            `--groups=${NOBODY}`,
            process.execPath,
            '--import',
            'tsx',
            path.resolve('test/acl/may-read-child.ts'),
            byUser,
            plain,
            folder,
          ],
          { encoding: 'utf8', cwd: process.cwd() },
        )
          .trim()
          .split('\n')
          .at(-1) as string,
      ) as Array<{ mayNotRead: boolean; kernel: string }>
      // The kernel, the second opinion: refused, read, refused.
      expect(answers.map((a) => a.kernel)).toEqual(['EACCES', 'read', 'EACCES'])
      expect(answers.map((a) => a.mayNotRead)).toEqual([true, false, true])
    })
  },
)
