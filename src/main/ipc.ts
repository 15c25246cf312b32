import { ipcMain, type WebContents, type WebFrameMain } from 'electron'
import { requestChannels, eventChannel } from '../shared/channels'
import type { EventMap, EventName } from '../shared/contract'
import type { ApiResult, OpeningState, OpeningUpdate } from '../shared/types'
import type { Core } from './core'

/** What the shell knows of the core while it registers: open, still opening, or gone. */
export interface CoreSlot {
  /** The core once it is open (null while it opens, and after it closed). */
  readonly core: () => Core | null
  /** How far the opening is while it runs; null once it ended (open, failed or closed). */
  readonly opening: () => OpeningUpdate | null
}

/**
 * Registers one `ipcMain.handle` per contract channel, each going through the core's single
 * dispatcher, and forwards the core's events to the window. Requests from any frame other
 * than our own top-level page are refused. Registered before the core is open, so the window
 * can show the opening at once: until then `app:opening` is answered here, with how far it
 * is, and every other channel is refused with `starting`, in plain words (never a hang).
 */
export function registerIpc(
  slot: CoreSlot,
  isTrustedFrame: (frame: WebFrameMain | null) => boolean,
): () => void {
  for (const channel of requestChannels) {
    ipcMain.handle(channel, async (event, payload: unknown): Promise<ApiResult<unknown>> => {
      if (!isTrustedFrame(event.senderFrame)) {
        return { ok: false, error: { code: 'forbidden', message: 'Request refused.' } }
      }
      const core = slot.core()
      if (core) return core.dispatch(channel, payload)
      const opening = slot.opening()
      if (opening && channel === 'app:opening') {
        const state: OpeningState = { state: 'opening', ...opening }
        return { ok: true, value: state }
      }
      return opening
        ? {
            ok: false,
            error: {
              code: 'starting',
              message: 'Cairn is still opening your memory. Try again once it is open.',
            },
          }
        : { ok: false, error: { code: 'closed', message: 'Cairn is closing.' } }
    })
  }
  return () => {
    for (const channel of requestChannels) ipcMain.removeHandler(channel)
  }
}

/** Sends one event to a window's page (the shell's own, before the core is open). */
export function sendEvent<E extends EventName>(
  contents: WebContents,
  name: E,
  data: EventMap[E],
): void {
  if (!contents.isDestroyed()) contents.send(eventChannel, { name, data })
}

/** Forwards every core event to one window's page. */
export function forwardEvents(core: Core, contents: WebContents): () => void {
  return core.events.on((name, data) => {
    if (!contents.isDestroyed()) contents.send(eventChannel, { name, data })
  })
}
