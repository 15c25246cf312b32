/**
 * Words for what the file system refused. An I/O error (a full disk, a failing disk, a denied
 * permission, too many open files) is never taken for damage: it gets a code and a sentence
 * for people, and no host path or errno text.
 */

import { errorCode } from './disk'

/** The error codes a disk problem surfaces as. */
export type DiskErrorCode = 'disk-full' | 'disk-error'

const REASONS: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk is full (the disk quota is used up)',
  EIO: 'the disk reported a read or write error',
  EACCES: 'permission was denied by the operating system',
  EPERM: 'permission was denied by the operating system',
  EROFS: 'the disk is read-only',
  EMFILE: 'too many files are open',
  ENFILE: 'too many files are open on this system',
  EBUSY: 'a file is in use by another program',
  ENOMEM: 'the system ran out of memory',
  ETIMEDOUT: 'the disk did not answer in time',
  ESTALE: 'the disk was disconnected',
  ENAMETOOLONG: 'the path is too long for this system',
  ECHANGED: 'another program changed the memory folder while Cairn was working in it',
}

/**
 * When `error` is a disk problem (by errno code): its code for the API and the reason in
 * plain words (completing "… because <reason>"). Null for anything else, such as damage.
 */
export function diskProblem(
  error: unknown,
): { readonly code: DiskErrorCode; readonly reason: string } | null {
  const code = errorCode(error)
  if (code === undefined || !Object.hasOwn(REASONS, code)) return null
  return {
    code: code === 'ENOSPC' || code === 'EDQUOT' ? 'disk-full' : 'disk-error',
    reason: REASONS[code]!,
  }
}

/** True for errors of the disk itself (full, failing, denied), as opposed to bad content. */
export function isDiskProblem(error: unknown): boolean {
  return diskProblem(error) !== null
}
