import { useEffect, useState } from 'react'
import type { SyncStatus } from '../../../shared/types'
import { api, unwrap } from './api'

const nameOf = (status: SyncStatus): string =>
  status.config.machineName || status.config.defaultMachineName

/**
 * This machine's name as its commits carry it (`Machine:`), so views can tell changes made
 * here from changes that came from another machine. Null until known.
 */
export function useThisMachine(): string | null {
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
  return name
}

/** The machine a commit came from when it is not this one (null: made here, or unknown). */
export function otherMachine(
  commit: { readonly machine?: string | null },
  thisMachine: string | null,
): string | null {
  if (!commit.machine || thisMachine === null || commit.machine === thisMachine) return null
  return commit.machine
}
