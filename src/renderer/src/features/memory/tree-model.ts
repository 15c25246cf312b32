import type { MemoryEntry } from '../../../../shared/types'
import { scaledSize } from '../../../../shared/sizes'

/** One visible row of the memory tree. */
export interface TreeRow {
  readonly entry: MemoryEntry
  readonly name: string
  /** 1 for entries directly under /memories. */
  readonly level: number
  readonly expanded: boolean | null
  readonly parent: string | null
  /** How many rows share this row's folder, and this row's place among them (from 1): what a screen reader says when only some rows are drawn (`aria-setsize`, `aria-posinset`). */
  readonly setSize: number
  readonly posInSet: number
}

/** `/memories/a/b.md` -> `/memories/a` (null for the root's children's parent). */
export function parentOf(path: string): string | null {
  const slash = path.lastIndexOf('/')
  const parent = path.slice(0, slash)
  return parent === '/memories' || parent === '' ? null : parent
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1)
}

/** File-manager order: `f2.md` before `f10.md`, case ignored (Finder, Explorer, VS Code). */
const byName = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' })

/**
 * The rows to show, folders first then files (each by name in natural order), children only under expanded
 * folders. Folders are expanded unless listed in `collapsed`.
 */
export function visibleRows(
  entries: ReadonlyArray<MemoryEntry>,
  collapsed: ReadonlySet<string>,
): ReadonlyArray<TreeRow> {
  const children = new Map<string | null, MemoryEntry[]>()
  for (const entry of entries) {
    const parent = parentOf(entry.path)
    const list = children.get(parent) ?? []
    list.push(entry)
    children.set(parent, list)
  }
  const rows: TreeRow[] = []
  const visit = (parent: string | null, level: number): void => {
    const list = [...(children.get(parent) ?? [])].sort(
      (a, b) =>
        (a.kind === 'dir' ? 0 : 1) - (b.kind === 'dir' ? 0 : 1) ||
        byName.compare(baseName(a.path), baseName(b.path)),
    )
    for (const [index, entry] of list.entries()) {
      // A folder Cairn may not read lists nothing: no expander, like an unreadable file.
      const expanded =
        entry.kind === 'dir' && entry.unreadable !== true ? !collapsed.has(entry.path) : null
      rows.push({
        entry,
        name: baseName(entry.path),
        level,
        expanded,
        parent,
        setSize: list.length,
        posInSet: index + 1,
      })
      if (expanded) visit(entry.path, level + 1)
    }
  }
  visit(null, 1)
  return rows
}

/**
 * Sizes as file managers show them: `512 B`, `1.4 KB`, `2.0 MB`. A size that rounds to 1024.0
 * of a unit is shown as 1.0 of the next (`1.0 MB`, never `1024.0 KB`), the rule the Memory
 * tool's own listing follows.
 */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  return scaledSize(bytes, ['KB', 'MB', 'GB'], ' ')
}

/** True for names the rendered-markdown toggle applies to. */
export function isMarkdown(path: string): boolean {
  return /\.(md|markdown|mdx)$/i.test(path)
}

/**
 * A free name beside `path` for text that cannot go back to it: `notes.md` -> `notes (your
 * edit).md`, then `notes (your edit 2).md` and on, skipping the paths in `taken`.
 */
export function copyNameFor(path: string, taken: ReadonlySet<string>): string {
  const slash = path.lastIndexOf('/')
  const folder = path.slice(0, slash + 1)
  const name = path.slice(slash + 1)
  const dot = name.lastIndexOf('.')
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, '']
  for (let n = 1; ; n++) {
    const candidate = `${folder}${stem} (your edit${n === 1 ? '' : ` ${n}`})${ext}`
    if (!taken.has(candidate)) return candidate
  }
}
