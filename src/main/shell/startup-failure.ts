import { CairnError } from '../lib/errors'

/** A start-up failure found by the shell itself (the window could not load its page…). */
export class StartupError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'StartupError'
  }
}

// Operating-system error codes, said in words a person can act on.
const systemReasons: Readonly<Record<string, string>> = {
  EACCES:
    'Cairn is not allowed to read or write its data folder. Check that the folder belongs to you and that you may write to it.',
  EPERM:
    'Cairn is not allowed to read or write its data folder. Check that the folder belongs to you and that you may write to it.',
  EROFS: 'Cairn’s data folder is on a disk that can only be read, not written.',
  ENOSPC:
    'The disk that holds Cairn’s data folder is full. Free some space, then start Cairn again.',
  EDQUOT: 'Your disk quota is used up, so Cairn cannot write to its data folder.',
  ENOTDIR:
    'Something that is not a folder stands where Cairn keeps its data: a file has the name of the data folder or of a folder inside it.',
  EEXIST:
    'Something that is not a folder stands where Cairn keeps its data: a file has the name of the data folder or of a folder inside it.',
  ENOENT: 'A file or folder Cairn needs is missing from its data folder and could not be made.',
  EISDIR: 'A folder stands where Cairn expects one of its files in the data folder.',
  EIO: 'The disk reported an error while Cairn read or wrote its data folder.',
  EMFILE: 'The system has too many files open. Close some programs, then start Cairn again.',
  ENFILE: 'The system has too many files open. Close some programs, then start Cairn again.',
  ENAMETOOLONG: 'The path of Cairn’s data folder is too long for this system.',
}

/**
 * The reason for a failed start, in plain words. Errors meant for people (`CairnError`, e.g.
 * "the data folder is in use by another Cairn") keep their message; system errors are named
 * by what they mean; anything else is called unexpected, with its code when it has one.
 */
export function describeStartupFailure(error: unknown): string {
  if (error instanceof CairnError || error instanceof StartupError) return error.message
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string' && Object.hasOwn(systemReasons, code)) return systemReasons[code]!
  const suffix = typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? ` (${code})` : ''
  return `Something unexpected went wrong while Cairn was starting${suffix}.`
}

/** The buttons of the start-up failure dialog, in order. */
export const startupFailureButtons = ['Open data folder', 'Quit'] as const

/** The native dialog's options (Electron's `MessageBoxOptions`) for a failed start. */
export function startupFailureDialog(reason: string, dataDir: string) {
  return {
    type: 'error' as const,
    title: 'Cairn could not start',
    message: 'Cairn could not start',
    detail: `${reason}\n\nYour data folder: ${dataDir}`,
    buttons: [...startupFailureButtons],
    defaultId: 1,
    cancelId: 1,
    noLink: true,
  }
}
