/**
 * The rooms the code keeps (docs/architecture.md), checked on the real import graph: every
 * `import`/`export … from`/`import()` of every source file, type-only ones included.
 * ESLint refuses a bad import where it is written; this sees the whole drawing at once,
 * including circles, which no single file shows.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ESLint } from 'eslint'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = path.resolve(import.meta.dirname, '..')
const MAIN = 'src/main'
const RENDERER = 'src/renderer/src'

/**
 * Every TypeScript source under `dir` (relative to `base`), tests and test helpers left out.
 */
function sources(dir: string, base = root): string[] {
  const out: string[] = []
  const walk = (relative: string): void => {
    for (const name of readdirSync(path.join(base, relative))) {
      const child = `${relative}/${name}`
      if (statSync(path.join(base, child)).isDirectory()) walk(child)
      else if (/\.tsx?$/.test(name) && !/\.test\.tsx?$|test-(helpers|support)\.ts$/.test(name)) {
        out.push(child)
      }
    }
  }
  walk(dir)
  return out.sort()
}

const isFile = (file: string): boolean => {
  try {
    return statSync(file).isFile()
  } catch {
    return false
  }
}

/**
 * The files `file` imports, as paths relative to `base` (packages and assets left out),
 * resolved as TypeScript's Bundler resolution does: `./x.js` is `./x.ts` (review hunt13 D7:
 * such an import used to vanish from the graph). A relative import that names no file is an
 * error, never left out.
 */
