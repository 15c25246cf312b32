import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react'
import type { RequestPayload } from '../../../../shared/contract'
import type { SyncStatus } from '../../../../shared/types'
import { api, errorMessage, unwrap } from '../../lib/api'
import { useMainEvent } from '../../lib/use-main-event'

/** Which sync dialog is open over the app. */
export type SyncDialog = 'conflicts' | 'join' | null

interface SyncStore {
  /** The last status main reported (null until the first answer). */
  readonly status: SyncStatus | null
  /** Why the status could not be read (null once a status came). */
  readonly loadError: string | null
  /** Reads the status again after `loadError` (the banner's Retry). */
  retryLoad(): void
  readonly dialog: SyncDialog
  openDialog(dialog: SyncDialog): void
  configure(payload: RequestPayload<'sync:configure'>): Promise<SyncStatus>
  syncNow(): Promise<SyncStatus>
  /** Stops the sync running; answers once it has stopped. */
  stopSync(): Promise<SyncStatus>
  resolve(payload: RequestPayload<'sync:resolve'>): Promise<SyncStatus>
  join(choice: 'merge' | 'use-remote'): Promise<SyncStatus>
  restoreBackup(name: string): Promise<SyncStatus>
}

const SyncContext = createContext<SyncStore | null>(null)

/**
 * Sync as main reports it (`sync:status`, then every `sync:state`). The join question opens
 * its dialog by itself, once per time it is asked.
 */
export function SyncProvider({ children }: { readonly children: ReactNode }) {
  const [status, setStatus] = useState<SyncStatus | null>(null)
  const [loadError, setLoadError] = useState<string | null>(null)
  const [attempt, setAttempt] = useState(0)
  const [dialog, setDialog] = useState<SyncDialog>(null)
  const [asked, setAsked] = useState(false)

  // A status that comes (answered or announced) ends a failed first read: the form shows
  // without the stale error above it.
  const take = useCallback((value: SyncStatus) => {
    setStatus(value)
    setLoadError(null)
  }, [])
  useMainEvent('sync:state', take, {
    load: () => unwrap(api().sync.status()),
    failed: (error) => setLoadError(errorMessage(error)),
    key: attempt,
  })
  const retryLoad = useCallback(() => {
    setLoadError(null)
    setAttempt((n) => n + 1)
  }, [])

  // The question is put to the person as soon as it arises; closing the dialog leaves it in
  // the indicator until answered.
  const question = status?.join ?? null
  if (question && !asked) {
    setAsked(true)
    setDialog('join')
  } else if (!question && asked) {
    setAsked(false)
  }

  const accept = useCallback(
    (value: SyncStatus) => {
      take(value)
      return value
    },
    [take],
  )

  const store = useMemo<SyncStore>(
    () => ({
      status,
      loadError,
      retryLoad,
      dialog,
      openDialog: setDialog,
      configure: (payload) => unwrap(api().sync.configure(payload)).then(accept),
      syncNow: () => unwrap(api().sync.now()).then(accept),
      stopSync: () => unwrap(api().sync.stop()).then(accept),
      resolve: (payload) => unwrap(api().sync.resolve(payload)).then(accept),
      join: (choice) => unwrap(api().sync.join({ choice })).then(accept),
      restoreBackup: (name) => unwrap(api().sync.restoreBackup({ name })).then(accept),
    }),
    [status, loadError, retryLoad, dialog, accept],
  )
  return <SyncContext.Provider value={store}>{children}</SyncContext.Provider>
}

export function useSync(): SyncStore {
  const store = useContext(SyncContext)
  if (!store) throw new Error('useSync must be used inside SyncProvider')
  return store
}
