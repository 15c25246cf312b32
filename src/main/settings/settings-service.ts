import path from 'node:path'
import type { Settings, SettingsView } from '../../shared/types'
import { consoleLogger, type Logger } from '../lib/logger'
import { createSerialQueue } from '../lib/serial-queue'
import type { SecretStore } from './secret-store'
import { keepUnreadableAside, readSettingsFile, writeSettingsFile } from './settings-file'
import { isMissing } from '../lib/disk'
import { diskProblem } from '../lib/disk-errors'
import { CairnError } from '../lib/errors'
import { cleanApiKey, trimApiKey } from './api-key'

export interface SettingsServiceOptions {
  readonly dataDir: string
  readonly secretStore: SecretStore
  /** Where `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL` come from (process.env in the app). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Told when `settings.json` could not be read and the defaults stand in (default: console). */
  readonly logger?: Logger
  /**
   * Told each API key this service reads or is given (the variable's, the saved one, one being
   * saved), before anything is done with it: the core's logger hides every key it was told.
   */
  readonly onKeyKnown?: (key: string) => void
}

/** What the agent needs to reach the API. The key never leaves the main process. */
export interface ApiCredentials {
  readonly apiKey: string | null
  /** Where `apiKey` came from: saved in Settings, or `ANTHROPIC_API_KEY` (null: no key). */
  readonly apiKeySource: 'saved' | 'env' | null
  readonly baseURL: string | undefined
  /** `ANTHROPIC_LOG`, the SDK's own variable: how much it writes to the log (`warn` unset). */
  readonly logLevel?: string
}

/** Settings in `<dataDir>/settings.json` plus the API key in a `SecretStore`. */
export interface SettingsService {
  get(): Promise<Settings>
  /** What the renderer may see: settings, whether a key is set and where it lives. */
  view(): Promise<SettingsView>
  update(patch: Partial<Settings>): Promise<SettingsView>
  setApiKey(key: string): Promise<SettingsView>
  clearApiKey(): Promise<SettingsView>
  credentials(): Promise<ApiCredentials>
}

