/**
 * A sync whose move the folder refuses for good (a folder Cairn may not write, a file held
 * open by another program, a disk too small for the other machine's file, a file Cairn may
 * not read) is undone, says which file in virtual paths, and never leaves its move note
 * behind to stop Cairn from opening (review hunt11 D1). A failed move puts a file it kept
 * aside for an editor's save back under its own name (D6). Real data folders, a real git
 * server on loopback; the refusals come through the disk seam, as the system gives them to
 * any account but root.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ApiErrorData } from '../../shared/types'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk, type DiskCall } from '../lib/disk-hooks'
import { expectSound, type Machine, useSyncServer } from './test-support'

const sync = useSyncServer()
const { machine } = sync
let work: string
beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'cairn-move-refused-'))
})
afterAll(async () => {
  await rm(work, { recursive: true, force: true, maxRetries: 10 })
})

/** Runs `task` with the disk seam failing the calls `fail` picks (with its errno). */
async function withDisk<T>(
  fail: (call: DiskCall) => string | undefined,
  task: () => Promise<T>,
): Promise<T> {
  const undo = setDisk(
    hookDisk(nodeDisk, (call) => {
      const code = fail(call)
      return code ? errnoError(call, code) : undefined
    }).disk,
  )
  try {
    return await task()
  } finally {
    undo()
  }
}

const renameOnto = (call: DiskCall, name: string): boolean =>
  call.name === 'renameSync' && String(call.args[1]).endsWith(`/${name}`)

/** Both machines hold `files`; the laptop's data folder is one a test can open again. */
async function pair(files: Record<string, string>) {
  const repo = sync.newRepo('refused')
  const dir = await mkdtemp(path.join(work, 'laptop-'))
  const laptop = await machine('laptop', dir)
  const desktop = await machine('desktop')
  for (const [file, text] of Object.entries(files)) await desktop.write(file, text)
  await desktop.connect(sync.server, repo)
  await desktop.sync()
  await laptop.connect(sync.server, repo)
  expect((await laptop.sync()).state).toBe('idle')
  return { repo, dir, laptop, desktop }
}

const noteOf = (dir: string) => path.join(dir, 'history.git', 'cairn-move.json')

async function expectNoNote(dir: string): Promise<void> {
  await expect(stat(noteOf(dir))).rejects.toThrow(/ENOENT/)
}

async function reopen(laptop: Machine): Promise<Machine> {
  await sync.stop(laptop)
  return machine('laptop', laptop.dir)
}

