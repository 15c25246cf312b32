import { ipcMain, type WebContents, type WebFrameMain } from 'electron'
import { requestChannels, eventChannel } from '../shared/channels'
import type { Core } from './core'

/**
 * Registers one `ipcMain.handle` per contract channel, each going through the core's single
 * dispatcher, and forwards the core's events to the window. Requests from any frame other
 * than our own top-level page are refused.
 */
export function registerIpc(
  core: Core,
  isTrustedFrame: (frame: WebFrameMain | null) => boolean,
): () => void {
  for (const channel of requestChannels) {
    ipcMain.handle(channel, async (event, payload: unknown) => {
      if (!isTrustedFrame(event.senderFrame)) {
        return { ok: false, error: { code: 'forbidden', message: 'Request refused.' } }
      }
      return core.dispatch(channel, payload)
    })
  }
  return () => {
    for (const channel of requestChannels) ipcMain.removeHandler(channel)
  }
}

/** Forwards every core event to one window's page. */
export function forwardEvents(core: Core, contents: WebContents): () => void {
  return core.events.on((name, data) => {
    if (!contents.isDestroyed()) contents.send(eventChannel, { name, data })
  })
}
