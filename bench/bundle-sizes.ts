/**
 * Sizes of the built renderer: what the window loads at start (index.html's scripts and the
 * modules they preload or import statically) against what later screens load on demand.
 */
import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { gzipSync } from 'node:zlib'

export interface BundleFile {
  readonly file: string
  readonly bytes: number
  readonly gzip: number
}

export interface BundleSizes {
  readonly initial: ReadonlyArray<BundleFile>
  readonly lazy: ReadonlyArray<BundleFile>
}

/** Reads `outDir` (electron-vite's `out/renderer`). */
export async function bundleSizes(outDir: string): Promise<BundleSizes> {
  const assets = path.join(outDir, 'assets')
  const files = (await readdir(assets)).filter((name) => name.endsWith('.js'))
  const html = await readFile(path.join(outDir, 'index.html'), 'utf8')
  const entries = [...html.matchAll(/(?:src|href)="\.?\/?assets\/([^"]+\.js)"/g)].map(
    (m) => m[1] as string,
  )
  // Follow static imports (`import … from "./x.js"`); dynamic `import("./x.js")` stays lazy.
  const initial = new Set<string>()
  const pending = [...entries]
  while (pending.length > 0) {
    const name = pending.pop() as string
    if (initial.has(name) || !files.includes(name)) continue
    initial.add(name)
    const code = await readFile(path.join(assets, name), 'utf8')
    for (const match of code.matchAll(
      /(?:^|[;\n}])\s*import\s*(?:[\w$*{},\s]+from\s*)?["']\.\/([^"']+\.js)["']/g,
    )) {
      pending.push(match[1] as string)
    }
  }
  const describe = async (name: string): Promise<BundleFile> => {
    const file = path.join(assets, name)
    return {
      file: name,
      bytes: (await stat(file)).size,
      gzip: gzipSync(await readFile(file)).length,
    }
  }
  return {
    initial: await Promise.all([...initial].sort().map(describe)),
    lazy: await Promise.all(
      files
        .filter((name) => !initial.has(name))
        .sort()
        .map(describe),
    ),
  }
}

/**
 * The source modules each built file was made from, read from its source map (a build with
 * `--sourcemap`): paths relative to `root` (the repository), `node_modules/<package>/…` for
 * libraries.
 */
export async function bundleSources(
  outDir: string,
  files: ReadonlyArray<BundleFile>,
  root: string,
): Promise<ReadonlyArray<string>> {
  const sources = new Set<string>()
  for (const { file } of files) {
    const map = JSON.parse(await readFile(path.join(outDir, 'assets', `${file}.map`), 'utf8')) as {
      sources: ReadonlyArray<string>
    }
    for (const source of map.sources) {
      const absolute = path.resolve(path.join(outDir, 'assets'), source)
      const library = absolute.lastIndexOf(`${path.sep}node_modules${path.sep}`)
      sources.add(library >= 0 ? absolute.slice(library + 1) : path.relative(root, absolute))
    }
  }
  return [...sources].sort()
}

export function total(files: ReadonlyArray<BundleFile>): { bytes: number; gzip: number } {
  return files.reduce(
    (sum, file) => ({ bytes: sum.bytes + file.bytes, gzip: sum.gzip + file.gzip }),
    {
      bytes: 0,
      gzip: 0,
    },
  )
}
