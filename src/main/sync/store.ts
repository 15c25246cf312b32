/**
 * What sync keeps between runs, in `<dataDir>/sync/`: the settings (`config.json`: address,
 * username, machine name, interval — never the token, which lives in a `SecretStore`) and
 * the state (`state.json`: the remote `main` the last sync left, and the conflicts raised), and
 * this machine's random id (`machine.json`).
 */
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { z } from 'zod'
import { writeJsonAtomic } from '../lib/atomic-json'
import { isMissing, isNotPlainFile, readPlainFileAsync } from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'
import { diskProblem } from '../lib/disk-errors'
import { CairnError } from '../lib/errors'
import type { Logger } from '../lib/logger'
import { MARKER_SIZE, MAX_MARKER_SIZE } from './conflict-markers'

/** How often sync runs by itself when no memory changes, in minutes (0: only on changes). */
export const DEFAULT_INTERVAL_MINUTES = 10

export interface SyncConfig {
  /** The remote's address; '' when sync is off. */
  readonly url: string
  readonly username: string
  /** The name commits carry (`Machine:`); '' for the host name. */
  readonly machineName: string
  readonly intervalMinutes: number
}

export const OFF: SyncConfig = {
  url: '',
  username: '',
  machineName: '',
  intervalMinutes: DEFAULT_INTERVAL_MINUTES,
}

/** A conflict raised by a merge (here or on another machine), until its file is settled. */
export interface ConflictRecord {
  /** Virtual path of the file holding both versions (or this side's, for a binary file). */
  readonly path: string
  readonly kind: 'text' | 'binary'
  /** For a binary file: where the other side's version was kept (virtual). */
  readonly otherPath?: string
  /** The merge commit that raised it. */
  readonly since: string
  /**
   * The id of the machine that made that merge (its `Merged-On:` trailer): which side of each
   * block is this machine's when both machines carry the same name.
   */
  readonly mergedOn?: string
  /** The commit where `path` was last found, when the file moved since `since`. */
  readonly foundAt?: string
  /**
   * For text: the length of the merge's markers. Only blocks of that size are the conflict's
   * (any size for a merge made before it was recorded).
   */
  readonly markerSize?: number
  /**
   * For text, with `markerSize`: the marker lengths of later merges that raised a conflict on
   * the same file while this one was open (their markers are longer than the blocks they
   * found); their blocks are this conflict's too.
   */
  readonly markerSizes?: ReadonlyArray<number>
  /**
   * For text: the machine that made each later merge, by its marker size (from its commit's
   * `Merged-On:`). "Ours" is decided block by block: a later merge over the open conflict may
   * have been made on the other machine, whose side it put first.
   */
  readonly laterMerges?: ReadonlyArray<LaterMerge>
  /**
   * Only in what `learn` hands over, never saved: a choice on another machine settled the
   * conflict at `path` (drop the record).
   */
  readonly settled?: true
}

/** A later merge that raised a conflict on a file whose conflict was still open. */
export interface LaterMerge {
  /** The length of its markers (one of the record's `markerSizes`). */
  readonly size: number
  /** The id of the machine that made it. */
  readonly mergedOn: string
  /**
   * Its merge commit. A size comes back once its earlier blocks left the file, so the newest
   * merge of a size is the one whose blocks are there (absent in records older builds saved).
   */
  readonly since?: string
  /**
   * Two merges that did not know of each other (neither an ancestor of the other) both took
   * this size, so its blocks may be either's: the markers' names decide (hunt13-followups D1).
   */
  readonly byNames?: true
}

export interface SyncState {
  /** The address `lastRemote` belongs to: another address starts over. */
  readonly remoteUrl: string | null
  /** The remote's `main` when the last sync finished (what this machine knows it holds). */
  readonly lastRemote: string | null
  readonly lastSyncedAt: number | null
  readonly conflicts: ReadonlyArray<ConflictRecord>
  /**
   * The syncs in a row that failed (any way), kept so that a restart does not start the count
   * again; absent in files older builds wrote, and after a sync that completed.
   */
  readonly failing?: FailingStreak
  /**
   * The remote's `main` the last sync refused for what it holds (`url`: the address it was
   * the `main` of), and the refusal's words: while the remote's `main` is still that commit, a
   * sync refuses it again without downloading it. `rules`: the Cairn and the rules that refused
   * it (another version, another size limit, names judged otherwise: not said again, fetched and
   * judged anew). Absent when none is remembered.
   */
  readonly refused?: {
    readonly url: string
    readonly commit: string
    readonly message: string
    readonly rules: string
  }
}

/** Syncs that failed in a row: the latest one's code, how many, and when the first did. */
export interface FailingStreak {
  readonly code: string
  readonly count: number
  /** When the first of them failed (ms, this machine's clock). */
  readonly since: number
  /** They failed more than one way (two codes taking turns). */
  readonly mixed?: true
}

/** More failures in a row than this are counted as this many. */
export const MAX_FAILING_COUNT = 1_000_000

export const EMPTY_STATE: SyncState = {
  remoteUrl: null,
  lastRemote: null,
  lastSyncedAt: null,
  conflicts: [],
}

