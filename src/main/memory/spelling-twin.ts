/**
 * Names put in the memory folder outside Cairn in another Unicode spelling than memory paths
 * use: `café.md` with its accent decomposed (`e` + U+0301), as macOS writes names and copies
 * carry them to Linux. Memory paths are normalized to the composed form (NFC), so no path
 * names such a file, and listings leave it out (D18). A path that misses only because of the
 * spelling is refused with the clash named, never answered "does not exist" (the person sees
 * the file in the Memory tab) nor written beside it as a second file that looks the same.
 */

import { Folder } from '../lib/folders'
import type { CommandContext } from './context'
import { escapeInvisible } from '../lib/text'
import { CommandError } from './outcome'
import { MEMORY_ROOT, type ParsedMemoryPath } from './path-rules'

/** An entry whose name is another spelling of the name a path asked for. */
export interface SpellingTwin {
  /** Relative path of the entry as it is on disk (its own spelling). */
  readonly relative: string
  readonly kind: 'file' | 'folder'
}

// A composed name can have another spelling only if it holds a non-ASCII character, or one of
// the three ASCII ones that a single other character normalizes to (U+212A KELVIN SIGN is K,
// U+037E GREEK QUESTION MARK is `;`, U+1FEF GREEK VARIA is a backtick): a name without any of
// them is not worth listing its folder for.
const MAY_HAVE_TWIN = /[^\0-\x7F]|[K;`]/

/**
 * The entry on disk that `relative` (missing) names in another spelling: at the first missing
 * name along the path, an entry of its folder that normalizes to it. Null when there is none,
 * or when it is `except` (a rename's own source: renamed to the composed spelling, it leaves
 * no twin behind).
 */
export function findSpellingTwin(
  ctx: TwinContext,
  relative: string,
  except?: string,
): SpellingTwin | null {
  if (relative === '' || !MAY_HAVE_TWIN.test(relative)) return null
  return findTwin(ctx, relative, except, (name) =>
    MAY_HAVE_TWIN.test(name) ? (onDisk) => onDisk.normalize('NFC') === name : null,
  )
}

/**
 * The entry on disk whose name differs only in letter case (or case and spelling) from the
 * first missing name along `relative`: `Notes.md` for `notes.md`. Linux keeps both; macOS and
 * Windows, whose disks ignore case, hold one name for the two, so a copy or sync of the memory
 * folder there would clash. Null when there is none.
 */
export function findCaseTwin(
  ctx: TwinContext,
  relative: string,
  except?: string,
): SpellingTwin | null {
  if (relative === '') return null
  return findTwin(ctx, relative, except, (name) => {
    const folded = name.toLowerCase()
    // A name without letters that change with case has no case twin: not worth a listing.
    return folded === name.toUpperCase() ? null : (onDisk) => foldName(onDisk) === folded
  })
}

/** A name or path as a disk that ignores case and Unicode spelling compares it. */
export function foldName(name: string): string {
  return name.normalize('NFC').toLowerCase()
}

/** What the twin checks need of a command's context: its open folders, and names listed before. */
export type TwinContext = Pick<CommandContext, 'tree' | 'names'>

/**
 * Walks to the first missing name along `relative` and returns an entry of its folder (a file
 * or a folder, other than the name itself and `except`) that `same(name)` accepts; `same` returns null when
 * the name can have no twin, and the folder is then not listed. Its names are those `names`
 * keeps for it when it has not changed since (folder-names.ts), else a listing.
 */
function findTwin(
  { tree, names }: TwinContext,
  relative: string,
  except: string | undefined,
  same: (name: string) => ((onDisk: string) => boolean) | null,
): SpellingTwin | null {
  const found = tree.find(relative)
  if (found.kind !== 'missing') return null
  let missing = relative
  let parent: Folder | null = found.parent
  if (parent === null) {
    const gone = tree.folder(relative.slice(0, relative.lastIndexOf('/')))
    if (gone instanceof Folder || gone.kind !== 'missing') return null
    missing = gone.at
    const above = tree.folder(
      missing.includes('/') ? missing.slice(0, missing.lastIndexOf('/')) : '',
    )
    if (!(above instanceof Folder)) return null
    parent = above
  }
  const slash = missing.lastIndexOf('/')
  const name = missing.slice(slash + 1)
  const matches = same(name)
  if (matches === null) return null
  // Another spelling of a name, or the name in another case, folds as the name does.
  const onDisk = names
    ? names.withFold(parent, foldName(name))
    : parent.list().map((dirent) => dirent.name)
  for (const entry of onDisk) {
    if (entry === name || !matches(entry)) continue
    const twin = slash < 0 ? entry : `${missing.slice(0, slash)}/${entry}`
    if (twin === except) continue
    const stats = parent.lstat(entry)
    if (!stats || !(stats.isFile() || stats.isDirectory())) continue
    return { relative: twin, kind: stats.isDirectory() ? 'folder' : 'file' }
  }
  return null
}

/**
 * How each action's refusal reads: its opening, its code, and whether the refused path would
 * make a twin (a create, a rename's destination) or only misses its entry (`reach`).
 */
const TWIN_WORDS: Readonly<
  Record<
    'create' | 'rename' | 'reach',
    {
      readonly lead: (virtual: string) => string
      readonly code: 'conflict' | 'not-found'
      readonly twinning: boolean
    }
  >
> = {
  create: { lead: (v) => `Error: Cannot create ${v}:`, code: 'conflict', twinning: true },
  rename: { lead: (v) => `Error: Cannot rename to ${v}:`, code: 'conflict', twinning: true },
  reach: {
    lead: (v) => `Error: The path ${v} cannot be reached:`,
    code: 'not-found',
    twinning: false,
  },
}

/** The step a refusal tells Claude to ask of the person. */
const ASK_THE_PERSON = 'Ask the person to rename it outside Cairn (in their file manager)'

/**
 * A refusal's words as the person reads them in the Memory tab: the step Claude is told to ask
 * of them is said to them, as the tab offers it (its Rename names the entry as the folder spells
 * it, and writes the new name the way memory paths do). Any other text comes back as it is.
 */
export function twinRefusalForPerson(text: string): string {
  return text.replaceAll(ASK_THE_PERSON, 'Rename it here in the Memory tab, keeping its name')
}

/**
 * Refuses a path that would make a look-alike twin of an entry in another spelling (`create`
 * of a new file, a `rename`'s destination), or that misses only because of the spelling
 * (`reach`: any command's existing path). Returns when there is no such entry, or when it is
 * `source` (a rename's own: see findSpellingTwin).
 */
export function refuseSpellingTwin(
  ctx: TwinContext,
  target: ParsedMemoryPath,
  action: 'create' | 'rename' | 'reach',
  source?: string,
): void {
  const twin = findSpellingTwin(ctx, target.relative, source)
  if (twin === null) {
    if (action !== 'reach') refuseCaseTwin(ctx, target, action, source)
    return
  }
  const { shown, folder } = twinPlace(twin)
  const words = TWIN_WORDS[action]
  const twinning = words.twinning
    ? `, and a second ${twin.kind} there would look exactly like it`
    : ''
  throw new CommandError(
    words.code,
    `${words.lead(target.virtual)} ${folder} holds the ${twin.kind} ${shown}, the same name written with other Unicode characters (such as an accent stored apart from its letter, as macOS writes names), put there outside Cairn. Memory paths use the composed spelling, which cannot name that ${twin.kind}${twinning}. ${ASK_THE_PERSON}${words.twinning ? ', or use another name' : ''}. Nothing was changed.`,
  )
}

// The twin's path as Claude sees it, escaped (`shown`), and the folder that holds it.
function twinPlace(twin: SpellingTwin): { shown: string; folder: string } {
  const slash = twin.relative.lastIndexOf('/')
  return {
    shown: `${MEMORY_ROOT}/${escapeInvisible(twin.relative)}`,
    folder: slash < 0 ? MEMORY_ROOT : `${MEMORY_ROOT}/${twin.relative.slice(0, slash)}`,
  }
}

/**
 * Refuses a `create` of a new name, or a `rename`'s destination, that differs only in letter
 * case from an entry the folder holds (`notes.md` beside `Notes.md`): a second entry Linux
 * keeps apart and macOS and Windows cannot. A rename of that entry itself (`Notes.md` to
 * `notes.md`, `source`) is a case change and passes. Twins already on disk stay readable:
 * only a path that would make one is refused.
 */
function refuseCaseTwin(
  ctx: TwinContext,
  target: ParsedMemoryPath,
  action: 'create' | 'rename',
  source: string | undefined,
): void {
  const twin = findCaseTwin(ctx, target.relative, source)
  if (twin === null) return
  const { shown, folder } = twinPlace(twin)
  throw new CommandError(
    'conflict',
    `${TWIN_WORDS[action].lead(target.virtual)} ${folder} holds the ${twin.kind} ${shown}, a name that differs only in letter case. macOS and Windows treat the two as one name, so a second ${twin.kind} would clash when the memory folder is copied or synced there. Use ${shown} itself, or another name. Nothing was changed.`,
  )
}
