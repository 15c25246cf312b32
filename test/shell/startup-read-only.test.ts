/**
 * Starts of the built main bundle (with the recording stand-in for `electron`, as in
 * main-bundle.test.ts) on a data folder behind a REAL read-only bind mount, or on a REAL tmpfs
 * that is full: the person gets the start-up failure dialog in plain words, or a working
 * window, never a stack, a silent exit or a hang, and the folder is left as it was. Needs root with mount
 * allowed, as src/main/history/read-only-mount.test.ts does (mounting throws otherwise).
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { lstatSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { builtFile, root } from './built'
import {
  createElectronStandIn,
  type ElectronStandIn,
  type StandInOptions,
} from './electron-stand-in'
import { gitCli, mountSmallDisk, type SmallDisk } from '../../src/main/history/test-helpers'

const bundle = path.join(root, 'out/main/index.js')
const current = vi.hoisted(() => ({ standIn: null as { module: object } | null }))
vi.mock('electron', async () => (await import('./electron-stand-in')).forwardingElectron(current))

const mounts: string[] = []
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  try {
    for (const dir of mounts.splice(0).reverse()) execFileSync('umount', [dir])
  } finally {
    while (cleanups.length > 0) await cleanups.pop()!()
    current.standIn = null
    vi.restoreAllMocks()
  }
})

function bindReadOnly(dir: string): void {
  execFileSync('mount', ['--bind', dir, dir])
  mounts.push(dir)
  execFileSync('mount', ['-o', 'remount,ro,bind', dir])
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-shell-ro-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true, maxRetries: 10 }))
  return dir
}

async function start(options: StandInOptions): Promise<ElectronStandIn> {
  await builtFile('out/main/index.js', ['src/main', 'src/shared'])
  const standIn = createElectronStandIn(options)
  current.standIn = standIn
  const saved = process.env['CAIRN_DATA_DIR']
  delete process.env['CAIRN_DATA_DIR']
  cleanups.push(async () => {
    if (saved !== undefined) process.env['CAIRN_DATA_DIR'] = saved
  })
  vi.resetModules()
  await import(/* @vite-ignore */ pathToFileURL(bundle).href)
  return standIn
}

/** Every file and folder below `dir` with its bytes' hash. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (rel: string) => {
    const stat = lstatSync(path.join(dir, rel))
    if (stat.isDirectory()) {
      out[`${rel}/`] = 'folder'
      for (const name of readdirSync(path.join(dir, rel))) walk(path.join(rel, name))
    } else {
      out[rel] = createHash('sha1')
        .update(stat.isFile() ? readFileSync(path.join(dir, rel)) : 'special')
        .digest('hex')
    }
  }
  walk('')
  return out
}

function expectPlainDialog(standIn: ElectronStandIn, userData: string, reason: RegExp): void {
  const [dialog] = standIn.callsOf('dialog.showMessageBox')
  expect(dialog?.args[0]).toMatchObject({
    type: 'error',
    message: 'Cairn could not start',
    buttons: ['Open data folder', 'Quit'],
  })
  const detail = (dialog!.args[0] as { detail: string }).detail
  expect(detail).toMatch(reason)
  expect(detail).toContain(`Your data folder: ${userData}`)
  expect(detail).not.toMatch(/EROFS|EACCES|at .*\.js:\d+|Error:|Something unexpected/)
  // The window came at once to show the opening; the failed open closed it before the dialog.
  expect(standIn.windows.every((window) => window.destroyed)).toBe(true)
  const kinds = standIn.calls.map((call) => call.kind)
  expect(kinds.lastIndexOf('window.destroyed')).toBeLessThan(kinds.indexOf('dialog.showMessageBox'))
}

/** The shell and the core log the failure in full for developers; the person gets the dialog. */
function quiet(): void {
  vi.spyOn(console, 'error').mockImplementation(() => undefined)
  vi.spyOn(console, 'warn').mockImplementation(() => undefined)
}

const READ_ONLY =
  /Cairn's data folder is read-only\. Nothing was changed; fix the problem and open Cairn again\./

const FULL = /disk (that holds Cairn.s data folder )?is full/

/** Resolves once the shell tells the window the memory is open. */
async function ready(standIn: ElectronStandIn): Promise<void> {
  await standIn.waitUntil(
    'webContents.send',
    (call) => (call.args[1] as { name?: string } | undefined)?.name === 'app:ready',
  )
}

