import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { ExecuteOutcome, VersionedMemory } from './types'

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

/**
 * A change made by the user (a timeline `write`, or a delete), as the memory browser makes
 * it: one Memory tool command through `execute`. Throws the refusal when it fails.
 */
export async function userWrite(
  memory: Pick<VersionedMemory, 'execute'>,
  file: string,
  content: string,
): Promise<ExecuteOutcome> {
  return succeeded(
    await memory.execute(
      { command: 'create', path: file, file_text: content },
      { actor: 'user' },
      { commitAs: 'write' },
    ),
  )
}

export async function userDelete(
  memory: Pick<VersionedMemory, 'execute'>,
  file: string,
): Promise<ExecuteOutcome> {
  return succeeded(await memory.execute({ command: 'delete', path: file }, { actor: 'user' }))
}

function succeeded(outcome: ExecuteOutcome): ExecuteOutcome {
  if (outcome.isError) throw new Error(`refused (${outcome.errorCode}): ${String(outcome.content)}`)
  return outcome
}

/**
 * Makes every commit fail, even for root, by putting a folder where the `main` ref file
 * should be; the returned function puts the ref back as it was.
 */
export async function breakMainRef(dataDir: string): Promise<() => Promise<void>> {
  const ref = path.join(dataDir, 'history.git', 'refs', 'heads', 'main')
  const head = (await readFile(ref, 'utf8')).trim()
  await rm(ref)
  await mkdir(path.join(ref, 'blocker'), { recursive: true })
  return async () => {
    await rm(ref, { recursive: true })
    await writeFile(ref, `${head}\n`)
  }
}
