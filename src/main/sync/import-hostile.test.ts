/**
 * Imports of hostile archives (issue #14's acceptance check): names that would leave memory
 * or replace another file of the archive, and credentials. Each import is one commit by You
 * that lists every file left out and why, or a clear error that changes nothing; no file of
 * the archive is ever dropped without being named.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { writeZip } from './zip'
import { dialogHost, linesOfHistory, startMachine, type Machine } from './test-support'

const GITHUB_TOKEN = ['ghp', 'wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx'].join('_')

let scratch: string
let machines: Machine[] = []

beforeEach(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'cairn-import-hostile-'))
})
afterEach(async () => {
  await Promise.all(machines.map((m) => m.close()))
  machines = []
  await rm(scratch, { recursive: true, force: true, maxRetries: 10 })
})

async function machine() {
  const host = dialogHost()
  const m = await startMachine('laptop', { host })
  machines.push(m)
  await m.write('keep.md', 'keep\n')
  return { m, host }
}

async function zipOf(name: string, entries: Array<[string, string]>): Promise<string> {
  const file = path.join(scratch, name)
  const time = Date.now()
  await writeFile(
    file,
    writeZip(entries.map(([entry, text]) => ({ name: entry, data: Buffer.from(text), time }))),
  )
  return file
}

describe('a ZIP holding two files of one name', () => {
  it('keeps the first, and names the second as left out instead of dropping it unsaid', async () => {
    const { m, host } = await machine()
    host.answer(
      await zipOf('twice.zip', [
        ['dup.md', 'first\n'],
        ['dup.md', 'second\n'],
        // One name once normalized (NFC), as the Memory tool normalizes every path.
        ['caf\u00e9.md', 'precomposed\n'],
        ['cafe\u0301.md', 'decomposed\n'],
      ]),
    )
    const result = await m.call('sync:import', { kind: 'zip' })
    expect(result.commit).toMatchObject({ actor: 'user', command: 'import' })
    expect(Object.fromEntries(await m.files())).toEqual({
      'keep.md': 'keep\n',
      'dup.md': 'first\n',
      'caf\u00e9.md': 'precomposed\n',
    })
    expect(result.skipped).toEqual([
      { path: 'dup.md', reason: 'a second file of the same name' },
      { path: 'cafe\u0301.md', reason: 'the same name as another file it holds' },
    ])
    expect(result.message).toContain('Imported 2 files')
    expect(m.git('rev-list', '--count', 'main').trim()).toBe('2')
  })
})

describe('names only case tells apart, where the system ignores case (macOS, Windows)', () => {
  // There `Notes.md` and `notes.md` are one file: written both, one would silently replace
  // the other, and a file memory holds would be written over by an import instead of merged.
  async function foldingMachine() {
    const host = dialogHost()
    const m = await startMachine('laptop', { host, namesFoldCase: true })
    machines.push(m)
    await m.write('keep.md', 'keep\n')
    return { m, host }
  }

  async function folderOf(name: string, entries: Array<[string, string]>): Promise<string> {
    const folder = path.join(scratch, name)
    await mkdir(folder)
    for (const [entry, text] of entries) await writeFile(path.join(folder, entry), text)
    return folder
  }

  for (const kind of ['zip', 'folder'] as const) {
    it(`(${kind}) keeps the first of two, names the second, and merges into the file memory holds`, async () => {
      const { m, host } = await foldingMachine()
      const entries: Array<[string, string]> = [
        ['KEEP.md', 'more\n'],
        ['Notes.md', 'first\n'],
        ['notes.md', 'second\n'],
      ]
      host.answer(
        kind === 'zip' ? await zipOf('cases.zip', entries) : await folderOf('cases', entries),
      )
      const result = await m.call('sync:import', { kind })
      expect(result.skipped).toEqual([
        { path: 'notes.md', reason: 'the same name as Notes.md on this system' },
      ])
      // One file per name the system tells apart, in the folder and in the commit alike.
      const files = Object.fromEntries(await m.files())
      expect(Object.keys(files).sort()).toEqual(['Notes.md', 'keep.md'])
      expect(files['Notes.md']).toBe('first\n')
      expect(files['keep.md']).toContain('keep')
      expect(files['keep.md']).toContain('more')
      expect(m.git('ls-tree', '--name-only', 'main').split('\n').filter(Boolean).sort()).toEqual([
        'Notes.md',
        'keep.md',
      ])
    })
  }
})

describe('a ZIP holding names that would leave memory, and a credential', () => {
  it('leaves each out, named, and imports the rest in one commit', async () => {
    const { m, host } = await machine()
    host.answer(
      await zipOf('hostile.zip', [
        ['/etc/abs.md', 'absolute\n'],
        ['C:\\win.md', 'drive\n'],
        ['a\\..\\..\\back.md', 'backslashes\n'],
        ['notes/../../up.md', 'dots\n'],
        ['keys.md', `token ${GITHUB_TOKEN}\n`],
        ['notes/fine.md', 'fine\n'],
      ]),
    )
    const before = m.git('rev-parse', 'main').trim()
    const result = await m.call('sync:import', { kind: 'zip' })
    expect(Object.fromEntries(await m.files())).toEqual({
      'keep.md': 'keep\n',
      'notes/fine.md': 'fine\n',
    })
    expect(result.skipped.map((s) => s.path).sort()).toEqual(
      ['/etc/abs.md', 'C:\\win.md', 'a\\..\\..\\back.md', 'notes/../../up.md', 'keys.md'].sort(),
    )
    expect(JSON.stringify(result)).not.toContain(GITHUB_TOKEN)
    // One commit by You on top of what was there; the credential is in no object.
    expect(m.git('rev-parse', 'main~1').trim()).toBe(before)
    expect(m.git('log', '-1', '--format=%s', 'main').trim()).toBe('import 1 file from hostile.zip')
    const lines = [...linesOfHistory(path.join(m.dir, 'history.git'))]
    expect(lines).toContain('fine')
    expect(lines.filter((line) => line.includes(GITHUB_TOKEN))).toEqual([])
  })

  it('refuses an archive whose only file holds a credential, changing nothing', async () => {
    const { m, host } = await machine()
    host.answer(await zipOf('secret.zip', [['keys.md', `token ${GITHUB_TOKEN}\n`]]))
    const head = m.git('rev-parse', 'main')
    const result = await m.core.dispatch('sync:import', { kind: 'zip' })
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.error.code).toBe('import-empty')
    expect(result.error.message).toContain('keys.md (looks like it holds a credential')
    expect(result.error.message).not.toContain(GITHUB_TOKEN)
    expect(result.error.message).not.toContain(scratch)
    expect(m.git('rev-parse', 'main')).toBe(head)
    expect(Object.fromEntries(await m.files())).toEqual({ 'keep.md': 'keep\n' })
  })
})
