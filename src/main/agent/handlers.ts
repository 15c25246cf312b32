import type { Settings, SettingsView } from '../../shared/types'
import type { Handlers } from '../dispatcher'
import type { EventBus } from '../lib/events'
import { createConversationStore } from '../conversations'
import type { VersionedMemory } from '../history/types'
import { createRunnableMemoryTool } from '../memory/sdk-adapter'
import { createMemorySecretStore, createSettingsService, type SecretStore } from '../settings'
import { createChatService } from './chat-service'
import { clientFor, listModels, type AnthropicFetch } from './client'

/** The channels this domain answers: the chat, stored conversations and settings. */
export type AgentChannel =
  | 'chat:send'
  | 'chat:stop'
  | 'conversations:list'
  | 'conversations:get'
  | 'conversations:rename'
  | 'conversations:delete'
  | 'settings:get'
  | 'settings:update'
  | 'settings:setApiKey'
  | 'settings:clearApiKey'
  | 'settings:models'

export interface AgentDomainOptions {
  readonly dataDir: string
  readonly memory: VersionedMemory
  readonly events: EventBus
  /** Where the API key is kept; in memory only when absent (nothing written to disk). */
  readonly secretStore?: SecretStore
  /** `ANTHROPIC_API_KEY` / `ANTHROPIC_BASE_URL` come from here. */
  readonly env?: Readonly<Record<string, string | undefined>>
  readonly fetch?: AnthropicFetch
  /** The SDK's retries per request (default 2). */
  readonly maxRetries?: number
}

export interface AgentDomain {
  readonly handlers: Pick<Handlers, AgentChannel>
  /** Stops running turns and waits until they are stored. */
  close(): Promise<void>
}

/**
 * Builds the chat, conversations and settings services over one versioned memory and
 * returns their request handlers. Settings' memory policies are applied to the memory here,
 * at start-up and on every change.
 */
export async function createAgentDomain(options: AgentDomainOptions): Promise<AgentDomain> {
  const { memory, events } = options
  const settings = createSettingsService({
    dataDir: options.dataDir,
    secretStore: options.secretStore ?? createMemorySecretStore(),
    env: options.env,
  })
  const conversations = createConversationStore({ dataDir: options.dataDir })
  const applyPolicy = ({ createExisting, secretScanning }: Settings): void =>
    memory.setPolicy({ createExisting, secretScanning })
  applyPolicy(await settings.get())

  const chat = createChatService({
    conversations,
    settings,
    memory,
    createMemoryTool: createRunnableMemoryTool,
    emit: (event) => events.emit('agent:event', event),
    onConversationChanged: (id) => events.emit('conversations:changed', { id, deleted: false }),
    maxRetries: options.maxRetries,
    fetch: options.fetch,
  })

  const announce = (view: SettingsView): SettingsView => {
    events.emit('settings:changed', view)
    return view
  }

  const handlers: Pick<Handlers, AgentChannel> = {
    'chat:send': ({ conversationId, text }) => chat.send(conversationId, text),
    'chat:stop': ({ conversationId }) => {
      chat.stop(conversationId)
      return null
    },
    'conversations:list': ({ query }) => conversations.list(query),
    'conversations:get': ({ id }) => conversations.get(id),
    'conversations:rename': async ({ id, title }) => {
      const summary = await conversations.rename(id, title)
      events.emit('conversations:changed', { id, deleted: false })
      return summary
    },
    'conversations:delete': async ({ id }) => {
      chat.stop(id)
      await chat.settled(id)
      await conversations.delete(id)
      events.emit('conversations:changed', { id, deleted: true })
      return null
    },
    'settings:get': () => settings.view(),
    'settings:update': async (patch) => {
      const view = await settings.update(patch)
      if (patch.createExisting !== undefined || patch.secretScanning !== undefined) {
        applyPolicy(view)
      }
      return announce(view)
    },
    'settings:setApiKey': async ({ key }) => announce(await settings.setApiKey(key)),
    'settings:clearApiKey': async () => announce(await settings.clearApiKey()),
    'settings:models': async () => {
      const [current, credentials] = await Promise.all([settings.get(), settings.credentials()])
      return listModels(
        clientFor(credentials, { maxRetries: 0, fetch: options.fetch }),
        current.model,
      )
    },
  }
  return { handlers, close: () => chat.close() }
}
