import { readFile } from 'node:fs/promises'
import { z } from 'zod'
import { settingFields } from '../../shared/contract'
import type { Settings } from '../../shared/types'
import { writeJsonAtomic } from '../lib/atomic-json'
import { isMissing } from '../lib/disk'
import type { Logger } from '../lib/logger'

/** A current Claude model that supports the memory tool and context editing. */
export const DEFAULT_MODEL = 'claude-sonnet-4-6'

export const DEFAULT_SETTINGS: Settings = {
  model: DEFAULT_MODEL,
  maxTokens: 8192,
  customInstructions: '',
  createExisting: 'overwrite',
  secretScanning: true,
  theme: 'system',
  reviewMode: 'off',
  expireAfterDays: null,
}

// Each field falls back on its own, so one bad value does not throw away the others.
const settingsSchema = z.object({
  model: settingFields.model.catch(DEFAULT_SETTINGS.model),
  maxTokens: settingFields.maxTokens.catch(DEFAULT_SETTINGS.maxTokens),
  customInstructions: settingFields.customInstructions.catch(DEFAULT_SETTINGS.customInstructions),
  createExisting: settingFields.createExisting.catch(DEFAULT_SETTINGS.createExisting),
  secretScanning: settingFields.secretScanning.catch(DEFAULT_SETTINGS.secretScanning),
  theme: settingFields.theme.catch(DEFAULT_SETTINGS.theme),
  reviewMode: settingFields.reviewMode.catch(DEFAULT_SETTINGS.reviewMode),
  expireAfterDays: settingFields.expireAfterDays.catch(DEFAULT_SETTINGS.expireAfterDays),
})

/** Parses what `settings.json` held; anything unreadable becomes the default. */
export function parseSettings(raw: string): Settings {
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch {
    // Not JSON at all (a hand edit gone wrong): every setting falls back to its default.
    return DEFAULT_SETTINGS
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return DEFAULT_SETTINGS
  return settingsSchema.parse(json)
}

/**
 * Reads `file`, falling back to the defaults when it is missing (a first start) or cannot be
 * read (told to `logger`).
 */
export async function readSettingsFile(file: string, logger: Logger): Promise<Settings> {
  let raw: string
  try {
    raw = await readFile(file, 'utf8')
  } catch (error) {
    if (!isMissing(error)) logger.warn('Could not read settings.json; using the defaults', error)
    return DEFAULT_SETTINGS
  }
  return parseSettings(raw)
}

/** Writes the settings atomically (never the API key: it is not part of `Settings`). */
export async function writeSettingsFile(
  file: string,
  settings: Settings,
  logger?: Logger,
): Promise<void> {
  const { model, maxTokens, customInstructions, createExisting, secretScanning, theme } = settings
  const { reviewMode, expireAfterDays } = settings
  await writeJsonAtomic(
    file,
    {
      model,
      maxTokens,
      customInstructions,
      createExisting,
      secretScanning,
      theme,
      reviewMode,
      expireAfterDays,
    },
    logger,
  )
}