describe('a sync move the folder refuses for good', () => {
  for (const code of ['EACCES', 'EPERM', 'EBUSY']) {
    it(`(${code} writing a file) is undone, names the file, and Cairn opens again`, async () => {
      const { repo, dir, laptop, desktop } = await pair({ 'shared/notes.md': 'one\n' })
      await desktop.write('shared/notes.md', 'one\ntwo\n')
      await desktop.sync()
      const head = laptop.git('rev-parse', 'main')

      const status = await withDisk(
        (call) => (renameOnto(call, 'notes.md') ? code : undefined),
        () => laptop.sync(),
      )
      expect(status.state).toBe('error')
      expect(status.error?.message).toContain('/memories/shared/notes.md could not be written')
      expect(status.error?.message).toContain('Nothing was changed')
      expect(status.error?.message).not.toContain(dir)
      expect(laptop.git('rev-parse', 'main')).toBe(head)
      expect((await laptop.files()).get('shared/notes.md')).toBe('one\n')
      await expectNoNote(dir)

      const again = await reopen(laptop)
      expect((await again.sync()).state).toBe('idle')
      expect((await again.files()).get('shared/notes.md')).toBe('one\ntwo\n')
      await expectSound(sync.server, repo, [again, desktop])
    })
  }

  it('(a disk too small for the file) is undone, says which file and its size', async () => {
    const { repo, dir, laptop, desktop } = await pair({ 'a.md': 'a\n' })
    await desktop.write('export.md', 'x'.repeat(900 * 1024))
    await desktop.sync()

    const status = await withDisk(
      (call) => (renameOnto(call, 'export.md') ? 'ENOSPC' : undefined),
      () => laptop.sync(),
    )
    expect(status.error?.code).toBe('disk-full')
    expect(status.error?.message).toContain('/memories/export.md (it takes 900 KiB)')
    expect((await laptop.files()).has('export.md')).toBe(false)
    await expectNoNote(dir)

    const again = await reopen(laptop)
    expect((await again.sync()).state).toBe('idle')
    expect((await again.files()).get('export.md')).toHaveLength(900 * 1024)
    await expectSound(sync.server, repo, [again, desktop])
  })

  it('keeps aside a file Cairn may not read, instead of failing the move', async () => {
    const { repo, dir, laptop, desktop } = await pair({ 'private.md': 'secret\n' })
    await desktop.write('private.md', 'secret\nmore\n')
    await desktop.sync()
    // The laptop's copy was changed by another account and cannot be read (mode 000). Its
    // size is that of history's version, so the move must read it to know.
    writeFileSync(path.join(dir, 'memories', 'private.md'), 'theirs\n')

    const denied = (call: DiskCall) =>
      call.name === 'openSync' && String(call.args[0]).endsWith('/private.md')
        ? 'EACCES'
        : undefined
    const status = await withDisk(denied, () => laptop.sync())
    expect(status.error).toBeUndefined()
    expect(status.state).toBe('idle')
    const files = await laptop.files()
    expect(files.get('private.md')).toBe('secret\nmore\n')
    expect(files.get('private (unreadable).md')).toBe('theirs\n')
    await expectNoNote(dir)
    expect((await laptop.sync()).state).toBe('idle')
    await expectSound(sync.server, repo, [laptop, desktop])
  })

  it('drops at open a move note whose folder still refuses, keeping every file', async () => {
    const { repo, dir, laptop, desktop } = await pair({ 'a.md': 'a\n', 'shared/notes.md': 'one\n' })
    await desktop.write('a.md', 'a\ndesktop\n')
    await desktop.write('shared/notes.md', 'one\ntwo\n')
    await desktop.sync()

    // The folder refuses notes.md for good, and a.md's putting back too: the move could not
    // be undone, so its note stays for the next start.
    let refused = false
    const refuse = (call: DiskCall) => {
      if (renameOnto(call, 'notes.md')) {
        refused = true
        return 'EACCES'
      }
      return refused && renameOnto(call, 'a.md') ? 'EACCES' : undefined
    }
    const status = await withDisk(refuse, () => laptop.sync())
    expect(status.error?.code).toBe('access-denied')
    await stat(noteOf(dir))
    await sync.stop(laptop)

    // Still refused at the next start: Cairn opens anyway, the move dropped, every file kept.
    const again = await withDisk(
      (call) => (renameOnto(call, 'notes.md') ? 'EACCES' : undefined),
      () => machine('laptop', dir),
    )
    await expectNoNote(dir)
    const files = await again.files()
    expect(files.get('a.md')).toBe('a\ndesktop\n')
    expect(files.get('shared/notes.md')).toBe('one\n')
    expect((await again.sync()).state).toBe('idle')
    expect((await again.files()).get('shared/notes.md')).toBe('one\ntwo\n')
    await expectSound(sync.server, repo, [again, desktop])
  })
})

