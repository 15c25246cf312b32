import type { CairnApi, EventMap, EventName } from './contract'
import type { ApiResult } from './types'

/** Sends one request; resolves to the envelope main's dispatcher produced. */
export type Invoke = (channel: string, payload: unknown) => Promise<ApiResult<unknown>>
/** Subscribes to main's event stream; returns the unsubscribe function. */
export type Subscribe = (listener: (name: string, data: unknown) => void) => () => void

/**
 * Builds the `window.api` object: one named function per channel, grouped by domain
 * (`api.history.log(payload)`), plus `on(event, listener)`.
 *
 * Self-contained on purpose (no imports used at run time): the preload calls it with
 * ipcRenderer, and the e2e harness injects its source into the page with a binding, so
 * both expose exactly the same shape.
 */
export function buildApi(
  channels: ReadonlyArray<string>,
  invoke: Invoke,
  subscribe: Subscribe,
): CairnApi {
  const api: Record<string, Record<string, unknown>> = {}
  for (const channel of channels) {
    const [domain, verb] = channel.split(':') as [string, string]
    api[domain] ??= {}
    api[domain][verb] = (payload?: unknown) => invoke(channel, payload)
  }
  const on = <E extends EventName>(event: E, listener: (data: EventMap[E]) => void) =>
    subscribe((name, data) => {
      if (name === event) listener(data as EventMap[E])
    })
  return Object.freeze({ ...api, on }) as unknown as CairnApi
}
