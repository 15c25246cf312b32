import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk } from '../lib/disk-hooks'
import { FolderTree } from '../lib/folders'
import { createRecordingLogger } from '../lib/logger'
import { GIVEN_UP_FILE, givenUpRestore, RESTORE_INTENT_FILE } from './restore-intent'
import { folderFiles, fsck, gitCli, headFiles, recoveryRepo } from './test-helpers'
import { writeFileSafely } from './work-tree'

// A crafted restore intent (`history.git/cairn-restore`) is only data: open replayed its
// changes as they were, and a `..` in a path deleted and wrote files beside the memory folder
// (review hunt10 D4).

const repo = recoveryRepo()
const outside: string[] = []
afterEach(async () => {
  for (const dir of outside.splice(0))
    await rm(dir, { recursive: true, force: true, maxRetries: 10 })
})

const blobOid = (text: string) =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(text)}\0${text}`)
    .digest('hex')

function victimFolder(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-victim-'))
  outside.push(dir)
  writeFileSync(path.join(dir, 'precious.txt'), 'precious\n')
  return dir
}

async function openWithIntent(deltas: unknown[], paths: unknown = ['n1.md']) {
  const memory = await repo.open()
  await repo.create(memory, 'n1.md', 'payload\n')
  await memory.close()
  const base = gitCli(repo.dataDir, 'rev-parse', 'main').trim()
  const record = {
    version: 1,
    base,
    deltas,
    paths,
    intent: {
      actor: 'user',
      command: 'restore-all',
      subject: 'Restored',
      conversationId: null,
      toolUseId: null,
      overwrite: false,
      restoredFrom: null,
    },
  }
  writeFileSync(path.join(repo.gitdir, RESTORE_INTENT_FILE), JSON.stringify(record))
  const again = await repo.open()
  try {
    expect(existsSync(path.join(repo.gitdir, RESTORE_INTENT_FILE))).toBe(false)
    expect(gitCli(repo.dataDir, 'rev-parse', 'main').trim()).toBe(base)
    expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
  } finally {
    await again.close()
  }
  fsck(repo.dataDir)
}

describe('a crafted restore intent (D4)', () => {
  it('is dropped when a path leaves the memory folder: nothing outside is deleted or written', async () => {
    const victim = victimFolder()
    const up = path.relative(path.join(repo.dataDir, 'memories'), victim)
    const payload = blobOid('payload\n')
    await openWithIntent([
      { path: `${up}/precious.txt`, before: blobOid('precious\n'), after: null },
      { path: `${up}/planted.sh`, before: null, after: payload },
    ])
    expect(readFileSync(path.join(victim, 'precious.txt'), 'utf8')).toBe('precious\n')
    expect(existsSync(path.join(victim, 'planted.sh'))).toBe(false)
  })

  it('is dropped for a blob id that is not one, a .git name or a bad commit path', async () => {
    const payload = blobOid('payload\n')
    await openWithIntent([{ path: 'x.md', before: null, after: '../../etc/passwd' }])
    await openWithIntent([{ path: '.git/config', before: null, after: payload }])
    await openWithIntent([{ path: 'x.md', before: null, after: payload }], ['../x.md'])
    expect(existsSync(path.join(repo.dataDir, 'memories', 'x.md'))).toBe(false)
    expect(existsSync(path.join(repo.dataDir, 'memories', '.git'))).toBe(false)
  })
})

describe('FolderTree refuses names that leave the folder (backstop)', () => {
  it('refuses .. and . segments on find and on write', async () => {
    const victim = victimFolder()
    const root = mkdtempSync(path.join(os.tmpdir(), 'cairn-root-'))
    outside.push(root)
    const up = path.relative(root, victim)
    mkdirSync(path.join(root, 'a'))
    const tree = new FolderTree(root)
    try {
      expect(() => tree.find(`${up}/precious.txt`)).toThrow(/leaves its folder/)
      expect(() => tree.find('a/./b.md')).toThrow(/leaves its folder/)
      await expect(writeFileSafely(tree, `${up}/planted.sh`, Buffer.from('x'))).rejects.toThrow(
        /leaves its folder/,
      )
    } finally {
      tree.close()
    }
    expect(existsSync(path.join(victim, 'planted.sh'))).toBe(false)
  })
})

/** A give-up note naming n1.md; its path. */
function writeGivenUpNote(): string {
  const note = path.join(repo.gitdir, GIVEN_UP_FILE)
  writeFileSync(note, JSON.stringify({ version: 1, path: 'n1.md' }))
  return note
}

/** Makes every `readFileSync` of `file` fail with `code` until the returned call. */
function refuseReads(file: string, code: string): () => void {
  return setDisk(
    hookDisk(nodeDisk, (call) =>
      (call.name === 'readFileSync' || call.name === 'openSync') && call.args[0] === file
        ? errnoError(call, code)
        : undefined,
    ).disk,
  )
}

// The fault-injection run: a read of the give-up note that failed (EIO, EACCES, EMFILE) made
// open throw after its commit was made. The note is advisory: open goes on without it.
describe('the note of a given-up restore that cannot be read at open', () => {
  for (const code of ['EIO', 'EMFILE', 'ENOSPC']) {
    it(`does not fail open (${code}): the note stays and is told by the next open`, async () => {
      const memory = await repo.open()
      await repo.create(memory, 'n1.md', 'one\n')
      await memory.close()
      const note = writeGivenUpNote()
      // An outside edit: open commits it before it reads the note.
      writeFileSync(path.join(repo.dataDir, 'memories', 'outside.md'), 'outside\n')
      const given = 'An interrupted restore could not be finished'
      const restore = refuseReads(note, code)
      let first: string[]
      try {
        const opened = await repo.open()
        first = opened.notices().map((notice) => notice.message)
        await opened.close()
      } finally {
        restore()
      }
      expect(first.some((message) => message.includes(given))).toBe(false)
      expect(existsSync(note)).toBe(true)
      expect(headFiles(repo.dataDir)).toEqual(await folderFiles(repo.dataDir))
      expect(gitCli(repo.dataDir, 'show', 'main:outside.md')).toBe('outside\n')

      const again = await repo.open()
      const second = again.notices().map((notice) => notice.message)
      await again.close()
      expect(second).toEqual([expect.stringContaining(given)])
      expect(existsSync(note)).toBe(false)
      fsck(repo.dataDir)
    })
  }

  // Review R4: a note the disk refuses lastingly was kept and warned about at every start,
  // never told. It is dropped with a warning; the history is whole without it.
  for (const code of ['EACCES', 'EPERM', 'EBUSY']) {
    it(`drops a note the disk refuses lastingly (${code}), with a warning, and opens`, async () => {
      const memory = await repo.open()
      await repo.create(memory, 'n1.md', 'one\n')
      await memory.close()
      const note = writeGivenUpNote()
      const logger = createRecordingLogger()
      const restore = refuseReads(note, code)
      try {
        expect(givenUpRestore(repo.gitdir, logger)).toBeNull()
      } finally {
        restore()
      }
      expect(existsSync(note)).toBe(false)
      expect(logger.entries).toEqual([
        {
          level: 'warn',
          message: `the note of a given-up restore could not be read (${code}); dropped`,
          error: undefined,
        },
      ])
      expect(logger.entries[0]!.message).not.toContain(repo.dataDir)
      const again = await repo.open()
      const told = again.notices().map((notice) => notice.message)
      await again.close()
      expect(told).toEqual([])
      fsck(repo.dataDir)
    })
  }
})