function importsOf(file: string, base = root): string[] {
  const text = readFileSync(path.join(base, file), 'utf8')
  const found = ts.preProcessFile(text, true, true).importedFiles.map((i) => i.fileName)
  const resolved: string[] = []
  for (const specifier of found) {
    if (!specifier.startsWith('.')) continue
    const plain = specifier.replace(/[?#].*$/, '')
    const joined = path.posix.normalize(path.posix.join(path.posix.dirname(file), plain))
    const stem = joined.replace(/\.(?:[cm]?js|jsx)$/, '')
    const candidates = [
      `${stem}.ts`,
      `${stem}.tsx`,
      `${stem}/index.ts`,
      `${stem}/index.tsx`,
      `${joined}/index.ts`,
      joined,
    ]
    const target = candidates.find((candidate) => isFile(path.join(base, candidate)))
    if (!target) throw new Error(`${file}: the import "${specifier}" names no file`)
    if (/\.tsx?$/.test(target)) resolved.push(target)
  }
  return resolved
}

type Graph = ReadonlyMap<string, ReadonlyArray<string>>

function graphOf(dir: string, base = root): Graph {
  return new Map(sources(dir, base).map((file) => [file, importsOf(file, base)]))
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

/** Every arrow from a domain into another domain's internals, or out of lib/. */
function crossRoomImports(graph: Graph): string[] {
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
  return wrong
}

/** Every import of the composition root or the shell's top-level files from a room. */
function topLevelImports(graph: Graph): string[] {
  const wrong: string[] = []
  for (const [file, imports] of graph) {
    if (roomOf(file) === null) continue
    for (const target of imports) {
      if (target.startsWith(`${MAIN}/`) && roomOf(target) === null)
        wrong.push(`${file} -> ${target}`)
    }
  }
  return wrong
}

describe('src/main', () => {
  const graph = graphOf(MAIN)
  const rooms = new Set([...graph.keys()].map(roomOf).filter((room) => room !== null))

  it('has the shared helpers in lib/ and each domain behind its index.ts', () => {
    expect(rooms).toContain('lib')
    // The rooms are the folders of src/main, every one of them (shell/ included).
    const folders = readdirSync(path.join(root, MAIN), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
    expect([...rooms].sort()).toEqual(folders.sort())
    expect(rooms).toContain('shell')
    for (const room of rooms) {
      if (room === 'lib') continue
      expect(graph.has(`${MAIN}/${room}/index.ts`), `${room}/index.ts`).toBe(true)
    }
  })

  it('has no arrow from a domain into another domain’s internals', () => {
    expect(crossRoomImports(graph)).toEqual([])
  })

  it('lets only the composition root and the shell import the dispatcher or each other', () => {
    const topLevel = [...graph.keys()].filter((file) => roomOf(file) === null)
    expect(topLevel.sort()).toEqual(
      ['core.ts', 'dispatcher.ts', 'index.ts', 'ipc.ts'].map((f) => `${MAIN}/${f}`),
    )
    expect(topLevelImports(graph)).toEqual([])
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

/**
 * The checks themselves, on probe imports that walked past them before (review hunt13 D7):
 * the graph's on a copy of the rooms in a temp folder, ESLint's on the same lines as if
 * written in src/main (linted as text: nothing is written into src/).
 */
describe('the room checks (probes)', () => {
  const PROBES: ReadonlyArray<readonly [string, string]> = [
    // From a nested folder of a domain into another domain's internals, with a .js suffix.
    ['review/flags/probe-a.ts', "import { X } from '../../history/repo.js'\nexport const a = X\n"],
    // The same, with a detour through ../../main/.
    ['review/probe-b.ts', "import { X } from '../../main/history/repo.js'\nexport const b = X\n"],
    // Into the composition root: a circle core -> review -> core.
    ['review/probe-c.ts', "import type { Core } from '../core.js'\nexport type C = Core\n"],
    // shell/ is a room like the others.
    ['shell/probe-g.ts', "import { X } from '../history/repo'\nexport const g = X\n"],
    // lib/ imports no domain.
    ['lib/probe-l.ts', "import { X } from '../history'\nexport const l = X\n"],
    // A dynamic import and an export-from are arrows too.
    ['review/probe-d.ts', "export const d = () => import('../history/repo.js')\n"],
    ['review/probe-e.ts', "export * from '../history/repo'\n"],
  ]

  it('the graph sees each probe, whatever its spelling, and refuses an import of no file', () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'cairn-arch-'))
    try {
      const write = (file: string, text: string) => {
        mkdirSync(path.dirname(path.join(base, MAIN, file)), { recursive: true })
        writeFileSync(path.join(base, MAIN, file), text)
      }
      write('core.ts', "import { r } from './review'\nexport interface Core { r: typeof r }\n")
      write('history/index.ts', "export { X } from './repo.js'\n")
      write('history/repo.ts', 'export const X = 1\n')
      write('review/index.ts', 'export const r = 1\n')
      write('shell/index.ts', 'export {}\n')
      write('lib/index.ts', 'export {}\n')
      const clean = graphOf(MAIN, base)
      expect(crossRoomImports(clean)).toEqual([])
      expect(circles(clean)).toEqual([])
      for (const [file, text] of PROBES) write(file, text)
      const graph = graphOf(MAIN, base)
      const at = (file: string) => `${MAIN}/${file}`
      expect(crossRoomImports(graph).sort()).toEqual(
        [
          `${at('lib/probe-l.ts')} -> ${at('history/index.ts')}`,
          `${at('review/flags/probe-a.ts')} -> ${at('history/repo.ts')}`,
          `${at('review/probe-b.ts')} -> ${at('history/repo.ts')}`,
          `${at('review/probe-c.ts')} -> ${at('core.ts')}`,
          `${at('review/probe-d.ts')} -> ${at('history/repo.ts')}`,
          `${at('review/probe-e.ts')} -> ${at('history/repo.ts')}`,
          `${at('shell/probe-g.ts')} -> ${at('history/repo.ts')}`,
        ].sort(),
      )
      expect(topLevelImports(graph)).toEqual([`${at('review/probe-c.ts')} -> ${at('core.ts')}`])
      // A relative import that names no file fails the graph instead of vanishing from it.
      write('review/probe-f.ts', "export { Y } from '../history/gone.js'\n")
      expect(() => graphOf(MAIN, base)).toThrow(
        /probe-f\.ts: the import "..\/history\/gone\.js" names no file/,
      )
    } finally {
      rmSync(base, { recursive: true, force: true, maxRetries: 10 })
    }
  })

  it('ESLint refuses each probe where it is written, and lets the rooms’ own imports pass', async () => {
    const eslint = new ESLint({ cwd: root })
    const rooms = async (file: string, text: string) => {
      const [result] = await eslint.lintText(text, { filePath: path.join(root, MAIN, file) })
      return result!.messages.filter((m) => m.ruleId === 'cairn/rooms').map((m) => m.message)
    }
    for (const [file, text] of PROBES) {
      expect(await rooms(file, text), file).toHaveLength(1)
    }
    const fine =
      "import { openVersionedMemory } from '../history'\n" +
      "import { CairnError } from '../lib/errors'\n" +
      "import type { WriteFlag } from '../../shared/types'\n" +
      "import { flagsFor } from './check'\n" +
      'export const all = [openVersionedMemory, CairnError, flagsFor] as unknown as WriteFlag\n'
    expect(await rooms('review/fine.ts', fine)).toEqual([])
  }, 60_000)
})