describe('a sync move that fails after keeping an editor’s save aside (D6)', () => {
  it('puts the save back under its name and says what happened', async () => {
    const { repo, dir, laptop, desktop } = await pair({
      'notes.md': 'line1\nline2\nline3\n',
      'zz.md': 'z\n',
    })
    await desktop.write('notes.md', 'line1\nline2\nline3 desktop\n')
    await desktop.write('zz.md', 'z desktop\n')
    await desktop.sync()

    const EDIT = 'line1 typed in the editor during the sync\nline2\nline3\n'
    const notes = path.join(dir, 'memories', 'notes.md')
    let saved = false
    let failed = false
    const status = await withDisk(
      (call) => {
        if (!saved && renameOnto(call, 'cairn-move.json')) {
          // The editor saves as the note lands, before the folder is written.
          saved = true
          writeFileSync(notes, EDIT)
        }
        if (saved && !failed && renameOnto(call, 'zz.md')) {
          failed = true
          return 'ENOSPC'
        }
        return undefined
      },
      () => laptop.sync(),
    )
    expect(failed).toBe(true)
    expect(status.error?.code).toBe('disk-full')
    expect(status.error?.message).toContain('Nothing was changed')
    expect(await readFile(notes, 'utf8')).toBe(EDIT)
    expect((await readdir(path.join(dir, 'memories'))).sort()).toEqual(['notes.md', 'zz.md'])
    await expectNoNote(dir)

    // The next sync saves the edit and merges it with the desktop's.
    expect((await laptop.sync()).state).toBe('idle')
    expect(await readFile(notes, 'utf8')).toBe(
      'line1 typed in the editor during the sync\nline2\nline3 desktop\n',
    )
    await expectSound(sync.server, repo, [laptop, desktop])
  })
})

describe('a sync move refused while keeping a file aside (review11 N3)', () => {
  it('names the file the folder would not move aside, not the one written before it', async () => {
    const { dir, laptop, desktop } = await pair({ 'a.md': 'a\n', 'shared/notes.md': 'one\n' })
    await desktop.write('a.md', 'a desktop\n')
    await desktop.write('shared/notes.md', 'one\ntwo\n')
    await desktop.sync()

    const notes = path.join(dir, 'memories', 'shared', 'notes.md')
    let saved = false
    let refused = false
    const status = await withDisk(
      (call) => {
        if (!saved && renameOnto(call, 'cairn-move.json')) {
          saved = true
          writeFileSync(notes, 'EDITOR SAVE\n')
        }
        // The folder refuses the rename that moves the save out of the way.
        if (
          saved &&
          call.name === 'renameSync' &&
          String(call.args[0]).endsWith('/notes.md') &&
          !String(call.args[1]).endsWith('/notes.md')
        ) {
          refused = true
          return 'EACCES'
        }
        return undefined
      },
      () => laptop.sync(),
    )
    expect(refused).toBe(true)
    expect(status.error?.code).toBe('access-denied')
    expect(status.error?.message).toContain('/memories/shared/notes.md could not be written')
    expect(status.error?.message).not.toContain('/memories/a.md')
    expect(status.error?.message).toContain('Nothing was changed')
    expect(await readFile(notes, 'utf8')).toBe('EDITOR SAVE\n')
    expect(await readFile(path.join(dir, 'memories', 'a.md'), 'utf8')).toBe('a\n')
    await expectNoNote(dir)
  })

  it('names a folder Cairn may not enter', async () => {
    const { dir, laptop, desktop } = await pair({ 'shared/deep/notes.md': 'one\n' })
    await desktop.write('shared/deep/notes.md', 'one\ntwo\n')
    await desktop.sync()

    let noted = false
    const status = await withDisk(
      (call) => {
        if (renameOnto(call, 'cairn-move.json')) noted = true
        if (noted && call.name === 'openSync' && String(call.args[0]).endsWith('/deep')) {
          return 'EACCES'
        }
        return undefined
      },
      () => laptop.sync(),
    )
    expect(noted).toBe(true)
    expect(status.error?.code).toBe('access-denied')
    expect(status.error?.message).toContain(
      'because the folder /memories/shared/deep could not be opened: permission was denied',
    )
    expect(status.error?.message).not.toContain(dir)
    expect(await readFile(path.join(dir, 'memories', 'shared', 'deep', 'notes.md'), 'utf8')).toBe(
      'one\n',
    )
    await expectNoNote(dir)
  })
})

