/**
 * Words for what the file system refused. An I/O error (a full disk, a failing disk, a denied
 * permission, too many open files) is never taken for damage: it gets a code and a sentence
 * for people, and no host path or errno text.
 */

import path from 'node:path'
import type { MemoryErrorCode } from '../../shared/errors'
import { errorCode } from './disk'

/** The codes a disk problem surfaces as. */
export type DiskErrorCode = Extract<
  MemoryErrorCode,
  'disk-full' | 'access-denied' | 'read-only' | 'io-error' | 'conflict' | 'invalid-path'
>

const PROBLEMS: Readonly<Record<string, readonly [DiskErrorCode, string]>> = {
  ENOSPC: ['disk-full', 'the disk is full'],
  EDQUOT: ['disk-full', 'the disk is full (the disk quota is used up)'],
  EIO: ['io-error', 'the disk reported a read or write error'],
  EACCES: ['access-denied', 'permission was denied by the operating system'],
  EPERM: ['access-denied', 'permission was denied by the operating system'],
  // Where: see READ_ONLY.
  EROFS: ['read-only', "Cairn's data folder is read-only"],
  EMFILE: ['io-error', 'too many files are open'],
  ENFILE: ['io-error', 'too many files are open on this system'],
  EBUSY: ['io-error', 'a file is in use by another program'],
  ENOMEM: ['io-error', 'the system ran out of memory'],
  ETIMEDOUT: ['io-error', 'the disk did not answer in time'],
  ESTALE: ['io-error', 'the disk was disconnected'],
  ENOTDIR: ['conflict', 'a file is in the way of a folder on that path'],
  ENAMETOOLONG: ['invalid-path', 'the path is too long for this system'],
  ECHANGED: ['conflict', 'another program changed the memory folder while Cairn was working in it'],
  EROOTLINK: [
    'conflict',
    'the memory folder is a symbolic link, and Cairn never follows links: put the real folder in its place',
  ],
}

// Codes of the disk itself (not of what is on it): never to be taken for damage.
const DISK_TROUBLE = new Set([
  'ENOSPC',
  'EDQUOT',
  'EIO',
  'EACCES',
  'EPERM',
  'EROFS',
  'EMFILE',
  'ENFILE',
  'EBUSY',
  'ENOMEM',
  'ETIMEDOUT',
  'ESTALE',
])

/**
 * Where a refusal was met: the memory folder, or elsewhere in Cairn's data folder (the history,
 * its side index, the settings, the conversations). A read-only file system is named as the
 * place that is read-only.
 */
export type DiskPlace = 'memory' | 'data'

const READ_ONLY: Readonly<Record<DiskPlace, string>> = {
  memory: 'the memory folder is read-only',
  data: "Cairn's data folder is read-only",
}

/**
 * When `error` carries an errno Cairn has words for: the refusal's code and the reason in
 * plain words (completing "… because <reason>"). Null for anything else, such as damage.
 * `place` is where it was met (see `placeOf` when a caller may meet it in either).
 */
export function diskProblem(
  error: unknown,
  place: DiskPlace = 'data',
): { readonly code: DiskErrorCode; readonly reason: string } | null {
  const code = errorCode(error)
  if (code === undefined || !Object.hasOwn(PROBLEMS, code)) return null
  const [errorCodeFor, reason] = PROBLEMS[code]!
  return { code: errorCodeFor, reason: code === 'EROFS' ? READ_ONLY[place] : reason }
}

/**
 * Where `error` was met, by the path it names: the memory folder for an entry in `memoryRoot`,
 * or one named through a folder's handle (`/proc/self/fd/<fd>/…`: the memory folder is walked
 * by handle); else, or with no path, the data folder, which holds it. The memory folder itself
 * (made again at open) is made in the data folder: a refusal of it is the data folder's.
 */
export function placeOf(error: unknown, memoryRoot: string): DiskPlace {
  const at = (error as { path?: unknown } | null)?.path
  if (typeof at !== 'string') return 'data'
  return at.startsWith(`${memoryRoot}${path.sep}`) || at.startsWith('/proc/self/fd/')
    ? 'memory'
    : 'data'
}

/** True for errors of the disk itself (full, failing, denied), as opposed to bad content. */
export function isDiskProblem(error: unknown): boolean {
  const code = errorCode(error)
  return code !== undefined && DISK_TROUBLE.has(code)
}

// Refusals that last until someone changes the folder (its permissions, the program that holds
// a file open): waiting for a later start does not help, unlike a full or failing disk.
const LASTING = new Set(['EACCES', 'EPERM', 'EBUSY'])

/** True for a disk problem that a retry does not cure: a denied permission, a file held open. */
export function isLastingRefusal(error: unknown): boolean {
  const code = errorCode(error)
  return code !== undefined && LASTING.has(code)
}
