import { createContext, useContext, useEffect, useState, type ReactNode } from 'react'
import type { SyncStatus } from '../../../shared/types'
import { api, unwrap } from './api'

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
  useEffect(() => {
    let live = true
    unwrap(api().sync.status()).then(
      (status) => live && setName(nameOf(status)),
      // Without an answer, every change reads as this machine's: nothing is mislabelled.
      () => undefined,
    )
    const off = api().on('sync:state', (status) => setName(nameOf(status)))
    return () => {
      live = false
      off()
    }
  }, [])
  return <ThisMachineContext.Provider value={name}>{children}</ThisMachineContext.Provider>
}

/** This machine's name; null until known (and outside a `ThisMachineProvider`). */
export function useThisMachine(): string | null {
  return useContext(ThisMachineContext)
}
