/** Settings and the API key: see `createSettingsService`. */
export { createSettingsService } from './settings-service'
export { apiKeyProblem } from './api-key'
export type { ApiCredentials, SettingsService, SettingsServiceOptions } from './settings-service'
export {
  cipherFromSafeStorage,
  createFileSecretStore,
  createMemorySecretStore,
} from './secret-store'
export type { SafeStorageLike, SecretCipher, SecretStore, SecretStoreKind } from './secret-store'
export { DEFAULT_MODEL, DEFAULT_SETTINGS, readPinnedTheme } from './settings-file'
export { settingsHandlers, type SettingsHandlerOptions } from './handlers'