describe('a start on a read-only data folder', () => {
  it('a new, empty data folder on a read-only disk: the plain dialog, and nothing made', async () => {
    const userData = path.join(await tempDir(), 'Cairn')
    mkdirSync(userData)
    bindReadOnly(userData)
    quiet()
    const standIn = await start({ userData })
    const exit = await standIn.waitFor('app.exit')
    expect(exit.args).toEqual([1])
    expectPlainDialog(standIn, userData, READ_ONLY)
    expect(readdirSync(userData)).toEqual([])
  })

  it('a data folder with memory and history, put on a read-only disk: plain words, left as it was', async () => {
    const userData = path.join(await tempDir(), 'Cairn')
    mkdirSync(userData)
    const first = await start({ userData })
    await first.waitFor('window.loaded')
    // The memory is open once the shell tells the window the app is ready.
    await first.waitUntil(
      'webContents.send',
      (call) => (call.args[1] as { name?: string } | undefined)?.name === 'app:ready',
    )
    const frame = first.windows[0]!.webContents.mainFrame
    const handler = first.handlers.get('memory:write')!
    const written = (await handler(
      { senderFrame: frame },
      {
        path: '/memories/notes.md',
        content: 'kept\n',
      },
    )) as { ok: boolean }
    expect(written.ok).toBe(true)
    first.app.quit()
    await first.waitFor('app.quit')
    const before = tree(userData)
    bindReadOnly(userData)
    quiet()
    const standIn = await start({ userData })
    const exit = await standIn.waitFor('app.exit')
    expect(exit.args).toEqual([1])
    expectPlainDialog(standIn, userData, READ_ONLY)
    expect(tree(userData)).toEqual(before)
  })
})

describe('a start on a full disk', () => {
  async function smallDisk(): Promise<SmallDisk> {
    const disk = await mountSmallDisk('2m')
    cleanups.push(() => disk.unmount())
    return disk
  }

  /** A start on the full disk: the plain dialog, then the exit. */
  async function expectRefusedAsFull(userData: string): Promise<void> {
    quiet()
    const standIn = await start({ userData })
    expect((await standIn.waitFor('app.exit')).args).toEqual([1])
    expectPlainDialog(standIn, userData, FULL)
  }

  /** Starts Cairn, runs `use` once the memory is open, then quits (before the disk goes). */
  async function whileOpen(
    userData: string,
    use: (standIn: ElectronStandIn) => Promise<void>,
  ): Promise<void> {
    const standIn = await start({ userData })
    try {
      await ready(standIn)
      await use(standIn)
    } finally {
      standIn.app.quit()
      await standIn.waitFor('app.quit')
    }
  }

  it('a new, empty data folder on a full disk: the plain dialog, and the start works once there is space', async () => {
    const disk = await smallDisk()
    const userData = path.join(disk.dir, 'Cairn')
    mkdirSync(userData)
    await disk.fill()
    await expectRefusedAsFull(userData)
    await disk.free()
    await whileOpen(userData, async () => undefined)
  })

  it('a data folder with memory and history on a disk that filled: plain words, nothing lost, and it opens once there is space', async () => {
    const disk = await smallDisk()
    const userData = path.join(disk.dir, 'Cairn')
    mkdirSync(userData)
    const first = await start({ userData })
    await ready(first)
    const write = first.handlers.get('memory:write')!
    const frame = first.windows[0]!.webContents.mainFrame
    expect(
      await write({ senderFrame: frame }, { path: '/memories/notes.md', content: 'kept\n' }),
    ).toMatchObject({ ok: true })
    first.app.quit()
    await first.waitFor('app.quit')
    await disk.fill()
    await expectRefusedAsFull(userData)
    await disk.free()
    expect(gitCli(userData, 'show', 'main:notes.md')).toBe('kept\n')
    await whileOpen(userData, async (again) => {
      const read = again.handlers.get('memory:read')!
      const answer = await read(
        { senderFrame: again.windows[0]!.webContents.mainFrame },
        { path: '/memories/notes.md' },
      )
      expect(answer).toMatchObject({ ok: true, value: { kind: 'text', text: 'kept\n' } })
    })
  })
})
