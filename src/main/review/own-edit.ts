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
 * True when the command's own edit lands as the person saw it: the lines it changes in `seen`
 * (to make `shown`, its preview) and the lines the approvals since changed (to make `now`)
 * share no line, and the dry run against `now` makes
 * exactly both (`planned`). Two edits of one line (`like tea` -> `like green tea`, then `tea.`
 * -> `coffee.`) would make a line neither preview showed: the person looks again. A `create`
 * replaces the whole file, so it would drop the other change: never.
 */
export function ownEditUntouched(
  input: unknown,
  seen: string,
  now: string,
  shown: string,
  planned: string,
): boolean {
  const command = (input as { command?: unknown }).command
  if (command !== 'str_replace' && command !== 'insert') return false
  const [base, mine, theirs] = [seen, shown, now].map((text) => text.split('\n')) as [
    string[],
    string[],
    string[],
  ]
  const edit = changedLines(base, mine)
  const other = changedLines(base, theirs)
  // Apart (touching lines at most, never sharing one); the dry run must then make exactly
  // both, which also settles two insertions at one point.
  const editFirst =
    edit.start < other.start || (edit.start === other.start && edit.endBase <= other.endBase)
  const [first, second] = editFirst ? [edit, other] : [other, edit]
  if (first.endBase > second.start) return false
  const expected = [
    ...base.slice(0, first.start),
    ...first.lines,
    ...base.slice(first.endBase, second.start),
    ...second.lines,
    ...base.slice(second.endBase),
  ]
  return expected.join('\n') === planned
}

// The lines `changed` differs from `base` in: `base[start, endBase)` became `lines`.
function changedLines(
  base: ReadonlyArray<string>,
  changed: ReadonlyArray<string>,
): { start: number; endBase: number; lines: ReadonlyArray<string> } {
  let start = 0
  while (start < base.length && start < changed.length && base[start] === changed[start]) start++
  let tail = 0
  while (
    tail < base.length - start &&
    tail < changed.length - start &&
    base[base.length - 1 - tail] === changed[changed.length - 1 - tail]
  ) {
    tail++
  }
  return {
    start,
    endBase: base.length - tail,
    lines: changed.slice(start, changed.length - tail),
  }
}
