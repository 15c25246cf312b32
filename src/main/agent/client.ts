import Anthropic from '@anthropic-ai/sdk'
import type { ModelInfo } from '../../shared/types'
import { CairnError } from '../lib/errors'
import type { Logger } from '../lib/logger'
import type { ApiCredentials, SettingsService } from '../settings'
import { DEFAULT_REPLY_LIMITS, watchSilence, type ReplyLimits } from './reply-limits'

export const DEFAULT_BASE_URL = 'https://api.anthropic.com'

/** The Fetch the SDK accepts (injectable for tests and proxies). */
export type AnthropicFetch = NonNullable<ConstructorParameters<typeof Anthropic>[0]>['fetch']

export interface ClientConfig {
  readonly apiKey: string
  /** `ANTHROPIC_BASE_URL`; the public API when absent. */
  readonly baseURL?: string
  /** The SDK's own retries (429, 5xx, connection errors); Cairn adds no second layer. */
  readonly maxRetries?: number
  readonly fetch?: AnthropicFetch
  /**
   * Where the SDK's own warnings and errors go (the console when absent). The SDK writes what
   * it could not read of a reply (an event's data, raw) to its logger: Cairn's hides the key.
   */
  readonly logger?: Logger
  /**
   * `ANTHROPIC_LOG` (off, error, warn, info, debug): how much of the SDK's own logging reaches
   * `logger`. The SDK reads the variable only when given no level, and Cairn gives one, so it
   * is passed on here; anything else is `warn`, the SDK's default.
   */
  readonly logLevel?: string
  /**
   * How long a request waits for the response's head, and a streamed reply may stay silent
   * (`DEFAULT_REPLY_LIMITS` when absent; tests pass short ones).
   */
  readonly replyLimits?: ReplyLimits
}

/**
 * An SDK client configured only from what Cairn passes: the key and base URL are explicit, so
 * the SDK does not pick up other credentials from the environment.
 */
export function createAnthropicClient(config: ClientConfig): Anthropic {
  const limits = config.replyLimits ?? DEFAULT_REPLY_LIMITS
  return new Anthropic({
    apiKey: config.apiKey,
    baseURL: config.baseURL ?? DEFAULT_BASE_URL,
    maxRetries: config.maxRetries ?? 2,
    // The SDK's timeout covers the wait for the head only; the silence after it is watched below.
    timeout: limits.firstByteMs,
    fetch: watchSilence(config.fetch, limits.silenceMs),
    ...(config.logger
      ? { logger: sdkLogger(config.logger), logLevel: sdkLogLevel(config.logLevel) }
      : {}),
  })
}

const SDK_LOG_LEVELS = ['off', 'error', 'warn', 'info', 'debug'] as const

function sdkLogLevel(level: string | undefined): (typeof SDK_LOG_LEVELS)[number] {
  const known = SDK_LOG_LEVELS.find((name) => name === level?.toLowerCase())
  return known ?? 'warn'
}

/**
 * The SDK's logger over Cairn's, so whatever it writes is hidden as every log line is: its
 * warnings and errors with what came along, and its info and debug lines (each request and
 * response, its headers among them) only when `ANTHROPIC_LOG` asks for them.
 */
function sdkLogger(
  logger: Logger,
): NonNullable<ConstructorParameters<typeof Anthropic>[0]>['logger'] {
  const along = (rest: ReadonlyArray<unknown>): unknown =>
    rest.length === 0 ? undefined : rest.length === 1 ? rest[0] : rest
  return {
    error: (message, ...rest) => logger.error(`The Anthropic SDK: ${message}`, along(rest)),
    warn: (message, ...rest) => logger.warn(`The Anthropic SDK: ${message}`, along(rest)),
    info: (message, ...rest) => logger.warn(`The Anthropic SDK (info): ${message}`, along(rest)),
    debug: (message, ...rest) => logger.warn(`The Anthropic SDK (debug): ${message}`, along(rest)),
  }
}

/**
 * Why `ANTHROPIC_BASE_URL` cannot be used, in words for people (null when it can, or is unset).
 * The SDK would fail on it at request time as an "Invalid URL" (shown as an unknown failure) or
 * a connection error (shown as "check your internet connection"), sending the person to the
 * wrong place; `localhost:8080` without a scheme is an easy mistake, and so is a proxy address
 * with its login in it (`http://user:pass@proxy`), which Node's fetch refuses to send. The value
 * itself is never quoted back: it may hold a host path or a password.
 */
