import { readFile } from 'node:fs/promises'
import { z } from 'zod'
import { settingFields } from '../../shared/contract'
import type { Settings } from '../../shared/types'
import { writeJsonAtomic } from '../lib/atomic-json'

/** A current Claude model that supports the memory tool and context editing. */
export const DEFAULT_MODEL = 'claude-sonnet-4-6'

export const DEFAULT_SETTINGS: Settings = {
  model: DEFAULT_MODEL,
  maxTokens: 8192,
  customInstructions: '',
  createExisting: 'overwrite',
  secretScanning: true,
  theme: 'system',
}

// Each field falls back on its own, so one bad value does not throw away the others.
const settingsSchema = z.object({
  model: settingFields.model.catch(DEFAULT_SETTINGS.model),
  maxTokens: settingFields.maxTokens.catch(DEFAULT_SETTINGS.maxTokens),
  customInstructions: settingFields.customInstructions.catch(DEFAULT_SETTINGS.customInstructions),
  createExisting: settingFields.createExisting.catch(DEFAULT_SETTINGS.createExisting),
  secretScanning: settingFields.secretScanning.catch(DEFAULT_SETTINGS.secretScanning),
  theme: settingFields.theme.catch(DEFAULT_SETTINGS.theme),
})

/** Parses what `settings.json` held; anything unreadable becomes the default. */
export function parseSettings(raw: string): Settings {
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch {
    return DEFAULT_SETTINGS
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return DEFAULT_SETTINGS
  return settingsSchema.parse(json)
}

/** Reads `file`, falling back to the defaults when it is missing or corrupt. */
export async function readSettingsFile(file: string): Promise<Settings> {
  try {
    return parseSettings(await readFile(file, 'utf8'))
  } catch {
    return DEFAULT_SETTINGS
  }
}

/** Writes the settings atomically (never the API key: it is not part of `Settings`). */
export async function writeSettingsFile(file: string, settings: Settings): Promise<void> {
  const { model, maxTokens, customInstructions, createExisting, secretScanning, theme } = settings
  await writeJsonAtomic(file, {
    model,
    maxTokens,
    customInstructions,
    createExisting,
    secretScanning,
    theme,
  })
}