/** Opens the settings of `dataDir`. Writes are serialized; reads after the first are cached. */
export function createSettingsService(options: SettingsServiceOptions): SettingsService {
  const file = path.join(options.dataDir, 'settings.json')
  const env = options.env ?? {}
  const store = options.secretStore
  const logger = options.logger ?? consoleLogger
  let cached: Settings | null = null
  // What the person is told while settings.json could not be read (or once it was kept aside).
  let unreadable = false
  let problem: string | null = null

  // One change at a time, in call order; a failed one does not block the next.
  const serial = createSerialQueue().run
  const envKey = (): string | null => nonEmpty(env['ANTHROPIC_API_KEY'])
  const know = (key: string | null): void => {
    if (key !== null) options.onKeyKnown?.(key)
  }
  know(envKey())

  // Why the disk failed the last read of settings.json (null: it did not): not cached, so the
  // next call reads again, and no save writes over a file that may be sound.
  let notRead: string | null = null

  const get = async (): Promise<Settings> => {
    if (cached) return cached
    const read = await readSettingsFile(file, logger)
    notRead = read.notRead ?? null
    if (read.notRead !== undefined) return read.settings
    if (read.unreadable) {
      unreadable = true
      problem =
        'Your settings file (settings.json in your data folder) could not be read, so the defaults are shown where it could not. Changing a setting keeps that file aside first, so nothing you wrote in it is lost.'
    }
    cached = read.settings
    return cached
  }

  // A key saved in Settings wins over ANTHROPIC_API_KEY: saving it is the person's latest
  // explicit act (a key exported in a shell profile and later rotated once left them saving a
  // new key that was never used, while every turn failed with the old one).
  const view = async (): Promise<SettingsView> => {
    const settings = await get()
    // A saved key the disk failed to read is still saved: shown as saved, with why it could
    // not be read, never as none (the person would type a new key over theirs).
    let keyProblem: string | null = null
    const stored = await store.get().then(nonEmpty, (error: unknown) => {
      if (!(error instanceof CairnError)) throw error
      keyProblem = error.message
      return null
    })
    const apiKeySource: SettingsView['apiKeySource'] =
      stored !== null || keyProblem !== null ? store.kind : envKey() !== null ? 'env' : 'none'
    // Or a saved key's file found damaged (read as none: the variable's key, if any, is used,
    // and the person is told the file is damaged without being asked to save a key).
    const apiKeyProblem: string | null =
      keyProblem ??
      (stored === null && store.damaged && envKey() !== null
        ? 'Your saved key’s file (in your data folder) is damaged, so the key from ANTHROPIC_API_KEY is used. The file was left as it is; saving a key here keeps it aside first.'
        : (store.problem ?? null))
    const settingsProblem =
      notRead !== null
        ? `Your settings file (settings.json in your data folder) could not be read because ${notRead}, so the defaults are shown. It was left as it is and is read again next time; a change to a setting is not saved until it can be read.`
        : problem
    return {
      ...settings,
      hasApiKey: apiKeySource !== 'none',
      apiKeySource,
      envApiKey: envKey() !== null,
      dataDir: options.dataDir,
      ...(settingsProblem ? { settingsProblem } : {}),
      ...(apiKeyProblem ? { apiKeyProblem } : {}),
    }
  }

  // Before the first write over a file that could not be read: what it held is kept.
  const keepAside = async (): Promise<void> => {
    try {
      const kept = await keepUnreadableAside(file)
      problem = `Your settings file could not be read, so it was kept as ${kept} in your data folder and the settings you see are now saved. Copy anything you need from it.`
    } catch (error) {
      if (!isMissing(error)) {
        logger.warn('Could not keep the unreadable settings.json aside', error)
        const reason = diskProblem(error)?.reason ?? 'of an unexpected file system error'
        throw new CairnError(
          'io-error',
          `Settings were not saved: your settings file could not be read, and it could not be kept aside because ${reason}. Nothing was changed.`,
        )
      }
    }
    unreadable = false
  }

  return {
    get,
    view,
    update: (patch) =>
      serial(async () => {
        const next: Settings = { ...(await get()), ...definedOnly(patch) }
        if (notRead !== null) {
          // Written now, the defaults would replace a file that may be sound.
          throw new CairnError(
            'io-error',
            `Settings were not saved: your settings file could not be read because ${notRead}. It was left as it is; try again once the disk answers.`,
          )
        }
        if (unreadable) await keepAside()
        await writeSettingsFile(file, next, logger)
        cached = next
        return view()
      }),
    setApiKey: (key) =>
      serial(async () => {
        // Before it is checked or stored: a failing store's words may quote it.
        know(nonEmpty(key))
        await store.set(cleanApiKey(key))
        return view()
      }),
    clearApiKey: () =>
      serial(async () => {
        await store.clear()
        return view()
      }),
    async credentials() {
      const stored = nonEmpty(await store.get())
      const fromEnv = envKey()
      know(stored)
      return {
        apiKey: stored ?? fromEnv,
        apiKeySource: stored !== null ? 'saved' : fromEnv !== null ? 'env' : null,
        baseURL: nonEmpty(env['ANTHROPIC_BASE_URL']) ?? undefined,
        logLevel: env['ANTHROPIC_LOG']?.trim() || undefined,
      }
    },
  }
}

function nonEmpty(value: string | null | undefined): string | null {
  // A key saved before keys were checked may carry an invisible character at an end.
  const trimmed = value === null || value === undefined ? undefined : trimApiKey(value)
  return trimmed ? trimmed : null
}

function definedOnly(patch: Partial<Settings>): Partial<Settings> {
  return Object.fromEntries(
    Object.entries(patch).filter(([, value]) => value !== undefined),
  ) as Partial<Settings>
}
