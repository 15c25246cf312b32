import { rename } from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { settingFields } from '../../shared/contract'
import type { Settings } from '../../shared/types'
import { writeJsonAtomic } from '../lib/atomic-json'
import { isMissing, readPlainFileAsync } from '../lib/disk'
import { diskProblem, isDiskProblem } from '../lib/disk-errors'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
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

/** What `settings.json` held, and whether some of it could not be read. */
export interface ReadSettings {
  readonly settings: Settings
  /**
   * True when the file (or a value in it) could not be read and a default stands in: writing
   * the settings back would lose what the person wrote there, so it is kept aside first.
   */
  readonly unreadable: boolean
  /**
   * Why the disk failed the read (EIO, a denied permission), in words completing "because …":
   * the file may be sound, so it is neither kept aside nor written over, and read again next
   * time (rdisk30). The defaults stand in meanwhile.
   */
  readonly notRead?: string
}

/** Parses what `settings.json` held; anything unreadable becomes the default. */
export function parseSettings(raw: string): Settings {
  return readSettings(raw).settings
}

// Raw input: `{"model":"claude-sonnet-4-6","maxTokens":8192,"customInstructions":"…",…}`.
function readSettings(raw: string): ReadSettings {
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch {
    // Not JSON at all (a hand edit gone wrong): every setting falls back to its default.
    return { settings: DEFAULT_SETTINGS, unreadable: true }
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { settings: DEFAULT_SETTINGS, unreadable: true }
  }
  const fields = json as Record<string, unknown>
  const unreadable = Object.entries(settingFields).some(
    ([name, schema]) => name in fields && !schema.safeParse(fields[name]).success,
  )
  return { settings: settingsSchema.parse(json), unreadable }
}

/**
 * Reads `file`, falling back to the defaults when it is missing (a first start) or cannot be
 * read (told to `logger`, and said in `unreadable`).
 */
export async function readSettingsFile(file: string, logger: Logger): Promise<ReadSettings> {
  let raw: string
  try {
    // Never through a link nor waiting on a fifo: anything but a plain file is unreadable
    // (kept aside before the settings are written over it).
    raw = (await readPlainFileAsync(file, OWN_FILE_CAP.SETTINGS)).toString('utf8')
  } catch (error) {
    if (isMissing(error)) return { settings: DEFAULT_SETTINGS, unreadable: false }
    logger.warn('Could not read settings.json; using the defaults', error)
    const problem = diskProblem(error)
    if (problem && isDiskProblem(error)) {
      return { settings: DEFAULT_SETTINGS, unreadable: false, notRead: problem.reason }
    }
    return { settings: DEFAULT_SETTINGS, unreadable: true }
  }
  const read = readSettings(raw)
  if (read.unreadable) {
    logger.warn('settings.json holds something that is not a valid setting; defaults stand in')
  }
  return read
}

/**
 * The theme Settings pins (`light` or `dark`), read from `<dataDir>/settings.json` before the
 * core opens, so the window's first frame (the opening screen) is drawn in it; null for
 * `system`, and when the file cannot be read (the core says why once it opens).
 */
export async function readPinnedTheme(dataDir: string): Promise<'light' | 'dark' | null> {
  const quiet: Logger = { warn: () => undefined, error: () => undefined }
  const { settings } = await readSettingsFile(path.join(dataDir, 'settings.json'), quiet)
  return settings.theme === 'system' ? null : settings.theme
}

/**
 * Renames an unreadable `file` aside as `settings.json.unreadable-<time>` (the hand-written
 * text stays, for the person to copy from) before the settings are written over it. Returns
 * the new name.
 */
export async function keepUnreadableAside(file: string, now = new Date()): Promise<string> {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
  const kept = `${path.basename(file)}.unreadable-${stamp}`
  await rename(file, path.join(path.dirname(file), kept))
  return kept
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
