import { useEffect, useState } from 'react'
import type { AppInfo } from '../../../../shared/types'
import { api, errorMessage, unwrap } from '../../lib/api'

export type AppInfoState =
  | { readonly status: 'loading' }
  | { readonly status: 'ready'; readonly info: AppInfo }
  | { readonly status: 'error'; readonly message: string }

/** Loads `app:info` once: version, data folder and any start-up recovery report. */
export function useAppInfo(): AppInfoState {
  const [state, setState] = useState<AppInfoState>({ status: 'loading' })
  useEffect(() => {
    let live = true
    unwrap(api().app.info()).then(
      (info) => live && setState({ status: 'ready', info }),
      (error: unknown) => live && setState({ status: 'error', message: errorMessage(error) }),
    )
    return () => {
      live = false
    }
  }, [])
  return state
}
