/** What every command needs: the root, its open folders, the limits, policies and usage cache. */

import type { FolderTree } from '../lib/folders'
import type { Logger } from '../lib/logger'
import type { FolderNames } from './folder-names'
import type { UsageSource } from './usage'
import type { KeepsNoCopy, MemoryLimits, MemoryMutation, MemoryPolicy, WriteStager } from './types'

/** The per-call view of the tool's state that commands work with. */
export interface CommandContext {
  readonly root: string
  /** The memory folder for this one command: folders opened by handle, closed after it. */
  readonly tree: FolderTree
  readonly limits: MemoryLimits
  readonly policy: MemoryPolicy
  readonly usage: UsageSource
  /**
   * Folders renamed aside by a delete whose removal failed half-way (they are out of the
   * memory already); the next command tries again. Relative paths.
   */
  readonly leftovers: Set<string>
  /** Where best-effort steps that failed (a folder flush after a write) are reported. */
  readonly logger: Logger
  /** A dry run: every check runs, nothing is written; a success carries `planned`. */
  readonly dryRun?: boolean
  /** Not a dry run, but a success says what it changed (`made`), read before it writes. */
  readonly describe?: boolean
  /** Takes over a file write into an existing folder before it is flushed (the history's commit). */
  readonly stage?: WriteStager
  /** Told for a checked `delete` or `rename` just before it touches the folder. */
  readonly beforeMove?: (mutation: MemoryMutation, text?: string) => void
  /** Entries a folder delete keeps aside instead of removing (none when left out). */
  readonly keepsNoCopy?: KeepsNoCopy
  /** The names of folders the twin checks listed, kept between commands (folder-names.ts). */
  readonly names?: FolderNames
  /** Whether the host's history holds a version at `relative` (unknown when left out). */
  readonly versionedAt?: (relative: string) => Promise<boolean>
}
