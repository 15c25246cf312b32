/**
 * The ids the core gives what it tells in a run (a recovery report, a memory notice): a prefix
 * and a number counted from 1 in the run (`recovery-3`, `notice-7`). A dismissal names one, so
 * it takes that very one and no other that reads the same. One grammar for the core, which
 * gives and checks them, and the contract, which checks the ids a window sends.
 */

/** The ids of `prefix`, the number captured: at most 15 digits, so a safe integer. */
export function runIdPattern(prefix: string): RegExp {
  return new RegExp(`^${prefix}-([1-9][0-9]{0,14})$`)
}

/** The ids of one prefix given in this run. */
export interface RunIds {
  /** A new id, the next number. */
  next(): string
  /** Whether `id` is one `next` gave: of this prefix, its number not past the last given. */
  wasGiven(id: string): boolean
}

/** Ids of `prefix` counted from 1 (`notice-1`, `notice-2`, …), and which of them were given. */
export function runIds(prefix: string): RunIds {
  const pattern = runIdPattern(prefix)
  let given = 0
  return {
    next: () => `${prefix}-${(given += 1)}`,
    wasGiven(id) {
      const counted = pattern.exec(id)
      return counted !== null && Number(counted[1]) <= given
    },
  }
}
