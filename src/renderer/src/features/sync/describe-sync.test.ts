import { describe, expect, it } from 'vitest'
import type { SyncStatus } from '../../../../shared/types'
import { repeatedFailure, syncLabel } from './describe-sync'

const base: SyncStatus = {
  state: 'idle',
  lastSyncedAt: 1_000_000,
  conflicts: [],
  join: null,
  unsynced: 0,
  config: {
    url: 'https://example.com/me/memory.git',
    username: 'sam',
    hasToken: true,
    machineName: '',
    defaultMachineName: 'laptop',
    intervalMinutes: 10,
    insecure: false,
  },
  backups: [],
}
const now = 1_000_000 + 5 * 60_000

describe('the sync indicator’s words', () => {
  it('says when memory last synced, or what waits', () => {
    expect(syncLabel(base, now)).toMatchObject({ text: 'Synced 5 min ago', tone: 'quiet' })
    expect(syncLabel({ ...base, unsynced: 2 }, now)).toMatchObject({ text: '2 changes to sync' })
    expect(syncLabel({ ...base, state: 'off' }, now).text).toBe('Sync off')
    expect(syncLabel({ ...base, state: 'syncing' }, now).tone).toBe('busy')
  })

  it('names the failure, and the question before anything else', () => {
    const failed = syncLabel(
      { ...base, state: 'error', unsynced: 1, error: { code: 'sync-auth', message: 'Refused.' } },
      now,
    )
    expect(failed).toMatchObject({ text: 'The remote refused the token', tone: 'error' })
    expect(failed.detail).toContain('1 change not synced yet.')
    const asked = syncLabel(
      {
        ...base,
        state: 'error',
        error: { code: 'sync-join-needed', message: 'Choose.' },
        join: { reason: 'unrelated', remoteFiles: 3, localFiles: 2, remoteMachine: 'desktop' },
      },
      now,
    )
    expect(asked).toMatchObject({ text: 'Choose how to join', tone: 'attention' })
  })

  it('counts conflicts', () => {
    const conflict = {
      path: '/memories/a.md',
      kind: 'text' as const,
      oursLabel: 'laptop',
      theirsLabel: 'desktop',
      blocks: [],
      blockCount: 1,
      cut: false,
      otherPath: null,
      since: 'a'.repeat(40),
    }
    expect(syncLabel({ ...base, state: 'conflicts', conflicts: [conflict] }, now).text).toBe(
      '1 conflict to resolve',
    )
  })

  it('says when sync keeps failing the same way: how often, since when, what to do', () => {
    const failing: SyncStatus = {
      ...base,
      state: 'error',
      unsynced: 2,
      error: { code: 'sync-interrupted', message: 'The remote’s answer broke off.' },
      repeated: { count: 6, since: 1_000_000, advice: 'Try another network.' },
    }
    const label = syncLabel(failing, now)
    expect(label).toMatchObject({ text: 'Sync keeps failing', tone: 'error' })
    expect(label.detail).toContain('The last 6 syncs, since ')
    expect(label.detail).toContain(
      'failed the same way. The remote’s answer broke off. Try another network.',
    )
    expect(label.detail).toContain('2 changes not synced yet.')
    expect(repeatedFailure(failing, now)).toBe(label.detail.split(' 2 changes')[0])
    // Not yet repeated: the failure's own title and words.
    const once = syncLabel({ ...failing, repeated: undefined }, now)
    expect(once.text).toBe('Sync was interrupted')
    expect(repeatedFailure({ ...failing, repeated: undefined }, now)).toBeNull()
    // Failing more than one way: counted all the same, the latest named.
    const mixed = repeatedFailure(
      { ...failing, repeated: { ...failing.repeated!, mixed: true } },
      now,
    )
    expect(mixed).toContain(
      'failed, the latest this way: The remote’s answer broke off. Try another network.',
    )
    expect(mixed).not.toContain('the same way')
  })

  it('says a stopped sync plainly, not as an error, with what it left', () => {
    const stopped = syncLabel(
      {
        ...base,
        state: 'error',
        unsynced: 1,
        error: { code: 'sync-stopped', message: 'Sync stopped. Nothing was changed.' },
      },
      now,
    )
    expect(stopped).toMatchObject({ text: 'Sync stopped', tone: 'quiet' })
    expect(stopped.detail).toBe(
      'Sync stopped. Nothing was changed. 1 change not synced yet. Last synced 5 min ago.',
    )
  })
})
