import path from 'node:path'
import { createDispatcher, type Dispatch, type Handlers } from './dispatcher'
import { CairnError } from './errors'
import { createEventBus, type EventBus } from './events'
import { openVersionedMemory } from './history'
import { createHistoryHandlers } from './history/handlers'
import { createAgentDomain } from './agent/handlers'
import type { AnthropicFetch } from './agent/client'
import type { SecretStore } from './settings'

/** What only the desktop shell can do; the e2e harness passes a recorder instead. */
export interface HostActions {
  openPath(folder: string): Promise<void>
  openExternal(url: string): Promise<void>
}

export interface CoreOptions {
  /** Everything Cairn stores lives under this folder (Electron's userData in the app). */
  readonly dataDir: string
  readonly appVersion?: string
  readonly host?: HostActions
  /** Called for errors that were not meant for people (they reach the UI as `internal`). */
  readonly onUnexpectedError?: (channel: string, error: unknown) => void
  /** Keeps the API key: the app passes a file store over Electron's safeStorage; default in memory. */
  readonly secretStore?: SecretStore
  /** Source of `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL` (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** fetch for the Anthropic SDK (tests, proxies). */
  readonly fetch?: AnthropicFetch
  /** The SDK's retries per API request (default 2; tests pass 0). */
  readonly anthropicMaxRetries?: number
}

/** Every main-process service, built from a data folder alone (no Electron). */
export interface Core {
  readonly dataDir: string
  readonly dispatch: Dispatch
  readonly events: EventBus
  close(): Promise<void>
}

const noHost: HostActions = {
  async openPath() {
    throw new CairnError('unsupported', 'Opening folders is only available in the desktop app.')
  },
  async openExternal() {
    throw new CairnError('unsupported', 'Opening links is only available in the desktop app.')
  },
}

/** The composition root: tests, benchmarks, the e2e harness and the app all start here. */
export async function createCore(options: CoreOptions): Promise<Core> {
  const dataDir = path.resolve(options.dataDir)
  const events = createEventBus()
  const host = options.host ?? noHost
  const memory = await openVersionedMemory({ dataDir })
  memory.onCommit((commit) => events.emit('history:commit', commit))
  memory.onNotice((notice) => events.emit('memory:notice', notice))
  let agent: Awaited<ReturnType<typeof createAgentDomain>>
  try {
    agent = await createAgentDomain({
      dataDir,
      memory,
      events,
      secretStore: options.secretStore,
      env: options.env ?? process.env,
      fetch: options.fetch,
      maxRetries: options.anthropicMaxRetries,
    })
  } catch (error) {
    // The data folder's lock is released, so a retry (or another window) can open it.
    await memory.close()
    throw error
  }

  const handlers: Handlers = {
    'app:info': () => ({
      name: 'Cairn',
      version: options.appVersion ?? '0.0.0',
      dataDir,
      recovery: memory.recovery,
    }),
    'app:openDataFolder': async () => {
      await host.openPath(dataDir)
      return null
    },
    'app:openExternal': async ({ url }) => {
      await host.openExternal(url)
      return null
    },
    ...createHistoryHandlers(memory),
    ...agent.handlers,
  }

  const dispatch = createDispatcher(handlers, { onUnexpectedError: options.onUnexpectedError })
  return {
    dataDir,
    dispatch,
    events,
    async close() {
      await agent.close()
      await memory.close()
    },
  }
}