export function baseUrlProblem(baseURL: string | undefined): string | null {
  if (baseURL === undefined) return null
  let url: URL
  try {
    url = new URL(baseURL)
  } catch {
    return invalidBaseUrl('is not a web address')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return invalidBaseUrl('does not start with http:// or https://')
  }
  if (url.username !== '' || url.password !== '') {
    return 'The ANTHROPIC_BASE_URL environment variable holds a user name or password (a user:password@ part), which Cairn cannot send in an address, so it cannot reach the API through it. Remove them from the address where it is set (the proxy has to let Cairn in without them), then restart Cairn.'
  }
  // The SDK appends each API path to the address as text: after a `?` or `#` the path would
  // land in the query or the fragment and every request would go to the wrong place.
  if (url.search !== '' || url.hash !== '' || /[?#]/.test(baseURL)) {
    return invalidBaseUrl(
      'holds a ?query or #fragment part, after which the API paths cannot be added',
    )
  }
  return null
}

const invalidBaseUrl = (reason: string) =>
  `The ANTHROPIC_BASE_URL environment variable ${reason}, so Cairn cannot reach the API through it. It must be an http:// or https:// address, such as https://api.anthropic.com. Fix or unset it where it is set, then restart Cairn.`

/** A client for `credentials`, or null when no API key is set. */
export function clientFor(
  credentials: ApiCredentials,
  options: Pick<ClientConfig, 'maxRetries' | 'fetch' | 'logger' | 'replyLimits'>,
): Anthropic | null {
  if (!credentials.apiKey) return null
  return createAnthropicClient({
    apiKey: credentials.apiKey,
    baseURL: credentials.baseURL,
    logLevel: credentials.logLevel,
    ...options,
  })
}

/** How many models one `models.list` call asks for (far more than the API has). */
const MODELS_PAGE_SIZE = 100

/** How long the models list may take before the picker falls back (the SDK's default is 10 min). */
export const MODELS_TIMEOUT_MS = 15_000

/**
 * The models the settings' key can use (`settings:models`), the current model first when the
 * API does not list it. One request, no retries: the picker must not hang. An
 * `ANTHROPIC_BASE_URL` the chat would refuse is refused here too (`invalid-base-url`, in the
 * chat's words), before any request: the SDK would send the list's request into the query or
 * nowhere, and the picker would fall back without saying why.
 */
export async function availableModels(
  settings: Pick<SettingsService, 'get' | 'credentials'>,
  options: Pick<ClientConfig, 'fetch' | 'logger'> = {},
): Promise<ReadonlyArray<ModelInfo>> {
  const [current, credentials] = await Promise.all([settings.get(), settings.credentials()])
  // Without a key no request is made (the fallback list), as a chat says "no key" first.
  const urlProblem = credentials.apiKey ? baseUrlProblem(credentials.baseURL) : null
  if (urlProblem) throw new CairnError('invalid-base-url', urlProblem)
  return listModels(
    clientFor(credentials, { maxRetries: 0, fetch: options.fetch, logger: options.logger }),
    current.model,
  )
}

/** Shown when no key is set or the models list cannot be fetched. */
export const FALLBACK_MODELS: ReadonlyArray<ModelInfo> = [
  { id: 'claude-sonnet-4-6', displayName: 'Claude Sonnet 4.6' },
  { id: 'claude-opus-4-6', displayName: 'Claude Opus 4.6' },
  { id: 'claude-haiku-4-5', displayName: 'Claude Haiku 4.5' },
]

/**
 * The models the key can use, from the API's models list (newest first, as the API orders
 * them); the fallback list when there is no client or the call fails. `current` is always
 * included so a model chosen earlier stays selectable.
 */
export async function listModels(
  client: Anthropic | null,
  current: string,
  timeoutMs = MODELS_TIMEOUT_MS,
): Promise<ReadonlyArray<ModelInfo>> {
  let models: ReadonlyArray<ModelInfo> = FALLBACK_MODELS
  if (client) {
    try {
      // Its own timeout: an API that accepts the connection and never answers must not
      // leave the picker waiting.
      const page = await client.models.list({ limit: MODELS_PAGE_SIZE }, { timeout: timeoutMs })
      const listed = page.data.map((m) => ({ id: m.id, displayName: m.display_name || m.id }))
      if (listed.length > 0) models = listed
    } catch {
      // Offline, no answer in time, or a bad key: the chat reports that clearly (a turn fails with its reason);
      // the picker keeps working with the fallback list.
    }
  }
  return models.some((m) => m.id === current)
    ? models
    : [{ id: current, displayName: current }, ...models]
}
