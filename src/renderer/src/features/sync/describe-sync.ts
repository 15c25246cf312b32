import type { SyncStatus } from '../../../../shared/types'
import { errorTitle } from '../../lib/error-title'
import { relativeTime, shortDateTime } from '../../lib/format'

/** How the sync indicator looks: its words, and how much it asks for attention. */
export interface SyncLabel {
  readonly text: string
  readonly tone: 'quiet' | 'busy' | 'attention' | 'error'
  /** The longer sentence (tooltip, settings). */
  readonly detail: string
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`
}

/** The title of a sync that keeps failing the same way. */
export const KEEPS_FAILING = 'Sync keeps failing'

/**
 * What a sync that keeps failing the same way tells the person: how often since when, what
 * failed and what they can do (null while it does not keep failing).
 */
export function repeatedFailure(status: SyncStatus, now: number): string | null {
  if (!status.repeated || !status.error) return null
  const { count, since, advice, mixed } = status.repeated
  const how = mixed ? 'failed, the latest this way:' : 'failed the same way.'
  return `The last ${count} syncs, since ${shortDateTime(since, now)}, ${how} ${status.error.message} ${advice}`
}

/** The indicator's words for a status; `now` for "synced 2 min ago". */
export function syncLabel(status: SyncStatus, now: number): SyncLabel {
  const last = status.lastSyncedAt ? `Last synced ${relativeTime(status.lastSyncedAt, now)}.` : ''
  if (status.state === 'off') {
    return { text: 'Sync off', tone: 'quiet', detail: 'Memory stays on this machine.' }
  }
  if (status.state === 'syncing') {
    return { text: 'Syncing…', tone: 'busy', detail: 'Bringing memory in step with the remote.' }
  }
  if (status.join) {
    return {
      text: 'Choose how to join',
      tone: 'attention',
      detail: status.error?.message ?? 'The remote holds another machine’s memory.',
    }
  }
  if (status.state === 'error' && status.error?.code === 'sync-stopped') {
    // The person's own Stop: no error, what the stopped sync left and what comes next.
    const waiting =
      status.unsynced > 0 ? ` ${plural(status.unsynced, 'change', 'changes')} not synced yet.` : ''
    return {
      text: 'Sync stopped',
      tone: 'quiet',
      detail: `${status.error.message}${waiting} ${last}`.trim(),
    }
  }
  if (status.state === 'error' && status.error) {
    const waiting =
      status.unsynced > 0 ? ` ${plural(status.unsynced, 'change', 'changes')} not synced yet.` : ''
    const repeated = repeatedFailure(status, now)
    return {
      text: repeated ? KEEPS_FAILING : errorTitle(status.error.code),
      tone: 'error',
      detail: `${repeated ?? status.error.message}${waiting} ${last}`.trim(),
    }
  }
  if (status.state === 'conflicts') {
    return {
      text: plural(status.conflicts.length, 'conflict to resolve', 'conflicts to resolve'),
      tone: 'attention',
      detail: 'Both versions are kept in the file until you choose.',
    }
  }
  if (status.unsynced > 0) {
    return {
      text: plural(status.unsynced, 'change to sync', 'changes to sync'),
      tone: 'busy',
      detail: `Waiting to send ${plural(status.unsynced, 'change', 'changes')}. ${last}`.trim(),
    }
  }
  return {
    text: status.lastSyncedAt ? `Synced ${relativeTime(status.lastSyncedAt, now)}` : 'Synced',
    tone: 'quiet',
    detail: `Memory is in step with the remote. ${last}`.trim(),
  }
}
