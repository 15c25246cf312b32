import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron'
import { buildApi } from '../shared/build-api'
import { eventChannel, requestChannels } from '../shared/channels'
import type { ApiResult } from '../shared/types'

// window.api: named functions from the contract, never ipcRenderer itself.
const api = buildApi(
  requestChannels,
  (channel, payload) => ipcRenderer.invoke(channel, payload) as Promise<ApiResult<unknown>>,
  (listener) => {
    const handler = (_event: IpcRendererEvent, message: { name: string; data: unknown }) =>
      listener(message.name, message.data)
    ipcRenderer.on(eventChannel, handler)
    return () => ipcRenderer.removeListener(eventChannel, handler)
  },
)

contextBridge.exposeInMainWorld('api', api)
