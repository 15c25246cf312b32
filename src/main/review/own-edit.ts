/**
 * Whether a held change may still run as approved after the person approved other changes to
 * the same file (two edits of one file in one reply, decided in reverse order): the issue
 * says approved changes commit "in the order decided". The file then differs from the one the
 * change was planned against, but only by changes the person approved through this gate, and
 * the command's own edit is untouched: the person approved exactly what now lands, next to
 * what they approved before. Any other difference (an outside editor, the person's own edit,
 * an edited approval) is shown to the person again instead.
 */

/** One approval that landed: the file's text before and after it. */
export interface Landed {
  readonly path: string
  readonly before: string
  readonly after: string
}

/** At most this many approvals are remembered (a reply's own edits are all that matter). */
export const LANDED_KEPT = 200

/**
 * True when `now` is reached from `seen` through approvals in `landed`, in order (each one
 * planned against the text the previous one left).
 */
export function reachedByApprovals(
  landed: ReadonlyArray<Landed>,
  path: string,
  seen: string,
  now: string,
): boolean {
  let text = seen
  for (const step of landed) {
    if (step.path === path && step.before === text) text = step.after
  }
  return text === now
}

/**
 * True when the command's own edit is the same against `now` as against `seen`: a
 * `str_replace` whose `old_str` the dry run found again exactly once (it replaces just that),
 * or an `insert` whose lines above the insertion point are unchanged. A `create` replaces the
 * whole file, so it would drop the other change: never.
 */
export function ownEditUntouched(input: unknown, seen: string, now: string): boolean {
  const command = input as { command?: unknown; insert_line?: unknown }
  if (command.command === 'str_replace') return true
  if (command.command !== 'insert' || typeof command.insert_line !== 'number') return false
  const above = (text: string) => text.split('\n').slice(0, command.insert_line as number)
  const [a, b] = [above(seen), above(now)]
  return a.length === b.length && a.every((line, i) => line === b[i])
}
