/**
 * The rooms the code keeps (docs/architecture.md), checked on the real import graph: every
 * `import`/`export … from`/`import()` of every source file, type-only ones included.
 * ESLint refuses a bad import where it is written; this sees the whole drawing at once,
 * including circles, which no single file shows.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '..')
const MAIN = 'src/main'
const RENDERER = 'src/renderer/src'

/** Every TypeScript source under `dir` (relative to the repo), tests and test helpers left out. */
function sources(dir: string): string[] {
  const out: string[] = []
  const walk = (relative: string): void => {
    for (const name of readdirSync(path.join(root, relative))) {
      const child = `${relative}/${name}`
      if (statSync(path.join(root, child)).isDirectory()) walk(child)
      else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$|test-(helpers|support)\.ts$/.test(name)) {
        out.push(child)
      }
    }
  }
  walk(dir)
  return out.sort()
}

/** The files `file` imports, as repo-relative paths (packages and assets left out). */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8')
  const found = ts.preProcessFile(text, true, true).importedFiles.map((i) => i.fileName)
  const resolved: string[] = []
  for (const specifier of found) {
    if (!specifier.startsWith('.')) continue
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier))
    const target = [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`, base].find((candidate) => {
      try {
        return statSync(path.join(root, candidate)).isFile()
      } catch {
        return false
      }
    })
    if (target && /\.tsx?$/.test(target)) resolved.push(target)
  }
  return resolved
}

type Graph = ReadonlyMap<string, ReadonlyArray<string>>

function graphOf(dir: string): Graph {
  return new Map(sources(dir).map((file) => [file, importsOf(file)]))
}

/** Groups of files that import each other in a loop (Tarjan's strongly connected components). */
function circles(graph: Graph): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (file: string): void => {
    index.set(file, counter)
    low.set(file, counter++)
    stack.push(file)
    onStack.add(file)
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue
      if (!index.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const group: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      group.push(member)
    } while (member !== file)
    if (group.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(group.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return found
}

/** `src/main/history/repo.ts` -> `history`; top-level files (core, shell) -> null. */
function roomOf(file: string): string | null {
  const [first, ...rest] = file.slice(MAIN.length + 1).split('/')
  return rest.length > 0 ? (first ?? null) : null
}

describe('src/main', () => {
  const graph = graphOf(MAIN)
  const rooms = new Set([...graph.keys()].map(roomOf).filter((room) => room !== null))

  it('has the shared helpers in lib/ and each domain behind its index.ts', () => {
    expect(rooms).toContain('lib')
    for (const room of rooms) {
      if (room === 'lib') continue
      expect(graph.has(`${MAIN}/${room}/index.ts`), `${room}/index.ts`).toBe(true)
    }
  })

  it('has no arrow from a domain into another domain’s internals', () => {
    const wrong: string[] = []
    for (const [file, imports] of graph) {
      const room = roomOf(file)
      if (room === null) continue
      for (const target of imports) {
        if (!target.startsWith(`${MAIN}/`)) continue
        const targetRoom = roomOf(target)
        const allowed =
          targetRoom === room ||
          (targetRoom === 'lib' && room !== 'lib') ||
          (room !== 'lib' && targetRoom !== null && target === `${MAIN}/${targetRoom}/index.ts`)
        if (!allowed) wrong.push(`${file} -> ${target}`)
      }
    }
    expect(wrong).toEqual([])
  })

  it('lets only the composition root and the shell import the dispatcher or each other', () => {
    const topLevel = [...graph.keys()].filter((file) => roomOf(file) === null)
    expect(topLevel.sort()).toEqual(
      ['core.ts', 'dispatcher.ts', 'index.ts', 'ipc.ts'].map((f) => `${MAIN}/${f}`),
    )
    for (const [file, imports] of graph) {
      if (roomOf(file) === null) continue
      expect(
        imports.filter((target) => topLevel.includes(target)),
        file,
      ).toEqual([])
    }
  })

  it('has no circle of files', () => {
    expect(circles(graph)).toEqual([])
  })

  it('keeps the read side of the history apart from its write side', () => {
    const writeSide = new Set(
      [
        'repo.ts',
        'versioned-memory.ts',
        'restore-common.ts',
        'restore-file.ts',
        'restore-deleted.ts',
        'revert.ts',
        'restore-all.ts',
        'outside-changes.ts',
        'work-tree.ts',
        'open-repo.ts',
        'watcher.ts',
        'checkout.ts',
      ].map((f) => `${MAIN}/history/${f}`),
    )
    for (const start of [
      'read.ts',
      'inspect.ts',
      'queries.ts',
      'lookup.ts',
      'line-diff.ts',
      'blame.ts',
      'blame-store.ts',
      'search.ts',
      'change-log.ts',
      'snapshot.ts',
    ]) {
      const reached = new Set<string>()
      const pending = [`${MAIN}/history/${start}`]
      while (pending.length > 0) {
        const file = pending.pop()!
        for (const next of graph.get(file) ?? []) {
          if (reached.has(next)) continue
          reached.add(next)
          pending.push(next)
        }
      }
      expect(
        [...reached].filter((file) => writeSide.has(file)),
        start,
      ).toEqual([])
    }
  })
})

describe('src/renderer', () => {
  it('has no circle of files', () => {
    expect(circles(graphOf(RENDERER))).toEqual([])
  })

  it('keeps features apart: what several share lives in src/lib or src/components', () => {
    const graph = graphOf(RENDERER)
    const featureOf = (file: string) => /\/features\/([^/]+)\//.exec(file)?.[1] ?? null
    const wrong: string[] = []
    for (const [file, imports] of graph) {
      const feature = featureOf(file)
      if (!feature || feature === 'app') continue
      for (const target of imports) {
        const other = featureOf(target)
        // The app feature composes the others; the others never reach into each other's
        // files, except the settings context every screen reads.
        if (other && other !== feature && !target.endsWith('settings/settings-context.tsx')) {
          wrong.push(`${file} -> ${target}`)
        }
      }
    }
    expect(wrong).toEqual([])
  })

  it('finds a circle when there is one (the check itself)', () => {
    const graph: Graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ])
    expect(circles(graph)).toEqual([['a', 'b', 'c']])
  })
})
