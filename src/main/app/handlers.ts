import type { AppInfo, RecoveryReport } from '../../shared/types'
import type { EventBus } from '../lib/events'
import type { DomainHandlers } from '../lib/handlers'
import type { HostActions } from './host'

export interface AppHandlerOptions {
  /** Name, version, data folder and start-up recovery, as `app:info` answers them. */
  readonly info: AppInfo
  readonly host: HostActions
  /** The recovery reports so far, as `app:recoveries` answers them. */
  readonly recoveries: () => ReadonlyArray<RecoveryReport>
  /**
   * Forgets the report (by its id) the person dismissed, so `app:recoveries` no longer answers
   * it; throws for an id never given.
   */
  readonly dismissRecovery: (id: string) => void
  /** Where a dismissal is told to every window (`app:recoveryDismissed`). */
  readonly events: EventBus
}

/** Request handlers for the `app:*` channels: what the app is, and the shell's actions. */
export function appHandlers(options: AppHandlerOptions): DomainHandlers<'app'> {
  const { info, host, recoveries, dismissRecovery, events } = options
  return {
    'app:info': () => info,
    'app:recoveries': () => recoveries(),
    'app:dismissRecovery': ({ id }) => {
      dismissRecovery(id)
      // Every window hides it at once, even one whose copy the core no longer keeps.
      events.emit('app:recoveryDismissed', { id })
      return null
    },
    'app:openDataFolder': async () => {
      await host.openPath(info.dataDir)
      return null
    },
    'app:openExternal': async ({ url }) => {
      await host.openExternal(url)
      return null
    },
    'app:unsaved': ({ path }) => {
      host.noteUnsaved(path)
      return null
    },
    // A core that answers is open: the shell answers this itself while the core is opening.
    'app:opening': () => ({ state: 'ready' }),
  }
}
