/**
 * What a window keeps while its first answer is on its way: the dismissals it hears, and the
 * entries told it since it asked.
 */
export interface HeldUntilAnswered<Entry, Dismissal> {
  /** A dismissal told by the core (made in this window or another): kept until the answer. */
  heard(dismissed: Dismissal): void
  /** An entry told by the core since the window asked: newer than the answer's, kept until it. */
  told(entry: Entry): void
  /**
   * `answer` without what was dismissed before it arrived, and without what an entry told
   * meanwhile takes the place of; from then on nothing is kept. A failed answer fails as it
   * did, and nothing is kept either.
   */
  without<E extends Entry>(answer: Promise<ReadonlyArray<E>>): Promise<ReadonlyArray<E>>
}

/**
 * What a window hears while it waits for the core's first answer (its notices, its reports),
 * to take out of that answer. The core may have made the answer before a dismissal in another
 * window, or before a newer entry, and sent it after they were told: shown as it came, it would
 * bring back what that window dismissed, until a reload (redges2 R1), or put an older entry in
 * the newer one's place (rnotices26 R2). What comes later needs no keeping: the window shows it
 * over what the answer held. `dismisses` says whether a dismissal names an entry of the answer;
 * `replaces`, whether an entry told takes the place of one of the answer.
 */
export function heldUntilAnswered<Entry, Dismissal>(rules: {
  readonly dismisses: (dismissed: Dismissal, entry: Entry) => boolean
  readonly replaces: (told: Entry, entry: Entry) => boolean
}): HeldUntilAnswered<Entry, Dismissal> {
  let held: { readonly dismissed: Dismissal[]; readonly told: Entry[] } | null = {
    dismissed: [],
    told: [],
  }
  return {
    heard(dismissed) {
      held?.dismissed.push(dismissed)
    },
    told(entry) {
      held?.told.push(entry)
    },
    without(answer) {
      return answer.then(
        (entries) => {
          const { dismissed, told } = held ?? { dismissed: [], told: [] }
          held = null
          return entries.filter(
            (entry) =>
              !dismissed.some((gone) => rules.dismisses(gone, entry)) &&
              !told.some((newer) => rules.replaces(newer, entry)),
          )
        },
        (error: unknown) => {
          held = null
          throw error
        },
      )
    },
  }
}
