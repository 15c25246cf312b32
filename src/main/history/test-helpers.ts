import { execFileSync } from 'node:child_process'
import { statfsSync } from 'node:fs'
import { mkdtemp, open, readdir, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

/** A fresh data folder under the OS temp dir; `cleanup` removes it. */
export async function tempDataDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-history-'))
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) }
}

/** Runs the real git CLI against `<dataDir>/history.git` (the second opinion). */
export function gitCli(dataDir: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', path.join(dataDir, 'history.git'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir },
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** `git fsck --strict` output (throws when git reports an error). */
export function fsck(dataDir: string): string {
  return gitCli(dataDir, 'fsck', '--strict', '--no-dangling')
}

export function commitCount(dataDir: string): number {
  try {
    return Number(gitCli(dataDir, 'rev-list', '--count', 'main').trim())
  } catch {
    return 0
  }
}

/** Every file of HEAD's tree, per the git CLI, as path -> content. */
export function headFiles(dataDir: string): Map<string, string> {
  const files = new Map<string, string>()
  let listing: string
  try {
    listing = gitCli(dataDir, 'ls-tree', '-r', '-z', '--name-only', 'main')
  } catch {
    return files
  }
  for (const name of listing.split('\0').filter(Boolean)) {
    files.set(name, gitCli(dataDir, 'show', `main:${name}`))
  }
  return files
}

/** Every regular file in `<dataDir>/memories`, as relative path -> content. */
export async function folderFiles(dataDir: string): Promise<Map<string, string>> {
  const root = path.join(dataDir, 'memories')
  const files = new Map<string, string>()
  async function walk(dir: string, prefix: string): Promise<void> {
    for (const dirent of await readdir(dir, { withFileTypes: true })) {
      const relative = prefix ? `${prefix}/${dirent.name}` : dirent.name
      if (dirent.isDirectory()) await walk(path.join(dir, dirent.name), relative)
      else if (dirent.isFile()) {
        files.set(relative, await readFile(path.join(dir, dirent.name), 'utf8'))
      }
    }
  }
  await walk(root, '')
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : 1)))
}

export function sorted(map: Map<string, string>): Map<string, string> {
  return new Map([...map].sort(([a], [b]) => (a < b ? -1 : 1)))
}

/** A small real file system (tmpfs) for full-disk tests; needs root. */
export interface SmallDisk {
  readonly dir: string
  /** Fills the disk with a filler file, leaving `spareBlocks` free blocks. */
  fill(spareBlocks?: number): Promise<void>
  /** Deletes the filler file. */
  free(): Promise<void>
  unmount(): Promise<void>
}

/**
 * Mounts a tmpfs of `size` (e.g. `2m`) on a fresh temp folder. Throws, loudly, when mounting
 * is impossible (not root, no CAP_SYS_ADMIN): a full-disk test must never pass by skipping.
 */
export async function mountSmallDisk(size = '2m'): Promise<SmallDisk> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-disk-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  } catch (error) {
    await rm(dir, { recursive: true, force: true })
    throw new Error(
      `Cannot mount a tmpfs for the full-disk test (${String((error as Error).message).trim()}). Run the tests as root with mount allowed.`,
      { cause: error },
    )
  }
  const filler = path.join(dir, 'filler')
  return {
    dir,
    async fill(spareBlocks = 0) {
      const { bavail, bsize } = statfsSync(dir)
      const room = (bavail - spareBlocks) * bsize
      const handle = await open(filler, 'a')
      try {
        const chunk = Buffer.alloc(64 * 1024, 1)
        let written = 0
        while (written < room) {
          const size = Math.min(chunk.length, room - written)
          try {
            await handle.write(chunk.subarray(0, size))
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break
            throw error
          }
          written += size
        }
      } finally {
        await handle.close()
      }
    },
    free: () => rm(filler, { force: true }),
    async unmount() {
      execFileSync('umount', [dir])
      await rm(dir, { recursive: true, force: true })
    },
  }
}
