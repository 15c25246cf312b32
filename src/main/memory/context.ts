/** What every command needs: the real root, the limits, the policies and the usage cache. */

import type { Logger } from '../lib/logger'
import type { UsageSource } from './usage'
import type { MemoryLimits, MemoryPolicy } from './types'

/** The per-call view of the tool's state that commands work with. */
export interface CommandContext {
  readonly root: string
  readonly limits: MemoryLimits
  readonly policy: MemoryPolicy
  readonly usage: UsageSource
  /** Where best-effort steps that failed (a folder flush after a write) are reported. */
  readonly logger: Logger
  /** A dry run: every check runs, nothing is written; a success carries `planned`. */
  readonly dryRun?: boolean
}
