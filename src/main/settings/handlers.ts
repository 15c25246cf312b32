import type { ModelInfo, SettingsView } from '../../shared/types'
import type { EventBus } from '../lib/events'
import type { DomainHandlers } from '../lib/handlers'
import type { SettingsService } from './settings-service'

export interface SettingsHandlerOptions {
  readonly settings: SettingsService
  readonly events: EventBus
  /** Told after every change that was saved (e.g. to apply the memory policies). */
  readonly onChange: (view: SettingsView) => void
  /** The models the key can use, for the picker (the chat knows how to ask the API). */
  readonly models: () => Promise<ReadonlyArray<ModelInfo>>
}

/** Request handlers for the `settings:*` channels; every change is announced as `settings:changed`. */
export function settingsHandlers(options: SettingsHandlerOptions): DomainHandlers<'settings'> {
  const { settings, events } = options
  const changed = (view: SettingsView): SettingsView => {
    options.onChange(view)
    events.emit('settings:changed', view)
    return view
  }
  return {
    'settings:get': () => settings.view(),
    'settings:update': async (patch) => changed(await settings.update(patch)),
    'settings:setApiKey': async ({ key }) => changed(await settings.setApiKey(key)),
    'settings:clearApiKey': async () => changed(await settings.clearApiKey()),
    'settings:models': () => options.models(),
  }
}
