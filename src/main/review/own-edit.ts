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
  return approvalsBetween(landed, path, seen, now) !== null
}

/**
 * The approvals in `landed` that lead from `seen` to `now`, in order; null when they do not
 * reach it.
 */
export function approvalsBetween(
  landed: ReadonlyArray<Landed>,
  path: string,
  seen: string,
  now: string,
): ReadonlyArray<Step> | null {
  let text = seen
  const steps: Step[] = []
  for (const step of landed) {
    if (step.path !== path || step.before !== text) continue
    steps.push(step)
    text = step.after
  }
  return text === now ? steps : null
}

/** One change of a file's text, from `before` to `after`. */
export interface Step {
  readonly before: string
  readonly after: string
}

/**
 * True when the command's own edit lands as the person saw it: the lines it changes in `seen`
 * (to make `shown`, its preview) and the lines each approval since changed (`steps`, leading
 * from `seen` to `now`; by default one step) share no line, and the dry run against `now`
 * makes exactly all of them (`planned`). Each approval is compared on its own lines: three
 * edits of lines 1, 20 and 40 decided as 40, 1, 20 all land (review hunt13 D2), where the
 * span from the first approval's line to the last's would cover line 20. Two edits of one
 * line (`like tea` -> `like green tea`, then `tea.` -> `coffee.`) would make a line neither
 * preview showed: the person looks again. A `create` replaces the whole file, so it would
 * drop the other change: never.
 */
export function ownEditUntouched(
  input: unknown,
  seen: string,
  now: string,
  shown: string,
  planned: string,
  steps: ReadonlyArray<Step> = [{ before: seen, after: now }],
): boolean {
  const command = (input as { command?: unknown }).command
  if (command !== 'str_replace' && command !== 'insert') return false
  if ((steps.at(-1)?.after ?? seen) !== now || (steps[0]?.before ?? now) !== seen) return false
  // The own edit carried over each approval in turn: its text after step i is what the file
  // would hold with the own edit next to the first i approvals.
  let mine = shown
  for (const step of steps) {
    const merged = mergeApart(step.before, mine, step.after)
    if (merged === null) return false
    mine = merged
  }
  return mine === planned
}

/**
 * `base` changed two ways, each in one stretch of lines (`a` and `b`): the text with both
 * changes, or null when the stretches share a line (touching lines at most, never sharing one;
 * two insertions at one point are refused by the caller's final comparison when ambiguous).
 */
function mergeApart(base: string, a: string, b: string): string | null {
  const [lines, mineLines, theirLines] = [base, a, b].map((text) => text.split('\n')) as [
    string[],
    string[],
    string[],
  ]
  const edit = changedLines(lines, mineLines)
  const other = changedLines(lines, theirLines)
  const editFirst =
    edit.start < other.start || (edit.start === other.start && edit.endBase <= other.endBase)
  const [first, second] = editFirst ? [edit, other] : [other, edit]
  if (first.endBase > second.start) return null
  return [
    ...lines.slice(0, first.start),
    ...first.lines,
    ...lines.slice(first.endBase, second.start),
    ...second.lines,
    ...lines.slice(second.endBase),
  ].join('\n')
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
