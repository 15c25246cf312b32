/** Helpers for this folder's tests: a temp base with the memory root and a sentinel beside it. */

import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createMemoryTool, type MemoryToolOptions } from './memory-tool'
import type { MemoryExecution, MemoryTool } from './types'
import type { UsageSource } from './usage'

export interface Sandbox {
  readonly base: string
  readonly root: string
  readonly sentinel: string
  readonly tool: MemoryTool
  /** Runs a command and returns its result. */
  run(input: unknown): Promise<MemoryExecution>
  /** Reads a file under the root by relative posix path. */
  read(relative: string): Promise<string>
  /** Writes a file under the root directly (test setup, bypassing the tool). */
  write(relative: string, text: string | Buffer): Promise<void>
  cleanup(): Promise<void>
}

export interface SandboxOptions extends Partial<MemoryToolOptions> {
  /** The tool's usage source, made for the root once it exists (a cache a test looks into). */
  readonly usageFor?: (root: string) => UsageSource
}

/** A temp folder holding `memories/` (the root) and `sentinel/` (must never change). */
export async function makeSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-memory-'))
  const root = path.join(base, 'memories')
  const sentinel = path.join(base, 'sentinel')
  await fs.mkdir(root)
  await fs.mkdir(sentinel)
  await fs.writeFile(path.join(sentinel, 'secret.txt'), 'sentinel content\n')
  await fs.writeFile(path.join(base, 'passwd'), 'root:x:0:0\n')
  const { usageFor, ...toolOptions } = options
  const tool = createMemoryTool({
    root,
    ...toolOptions,
    ...(usageFor ? { usage: usageFor(root) } : {}),
  })
  return {
    base,
    root,
    sentinel,
    tool,
    run: (input) => tool.execute(input),
    read: (relative) => fs.readFile(path.join(root, relative), 'utf8'),
    write: async (relative, text) => {
      await fs.mkdir(path.dirname(path.join(root, relative)), { recursive: true })
      await fs.writeFile(path.join(root, relative), text)
    },
    cleanup: () => fs.rm(base, { recursive: true, force: true, maxRetries: 10 }),
  }
}

/** Every entry under `dir` with its type, mode, size and content (files), sorted: a fingerprint. */
export async function snapshot(dir: string): Promise<string> {
  const out: string[] = []
  const walk = async (current: string, rel: string): Promise<void> => {
    const entries = (await fs.readdir(current, { withFileTypes: true })).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )
    for (const entry of entries) {
      const full = path.join(current, entry.name)
      const name = rel ? `${rel}/${entry.name}` : entry.name
      const stats = await fs.lstat(full)
      const mode = (stats.mode & 0o777).toString(8)
      if (entry.isSymbolicLink()) out.push(`L ${name} -> ${await fs.readlink(full)}`)
      else if (entry.isDirectory()) {
        out.push(`D ${name} ${mode}`)
        await walk(full, name)
      } else if (entry.isFile()) {
        out.push(`F ${name} ${mode} ${JSON.stringify(await fs.readFile(full, 'utf8'))}`)
      } else out.push(`? ${name}`)
    }
  }
  await walk(dir, '')
  return out.join('\n')
}

/** The text of a result (joins text blocks). */
export function text(result: MemoryExecution): string {
  if (typeof result.content === 'string') return result.content
  return result.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n')
}
