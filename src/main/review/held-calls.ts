/**
 * Claude's calls held for review, kept on disk while they wait, so that after a kill Claude is
 * told the truth about them: they did not run. The file of a data folder:
 *
 *   { "version": 1, "calls": [{ "conversationId": "…", "toolUseId": "toolu_…" }] }
 *
 * Written atomically when a call is held and when one is decided; a folder without it (an
 * older Cairn's, or nothing ever held) has nothing held. Read by strict rules: anything else in
 * it (another version, a field of the wrong type, too many calls) is reported and holds
 * nothing, which leaves those calls answered "may or may not have run", as before.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { writeJsonAtomic } from '../lib/atomic-json'
import { isMissing } from '../lib/disk'
import type { Logger } from '../lib/logger'
import { isRecord } from '../lib/records'

/** One held call of Claude's: the conversation and the tool use it answers. */
export interface HeldCall {
  readonly conversationId: string
  readonly toolUseId: string
}

const VERSION = 1
/** Far more than can wait at once (each waits in a turn of its own conversation). */
const MAX_CALLS = 10_000
const MAX_ID_CHARS = 200

/** Where a data folder keeps the calls held for review. */
export const heldCallsFile = (dataDir: string): string => path.join(dataDir, 'review-held.json')

/** The calls `file` holds; none when it is missing or is not what this build writes. */
export async function readHeldCalls(
  file: string,
  logger: Logger,
): Promise<ReadonlyArray<HeldCall>> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if (!isMissing(error)) logger.warn('Could not read the calls held for review', error)
    return []
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    logger.warn('The file of calls held for review is not JSON; it holds none')
    return []
  }
  const calls = heldCallsOf(value)
  if (calls === null) logger.warn('The file of calls held for review is not one this build reads')
  return calls ?? []
}

/** Writes `calls` as the held ones, atomically. */
export async function writeHeldCalls(
  file: string,
  calls: ReadonlyArray<HeldCall>,
  logger?: Logger,
): Promise<void> {
  await writeJsonAtomic(file, { version: VERSION, calls }, logger)
}

function heldCallsOf(value: unknown): HeldCall[] | null {
  if (!isRecord(value) || Object.keys(value).length !== 2) return null
  if (value['version'] !== VERSION || !Array.isArray(value['calls'])) return null
  const calls = value['calls'] as unknown[]
  if (calls.length > MAX_CALLS) return null
  const out: HeldCall[] = []
  for (const call of calls) {
    if (!isRecord(call) || Object.keys(call).length !== 2) return null
    const { conversationId, toolUseId } = call
    if (!isId(conversationId) || !isId(toolUseId)) return null
    out.push({ conversationId, toolUseId })
  }
  return out
}

function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_CHARS
}
