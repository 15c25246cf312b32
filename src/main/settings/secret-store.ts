import { rm } from 'node:fs/promises'
import path from 'node:path'
import { isMissing, isNotPlainFile, readPlainFileAsync } from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { z } from 'zod'
import { writeJsonAtomic } from '../lib/atomic-json'
import { diskProblem, isDiskProblem } from '../lib/disk-errors'
import { CairnError } from '../lib/errors'
import { keepUnreadableAside } from './settings-file'

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
  /**
   * What is wrong with the saved secret, in words for Settings (null: nothing): its file was
   * found damaged at the last read (it then reads as none), or a damaged one was kept aside
   * when a new one was saved.
   */
  readonly problem?: string | null
  /**
   * The saved secret's file was found damaged at the last read (it read as none): Settings
   * words it so where another key (the environment's) is used meanwhile.
   */
  readonly damaged?: boolean
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
  // The file found damaged at the last read; the name a damaged one was kept as.
  let damaged = false
  let keptAs: string | null = null
  const name = path.basename(file)
  // A damaged file is moved aside before a new key is written over it: it may still hold the
  // key (a file cut short, a keyring since changed), and nothing of the person's is destroyed
  // unasked. A file the disk fails to read is written over as before: the person's new key is
  // their latest act, and the write says if the disk fails it too.
  const keepDamagedAside = async (): Promise<void> => {
    let raw: Buffer
    try {
      raw = await readPlainFileAsync(file, OWN_FILE_CAP.SETTINGS)
    } catch (error) {
      if (!isNotPlainFile(error)) return
      raw = Buffer.alloc(0)
    }
    if (readable(raw)) return
    try {
      keptAs = await keepUnreadableAside(file)
    } catch (error) {
      if (isMissing(error)) return
      const problem = diskProblem(error)
      throw new CairnError(
        problem?.code ?? 'io-error',
        `Your key was not saved: the saved key’s file (${name}) is damaged, and it could not be kept aside because ${problem?.reason ?? 'of an unexpected file system error'}. Nothing was changed.`,
      )
    }
  }
  // The key the file holds and how it is kept; throws when it holds no key Cairn wrote: not
  // JSON, not its shape, or a key the keyring cannot decrypt. A keyring that is not there now
  // says nothing of the file: its key reads as null.
  const decodeKey = (
    raw: string,
  ): { encoding: 'plain'; value: string } | { encoding: 'cipher'; value: string | null } => {
    const stored = secretFile.parse(JSON.parse(raw))
    const bytes = Buffer.from(stored.data, 'base64')
    if (stored.encoding === 'plain') return { encoding: 'plain', value: bytes.toString('utf8') }
    return { encoding: 'cipher', value: cipher && canEncrypt() ? cipher.decrypt(bytes) : null }
  }
  // False when the file holds no key Cairn wrote (`decodeKey`).
  const readable = (raw: Buffer): boolean => {
    try {
      decodeKey(raw.toString('utf8'))
      return true
    } catch {
      return false
    }
  }
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
    get problem(): string | null {
      if (damaged) {
        return `Your saved key could not be read: its file (${name} in your data folder) is damaged. Save your key again; the damaged file is then kept aside in the data folder, not deleted.`
      }
      return keptAs === null
        ? null
        : `Your saved key’s file was damaged, so it was kept as ${keptAs} in your data folder before the new key was saved.`
    },
    get damaged(): boolean {
      return damaged
    },
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
        // No key stored yet: the user sets it in Settings. Not a plain file (never read
        // through a link nor waited on) or larger than any key file: damaged, read as none.
        holds = null
        damaged = !isMissing(error)
        return null
      }
      damaged = false
      try {
        const key = decodeKey(raw)
        holds = key.encoding
        if (key.encoding === 'cipher') return key.value
        const value = key.value
        if (protects()) {
          // Saved while no keyring worked, and there is one now: encrypted from here on.
          await write(value).catch(() => {
            // Still readable as it is; tried again at the next read.
          })
        }
        return value
      } catch {
        // An unreadable key (corrupt file, keyring changed) counts as no key, and Settings says
        // the file is damaged: the user sets it again, and the file is kept aside then.
        holds = null
        damaged = true
        return null
      }
    },
    async set(value) {
      // The notice of a file kept aside is this save's: a later save of a good key, read back
      // by Settings' view, no longer shows it for the rest of the session.
      const earlier = keptAs
      keptAs = null
      try {
        await keepDamagedAside()
        await write(value)
      } catch (error) {
        keptAs ??= earlier
        throw error
      }
      damaged = false
    },
    async clear() {
      await rm(file, { force: true })
      holds = null
      damaged = false
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
