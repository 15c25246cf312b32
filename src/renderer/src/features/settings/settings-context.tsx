import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react'
import type { RequestPayload } from '../../../../shared/contract'
import type { SettingsView } from '../../../../shared/types'
import { api, errorMessage, unwrap } from '../../lib/api'
import { useMainEvent } from '../../lib/use-main-event'

export type SettingsState =
  | { readonly status: 'loading' }
  | { readonly status: 'ready'; readonly settings: SettingsView }
  | { readonly status: 'error'; readonly message: string }

interface SettingsStore {
  readonly state: SettingsState
  reload(): void
  /** Saves a change; resolves to the new settings or throws an `ApiError`. */
  update(patch: RequestPayload<'settings:update'>): Promise<SettingsView>
  setApiKey(key: string): Promise<SettingsView>
  clearApiKey(): Promise<SettingsView>
}

const SettingsContext = createContext<SettingsStore | null>(null)

/** Settings as main reports them (`settings:get`, then every `settings:changed`). */
export function SettingsProvider({ children }: { readonly children: ReactNode }) {
  const [state, setState] = useState<SettingsState>({ status: 'loading' })
  const [attempt, setAttempt] = useState(0)

  useMainEvent('settings:changed', (settings) => setState({ status: 'ready', settings }), {
    load: () => unwrap(api().settings.get()),
    failed: (error) => setState({ status: 'error', message: errorMessage(error) }),
    key: attempt,
  })

  const accept = useCallback((settings: SettingsView) => {
    setState({ status: 'ready', settings })
    return settings
  }, [])

  const store = useMemo<SettingsStore>(
    () => ({
      state,
      reload: () => {
        setState({ status: 'loading' })
        setAttempt((n) => n + 1)
      },
      update: (patch) => unwrap(api().settings.update(patch)).then(accept),
      setApiKey: (key) => unwrap(api().settings.setApiKey({ key })).then(accept),
      clearApiKey: () => unwrap(api().settings.clearApiKey()).then(accept),
    }),
    [state, accept],
  )
  return <SettingsContext.Provider value={store}>{children}</SettingsContext.Provider>
}

/** The app's settings store (see `SettingsProvider`). */
export function useSettings(): SettingsStore {
  const store = useContext(SettingsContext)
  if (!store) throw new Error('useSettings must be used inside SettingsProvider')
  return store
}
