import { createContext, useContext, useState, type ReactNode } from 'react'
import type { SyncStatus } from '../../../shared/types'
import { api, unwrap } from './api'
import { useMainEvent } from './use-main-event'

const nameOf = (status: SyncStatus): string =>
  status.config.machineName || status.config.defaultMachineName

const ThisMachineContext = createContext<string | null>(null)

/**
 * Knows this machine's name as its commits carry it (`Machine:`), from `sync:status` and
 * every `sync:state`, once for the whole window, so views can tell changes made here from
 * changes that came from another machine.
 */
export function ThisMachineProvider({ children }: { readonly children: ReactNode }) {
  const [name, setName] = useState<string | null>(null)
  // Without an answer, every change reads as this machine's: nothing is mislabelled.
  useMainEvent('sync:state', (status) => setName(nameOf(status)), {
    load: () => unwrap(api().sync.status()),
  })
  return <ThisMachineContext.Provider value={name}>{children}</ThisMachineContext.Provider>
}

/** This machine's name; null until known (and outside a `ThisMachineProvider`). */
export function useThisMachine(): string | null {
  return useContext(ThisMachineContext)
}
