/**
 * A model of the memory folder for the crash test: what each Memory tool command of a small
 * pool does to files and folders, and the commands themselves, drawn from a seeded random
 * source. The crash child and the parent replay the same commands through it.
 */

import fs from 'node:fs'
import path from 'node:path'

/** Files (relative path -> content) and folders (relative paths, empty ones included). */
export interface Model {
  readonly files: Map<string, string>
  readonly dirs: Set<string>
}

export type Command = Record<string, unknown> & { readonly command: string }

const FILES = ['a.md', 'b.md', 'c.md', 'd0/a.md', 'd0/b.md', 'd1/a.md', 'd0/e0/a.md']
const DIRS = ['d0', 'd1', 'd0/e0', 'd2']

export function emptyModel(): Model {
  return { files: new Map(), dirs: new Set() }
}

export function cloneModel(model: Model): Model {
  return { files: new Map(model.files), dirs: new Set(model.dirs) }
}

const parentsOf = (p: string) => {
  const parts = p.split('/')
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'))
}
const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`)
const exists = (model: Model, p: string) => model.files.has(p) || model.dirs.has(p)

/** Applies a command; false when the tool must refuse it (the model is then unchanged). */
export function applyCommand(model: Model, cmd: Command): boolean {
  const path = (key: string) => String(cmd[key]).replace(/^\/memories\//, '')
  switch (cmd.command) {
    case 'view':
      return exists(model, path('path'))
    case 'create': {
      const p = path('path')
      if (model.dirs.has(p) || parentsOf(p).some((d) => model.files.has(d))) return false
      for (const dir of parentsOf(p)) model.dirs.add(dir)
      model.files.set(p, String(cmd.file_text))
      return true
    }
    case 'str_replace': {
      const text = model.files.get(path('path'))
      const old = String(cmd.old_str)
      if (text === undefined || old === '' || text.split(old).length !== 2) return false
      model.files.set(
        path('path'),
        text.replace(old, () => String(cmd.new_str)),
      )
      return true
    }
    case 'insert': {
      const text = model.files.get(path('path'))
      if (text === undefined || cmd.insert_line !== 0) return false
      model.files.set(path('path'), `${String(cmd.insert_text)}\n${text}`)
      return true
    }
    case 'delete': {
      const p = path('path')
      if (!exists(model, p)) return false
      for (const file of [...model.files.keys()]) if (under(file, p)) model.files.delete(file)
      for (const dir of [...model.dirs]) if (under(dir, p)) model.dirs.delete(dir)
      return true
    }
    case 'rename': {
      const from = path('old_path')
      const to = path('new_path')
      if (!exists(model, from) || exists(model, to) || under(to, from)) return false
      if (parentsOf(to).some((d) => model.files.has(d))) return false
      for (const dir of parentsOf(to)) model.dirs.add(dir)
      for (const [file, text] of [...model.files]) {
        if (!under(file, from)) continue
        model.files.delete(file)
        model.files.set(to + file.slice(from.length), text)
      }
      for (const dir of [...model.dirs]) {
        if (!under(dir, from)) continue
        model.dirs.delete(dir)
        model.dirs.add(to + dir.slice(from.length))
      }
      return true
    }
  }
  return false
}

/** A small seeded random source (mulberry32). */
export function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The next command, mostly ones that will work on `model`. */
export function nextCommand(rand: () => number, model: Model): Command {
  const pick = <T>(items: ReadonlyArray<T>): T => items[Math.floor(rand() * items.length)]!
  const v = (p: string) => `/memories/${p}`
  const token = () => `t${Math.floor(rand() * 1e9)}`
  const roll = rand()
  if (roll < 0.3) return { command: 'create', path: v(pick(FILES)), file_text: `${token()}\n` }
  if (roll < 0.5) {
    const file = pick(FILES)
    const text = model.files.get(file)
    const old = text !== undefined && rand() < 0.85 ? text.trim() : 'no such text'
    return { command: 'str_replace', path: v(file), old_str: old, new_str: token() }
  }
  if (roll < 0.6) {
    return { command: 'insert', path: v(pick(FILES)), insert_line: 0, insert_text: token() }
  }
  if (roll < 0.72) return { command: 'delete', path: v(pick([...FILES, ...DIRS])) }
  if (roll < 0.92) {
    const fromFile = rand() < 0.6
    return {
      command: 'rename',
      old_path: v(pick(fromFile ? FILES : DIRS)),
      new_path: v(pick(fromFile ? FILES : DIRS)),
    }
  }
  return { command: 'view', path: v(pick([...FILES, ...DIRS])) }
}

/** The model of the folder `root` as it is on disk (hidden entries are not memory). */
export function readModel(root: string): Model {
  const model = emptyModel()
  const walk = (dir: string, rel: string) => {
    for (const dirent of fs.readdirSync(dir, { withFileTypes: true })) {
      if (dirent.name.startsWith('.')) continue
      const relative = rel ? `${rel}/${dirent.name}` : dirent.name
      if (dirent.isDirectory()) {
        model.dirs.add(relative)
        walk(path.join(dir, dirent.name), relative)
      } else if (dirent.isFile()) {
        model.files.set(relative, fs.readFileSync(path.join(dir, dirent.name), 'utf8'))
      }
    }
  }
  if (fs.existsSync(root)) walk(root, '')
  return model
}

/** A comparable form of a model. */
export function describeModel(model: Model): string {
  return JSON.stringify({
    files: [...model.files].sort(([a], [b]) => (a < b ? -1 : 1)),
    dirs: [...model.dirs].sort(),
  })
}