const deniedChild = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../test/fixtures/denied-folder-child.ts',
)

// The account the child runs as: this process's own when it is not root (the system then
// denies a mode-000 folder to it), else \`nobody\` when this process may switch to it (root
// outside a restricted container) and that account can read the sources; null when neither.
function unprivileged(): { uid?: number; gid?: number } | null {
  if (process.getuid?.() !== 0) return {}
  const as = { uid: 65534, gid: 65534 }
  const probe = spawnSync(
    process.execPath,
    ['-e', `require('fs').accessSync(${JSON.stringify(deniedChild)})`],
    { ...as, stdio: 'ignore' },
  )
  return probe.status === 0 ? as : null
}

// A real folder at mode 000 (root enters any folder, so the machine runs as another account):
// the move's check of what stands in its way, and a command's check for outside edits, failed
// on it saying only "permission was denied" (review11-fixsync2 R4).
describe('a memory folder Cairn may not enter', () => {
  const account = unprivileged()
  it.runIf(account !== null)(
    'is named as a /memories path when a sync or a command meets it',
    async () => {
      const repo = sync.newRepo('denied')
      // Not under \`work\`: the other account must reach it.
      const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-denied-'))
      try {
        const laptop = await machine('laptop', dir)
        const desktop = await machine('desktop')
        await desktop.write('a.md', 'a\n')
        await desktop.write('shared/notes.md', 'one\n')
        await desktop.connect(sync.server, repo)
        await desktop.sync()
        await laptop.connect(sync.server, repo)
        expect((await laptop.sync()).state).toBe('idle')
        const head = laptop.git('rev-parse', 'main')
        await sync.stop(laptop)
        await desktop.write('a.md', 'a desktop\n')
        await desktop.write('shared/notes.md', 'one\ndesktop\n')
        await desktop.sync()

        // The laptop, as the other account, with shared/ at mode 000.
        const { uid, gid } = account!
        if (uid !== undefined) execFileSync('chown', ['-R', `${uid}:${gid}`, dir])
        const lines = await runChild(dir, account!)
        if (uid !== undefined) {
          execFileSync('chown', ['-R', `${process.getuid!()}:${process.getgid!()}`, dir])
        }
        const said = new Map(
          lines.map((line) => {
            const { step, error } = JSON.parse(line) as { step: string; error: ApiErrorData }
            return [step, error]
          }),
        )
        expect([...said.keys()]).toEqual(['sync', 'write'])
        for (const [step, error] of said) {
          expect(error?.code, step).toBe('access-denied')
          expect(error?.message, step).toContain('/memories/shared')
          expect(error?.message, step).not.toContain(dir)
          expect(error?.message, step).not.toContain('/proc/')
          expect(error?.message, step).toContain('Nothing was changed')
        }

        // Nothing changed; with the folder open again, the next sync completes.
        const again = await machine('laptop', dir)
        expect(again.git('rev-parse', 'main')).toBe(head)
        expect((await again.files()).get('shared/notes.md')).toBe('one\n')
        expect((await again.sync()).state).toBe('idle')
        expect((await again.files()).get('shared/notes.md')).toBe('one\ndesktop\n')
        await expectSound(sync.server, repo, [again, desktop])
        await sync.stop(again)
      } finally {
        await rm(dir, { recursive: true, force: true, maxRetries: 10 })
      }
    },
    120_000,
  )
})

/** Runs the denied-folder child on \`dataDir\` as \`account\`; the lines of JSON it printed. */
function runChild(dataDir: string, account: { uid?: number; gid?: number }): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', deniedChild, dataDir, 'laptop', 'shared'],
      { ...account, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, HOME: dataDir } },
    )
    let out = ''
    let errors = ''
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    proc.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()))
    proc.on('error', reject)
    proc.on('exit', (code) => {
      if (code === 0) resolve(out.trim().split('\n'))
      else reject(new Error(`the child failed (${code}): ${errors.slice(0, 2000)}`))
    })
  })
}
