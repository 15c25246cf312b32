/**
 * Types of the Memory tool handler that other main-process domains rely on.
 * (Shared between memory/, history/ and agent/; the handler itself lives in this folder.)
 */

/** A content block of a tool result, in the Messages API's shape. */
export type MemoryContentBlock =
  | { readonly type: 'text'; readonly text: string }
  | {
      readonly type: 'image'
      readonly source: {
        readonly type: 'base64'
        readonly media_type: 'image/png' | 'image/jpeg'
        readonly data: string
      }
    }

/** What Claude receives for one command. */
export interface MemoryResult {
  readonly content: string | ReadonlyArray<MemoryContentBlock>
  readonly isError: boolean
}

export type MutatingCommand = 'create' | 'str_replace' | 'insert' | 'delete' | 'rename'

/** What a successful mutating command touched, so history can commit exactly that. */
export interface MemoryMutation {
  readonly command: MutatingCommand
  /** Virtual, normalized paths (`/memories/...`): `[path]`, or `[old_path, new_path]` for rename. */
  readonly paths: ReadonlyArray<string>
  /** True when `create` replaced an existing file. */
  readonly overwrite: boolean
}

/** `MemoryResult` plus the mutation it made (null for `view` and for failures). */
export interface MemoryExecution extends MemoryResult {
  readonly mutation: MemoryMutation | null
}

/** Policies that settings may change while the app runs. */
export interface MemoryPolicy {
  readonly createExisting: 'overwrite' | 'error'
  readonly secretScanning: boolean
}

/** Prefix of the temp files written during atomic writes; start-up recovery removes strays. */
export const TEMP_FILE_PREFIX = '.cairn-tmp-'
