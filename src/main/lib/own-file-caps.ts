/**
 * How large each kind of Cairn's own files may be when read (`readPlainFile`'s `cap`): well
 * above what the kind can legitimately hold, far below what would take the memory or seconds.
 * A file past its cap (a 2 GB file, or a sparse one, at a ref) is damage of that kind, handled
 * as each reader handles damage (kept aside, read as absent or as the defaults, logged), never
 * read into memory.
 */

const KiB = 1024
const MiB = 1024 * KiB
const GiB = 1024 * MiB

export const OWN_FILE_CAP = {
  /** A ref (41 bytes), `HEAD` (`ref: refs/heads/main`), the lock (a process id, a host, a token). */
  TINY: 4 * KiB,
  /** The side index's `format` (a line), git's `config` (Cairn writes 8 lines). */
  SMALL: 1 * MiB,
  /** `settings.json`, the API key's file, sync's `config.json` and `machine.json`. */
  SETTINGS: 1 * MiB,
  /** Sync's `state.json`: its last sync, its conflicts (a few lines each). */
  SYNC_STATE: 64 * MiB,
  /**
   * Records that grow with the history or the folder (60 to 200 bytes an entry): `packed-refs`,
   * the notes of a command or a restore in flight (a restore of a million files is ~150 MB),
   * the search records, saved blame, the stat cache, the side index's names and its legacy
   * JSON-lines form.
   */
  RECORDS: 512 * MiB,
  /**
   * A conversation: its messages and tool results (a `view` is at most 32 MiB of text). Below
   * V8's longest string (512 Mi units), which the file's text must fit as one.
   */
  CONVERSATION: 480 * MiB,
  /**
   * A loose object (deflated: a memory file is versioned up to 32 MiB, a sync imports up to
   * 512 MiB) or a pack index (28 bytes an object: 38 million objects).
   */
  OBJECTS: 1 * GiB,
} as const