const oid = z.string().regex(/^[0-9a-f]{40}$/)
/** A machine id: 32 hex digits, random, made once per data folder. */
export const MACHINE_ID = /^[0-9a-f]{32}$/
const machineIdSchema = z.string().regex(MACHINE_ID)
const configSchema = z.object({
  url: z.string().max(2000).catch(''),
  username: z.string().max(200).catch(''),
  machineName: z.string().max(100).catch(''),
  intervalMinutes: z.int().min(0).max(1440).catch(DEFAULT_INTERVAL_MINUTES),
})
const markerSizeSchema = z.int().min(MARKER_SIZE).max(MAX_MARKER_SIZE)
const conflictSchema = z.object({
  path: z.string().startsWith('/memories/'),
  kind: z.enum(['text', 'binary']),
  otherPath: z.string().startsWith('/memories/').optional(),
  since: oid,
  mergedOn: machineIdSchema.optional(),
  foundAt: oid.optional(),
  markerSize: markerSizeSchema.optional(),
  markerSizes: z.array(markerSizeSchema).max(100).optional(),
  laterMerges: z
    .array(
      z.object({
        size: markerSizeSchema,
        mergedOn: machineIdSchema,
        since: oid.optional(),
        byNames: z.literal(true).optional(),
      }),
    )
    .max(100)
    .optional(),
  settled: z.literal(true).optional(),
})
const stateSchema = z.object({
  remoteUrl: z.string().nullable().catch(null),
  lastRemote: oid.nullable().catch(null),
  lastSyncedAt: z.number().nullable().catch(null),
  // Each record on its own: one the schema refuses (a hand-edited file) drops only itself.
  conflicts: z
    .array(conflictSchema.nullable().catch(null))
    .catch([])
    .transform((records) => records.filter((record) => record !== null)),
  // Strict: a count, a time and a code as Cairn writes them, or nothing (never a guess).
  failing: z
    .strictObject({
      code: z.string().regex(/^[a-z][a-z-]{0,39}$/),
      count: z.int().min(1).max(MAX_FAILING_COUNT),
      since: z.int().min(0).max(8.64e15),
      mixed: z.literal(true).optional(),
    })
    .optional()
    .catch(undefined),
  refused: z
    .strictObject({
      url: z.string().max(2000),
      commit: oid,
      message: z.string().max(8000),
      rules: z.string().max(200),
    })
    .optional()
    .catch(undefined),
})

/** The two files, read once and cached; writes are atomic. */
export interface SyncStore {
  config(): Promise<SyncConfig>
  saveConfig(config: SyncConfig): Promise<void>
  state(): Promise<SyncState>
  saveState(state: SyncState): Promise<void>
  /**
   * This machine's id (`machine.json`), made on first use: display names may be equal on two
   * machines (the default is the host name), ids are not.
   */
  machineId(): Promise<string>
}

export function createSyncStore(dataDir: string, logger: Logger): SyncStore {
  const dir = path.join(dataDir, 'sync')
  const configFile = path.join(dir, 'config.json')
  const stateFile = path.join(dir, 'state.json')
  const machineFile = path.join(dir, 'machine.json')
  let config: SyncConfig | null = null
  let state: SyncState | null = null
  let machineId: string | null = null

  async function read<T>(
    file: string,
    schema: z.ZodType<T>,
    fallback: T,
    cap: number = OWN_FILE_CAP.SETTINGS,
  ): Promise<T> {
    let raw: string
    try {
      raw = (await readPlainFileAsync(file, cap)).toString('utf8')
    } catch (error) {
      // Not set up yet.
      if (isMissing(error)) return fallback
      // Anything but a plain file (never read through a link nor waited on): what a hand
      // edit gone wrong is taken as, below.
      if (isNotPlainFile(error)) raw = ''
      else {
        // Unreadable is not "not set up": taken for it, the status said "Sync off" for the
        // whole session, and the next save wrote defaults over the file (its last remote, its
        // conflicts). Nothing is cached, so the next call reads again.
        const reason = diskProblem(error)?.reason ?? 'it could not be read'
        throw new CairnError(
          diskProblem(error)?.code ?? 'io-error',
          `Cairn could not read its sync settings because ${reason}. Nothing was changed.`,
        )
      }
    }
    try {
      const parsed = schema.safeParse(JSON.parse(raw))
      if (parsed.success) return parsed.data
    } catch {
      // Falls through to the warning: a hand edit gone wrong.
    }
    logger.warn(`Could not read ${path.basename(file)} of sync; starting from defaults`)
    return fallback
  }

  return {
    async config() {
      config ??= await read(configFile, configSchema, OFF)
      return config
    },
    async saveConfig(next) {
      await writeJsonAtomic(configFile, next, logger)
      config = next
    },
    async state() {
      state ??= await read(stateFile, stateSchema, EMPTY_STATE, OWN_FILE_CAP.SYNC_STATE)
      return state
    },
    async saveState(next) {
      await writeJsonAtomic(stateFile, next, logger)
      state = next
    },
    async machineId() {
      if (machineId) return machineId
      const kept = await read(machineFile, z.object({ id: machineIdSchema }).nullable(), null)
      if (kept) {
        machineId = kept.id
        return machineId
      }
      const made = randomBytes(16).toString('hex')
      await writeJsonAtomic(machineFile, { id: made }, logger)
      machineId = made
      return machineId
    },
  }
}
