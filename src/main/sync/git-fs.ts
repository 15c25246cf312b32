/**
 * The file system isomorphic-git's fetch and push get: node's, except that every file it
 * writes (a pack, its index, a ref) is written atomically, so an interrupted sync never
 * leaves half a pack or a torn ref in the repository.
 */
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import git from 'isomorphic-git'

const TEMP_PREFIX = '.tmp-sync-'

async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  options?: { mode?: number; encoding?: BufferEncoding } | BufferEncoding,
): Promise<void> {
  const temp = path.join(path.dirname(file), `${TEMP_PREFIX}${randomUUID()}`)
  const handle = await fsp.open(temp, 'wx', typeof options === 'object' ? options.mode : undefined)
  try {
    await handle.writeFile(data, typeof options === 'string' ? options : options?.encoding)
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await fsp.rename(temp, file)
  } catch (error) {
    await fsp.rm(temp, { force: true })
    throw error
  }
}

/** The `fs` to hand to isomorphic-git for fetch and push. */
export const gitFs = {
  promises: {
    readFile: fsp.readFile,
    writeFile: writeFileAtomic,
    unlink: fsp.unlink,
    readdir: fsp.readdir,
    mkdir: fsp.mkdir,
    rmdir: fsp.rmdir,
    stat: fsp.stat,
    lstat: fsp.lstat,
    readlink: fsp.readlink,
    symlink: fsp.symlink,
    chmod: fsp.chmod,
  },
}

/**
 * A `gitFs` for one fetch that holds back writes of refs until `flush`: isomorphic-git
 * writes the remote's ref before the pack it points into, and a fetch cut in between must
 * not leave a ref to objects that never arrived.
 */
export function fetchFs(gitdir: string): { fs: typeof gitFs; flush(): Promise<void> } {
  const refs = path.join(gitdir, 'refs') + path.sep
  const held = new Map<string, string | Uint8Array>()
  return {
    fs: {
      promises: {
        ...gitFs.promises,
        async writeFile(file, data, options) {
          if (String(file).startsWith(refs)) held.set(String(file), data)
          else await writeFileAtomic(file, data, options)
        },
        readFile: (async (file: string, options?: unknown) => {
          const pending = held.get(String(file))
          if (pending === undefined) return fsp.readFile(file, options as BufferEncoding)
          return typeof pending === 'string' || options ? String(pending) : Buffer.from(pending)
        }) as typeof fsp.readFile,
      },
    },
    async flush() {
      for (const [file, data] of held) {
        await fsp.mkdir(path.dirname(file), { recursive: true })
        await writeFileAtomic(file, data)
      }
      held.clear()
    },
  }
}

/**
 * Removes what a killed fetch or push can leave: temp files of unfinished writes, and a pack
 * whose index was never written (nothing reads such a pack; the next fetch brings it again).
 */
export function cleanInterruptedFetch(gitdir: string): void {
  const packs = path.join(gitdir, 'objects', 'pack')
  let names: string[] = []
  try {
    names = fs.readdirSync(packs)
  } catch {
    // No pack folder yet: nothing was ever fetched.
  }
  for (const name of names) {
    const orphan = name.endsWith('.pack') && !names.includes(name.replace(/\.pack$/, '.idx'))
    if (name.startsWith(TEMP_PREFIX) || orphan) fs.rmSync(path.join(packs, name), { force: true })
  }
  removeTempFiles(path.join(gitdir, 'refs'))
}

function removeTempFiles(dir: string): void {
  let dirents: fs.Dirent[]
  try {
    dirents = fs.readdirSync(dir, { withFileTypes: true })
  } catch {
    // Gone or never made: nothing to clean.
    return
  }
  for (const dirent of dirents) {
    const child = path.join(dir, dirent.name)
    if (dirent.name.startsWith(TEMP_PREFIX)) fs.rmSync(child, { force: true })
    else if (dirent.isDirectory()) removeTempFiles(child)
  }
}

/** The commit a ref of the repository points at, or null when there is no such ref. */
export async function readRef(gitdir: string, ref: string): Promise<string | null> {
  try {
    return await git.resolveRef({ fs: gitFs, gitdir, ref })
  } catch {
    // No such ref (never fetched, no backup by that name).
    return null
  }
}
