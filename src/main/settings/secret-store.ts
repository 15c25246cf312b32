import { rm } from 'node:fs/promises'
import { readPlainFileAsync } from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { z } from 'zod'
import { writeJsonAtomic } from '../lib/atomic-json'
import { diskProblem, isDiskProblem } from '../lib/disk-errors'
import { CairnError } from '../lib/errors'

/**
 * Where the API key lives. `os`: encrypted by the OS keychain; `plaintext`: on disk in a form
 * anyone with the file can read (Linux without a keyring); `memory`: only in this process.
 */
export type SecretStoreKind = 'os' | 'plaintext' | 'memory'

/** Holds one secret, the Anthropic API key. */
export interface SecretStore {
  /** How the key is protected right now (may change, e.g. when a keyring becomes available). */
  readonly kind: SecretStoreKind
  get(): Promise<string | null>
  set(value: string): Promise<void>
  clear(): Promise<void>
}

/** A store that forgets on restart: for tests and the e2e harness. */
export function createMemorySecretStore(initial: string | null = null): SecretStore {
  let value = initial
  return {
    kind: 'memory',
    async get() {
      return value
    },
    async set(next) {
      value = next
    },
    async clear() {
      value = null
    },
  }
}

/**
 * The encryption the app injects: Electron's `safeStorage` in the desktop app, without this
 * module importing Electron. `backend()` is `safeStorage.getSelectedStorageBackend()` on Linux
 * (`basic_text` means a hard-coded password, i.e. no real protection) and anything else elsewhere.
 */
export interface SecretCipher {
  isEncryptionAvailable(): boolean
  encrypt(plain: string): Uint8Array
  decrypt(data: Uint8Array): string
  backend(): string
}

/** The part of Electron's `safeStorage` Cairn uses (structural, so nothing imports Electron). */
export interface SafeStorageLike {
  isEncryptionAvailable(): boolean
  encryptString(plainText: string): Uint8Array
  decryptString(encrypted: Buffer): string
  /** Linux only in Electron; absent or throwing elsewhere. */
  getSelectedStorageBackend?(): string
}

/**
 * Adapts Electron's `safeStorage` to `SecretCipher`:
 * `createFileSecretStore({ file, cipher: cipherFromSafeStorage(safeStorage) })` in `index.ts`.
 */
export function cipherFromSafeStorage(safeStorage: SafeStorageLike): SecretCipher {
  return {
    isEncryptionAvailable: () => safeStorage.isEncryptionAvailable(),
    encrypt: (plain) => safeStorage.encryptString(plain),
    decrypt: (data) => safeStorage.decryptString(Buffer.from(data)),
    backend: () => {
      try {
        return safeStorage.getSelectedStorageBackend?.() ?? 'os'
      } catch {
        // Only Linux has backends; elsewhere the call may throw, and the OS keychain is used.
        return 'os'
      }
    },
  }
}

const secretFile = z.object({
  version: z.literal(1),
  /** `cipher`: bytes from `SecretCipher.encrypt`; `plain`: UTF-8, only when no cipher works. */
  encoding: z.enum(['cipher', 'plain']),
  data: z.string(),
})

/**
 * Keeps the key in `file` (mode 0600, atomic writes), encrypted through `cipher` when
 * encryption is available, as plain base64 otherwise — reported as `kind: 'plaintext'` so the
 * UI can warn.
 */
export function createFileSecretStore(options: {
  file: string
  cipher?: SecretCipher
}): SecretStore {
  const { file, cipher } = options
  const canEncrypt = (): boolean => {
    try {
      return cipher?.isEncryptionAvailable() === true
    } catch {
      // Asked before the app is ready, or no keychain at all: treat as "cannot encrypt".
      return false
    }
  }
  // A real keyring: not Linux's `basic_text`, whose password is the same on every machine.
  const protects = (): boolean => canEncrypt() && cipher?.backend() !== 'basic_text'
  // How the file holds the key, as last read or written (null: no key, or not read yet).
  let holds: 'cipher' | 'plain' | null = null
  const write = async (value: string): Promise<void> => {
    const encrypted = canEncrypt() && cipher ? cipher.encrypt(value) : null
    await writeJsonAtomic(file, {
      version: 1,
      encoding: encrypted ? 'cipher' : 'plain',
      data: Buffer.from(encrypted ?? Buffer.from(value, 'utf8')).toString('base64'),
    })
    holds = encrypted ? 'cipher' : 'plain'
  }
  return {
    get kind(): SecretStoreKind {
      // What the file holds, not what could be done now: a key saved in plain text stays
      // readable by anyone with the file until it is written again.
      if (holds === 'plain') return 'plaintext'
      return protects() ? 'os' : 'plaintext'
    },
    async get() {
      let raw: string
      try {
        raw = (await readPlainFileAsync(file, OWN_FILE_CAP.SETTINGS)).toString('utf8')
      } catch (error) {
        // A disk that fails the read (EIO, a denied permission) says nothing about the key:
        // told as such, never as no key, so the person is not asked for a key they have, and
        // nothing here writes over it (rdisk30). Read again at the next call.
        if (isDiskProblem(error)) throw keyNotRead(error)
        // No key stored yet (or not a plain file: never read through a link nor waited on,
        // or larger than any key file): the user sets it in Settings.
        holds = null
        return null
      }
      try {
        const stored = secretFile.parse(JSON.parse(raw))
        const bytes = Buffer.from(stored.data, 'base64')
        holds = stored.encoding
        if (stored.encoding === 'cipher')
          return cipher && canEncrypt() ? cipher.decrypt(bytes) : null
        const value = bytes.toString('utf8')
        if (protects()) {
          // Saved while no keyring worked, and there is one now: encrypted from here on.
          await write(value).catch(() => {
            // Still readable as it is; tried again at the next read.
          })
        }
        return value
      } catch {
        // An unreadable key (corrupt file, keyring changed) counts as no key: the user sets it again.
        holds = null
        return null
      }
    },
    set: write,
    async clear() {
      await rm(file, { force: true })
      holds = null
    },
  }
}

// The saved key's file could not be read because of the disk, in words for people.
function keyNotRead(error: unknown): CairnError {
  const problem = diskProblem(error)
  return new CairnError(
    problem?.code ?? 'io-error',
    `Your saved API key could not be read because ${problem?.reason ?? 'of a disk error'}. It was left as it is, and Cairn reads it again at the next try.`,
  )
}
