/** What a window keeps of the dismissals it hears while its first answer is on its way. */
export interface DismissalsUntilAnswered<Entry, Dismissal> {
  /** A dismissal told by the core (made in this window or another): kept until the answer. */
  heard(dismissed: Dismissal): void
  /**
   * `answer` without what was dismissed before it arrived; from then on nothing is kept. A
   * failed answer fails as it did, and nothing is kept either.
   */
  without<E extends Entry>(answer: Promise<ReadonlyArray<E>>): Promise<ReadonlyArray<E>>
}

/**
 * The dismissals a window hears while it waits for the core's first answer (its notices, its
 * reports), to take out of that answer. The core may have made the answer before a dismissal
 * in another window and sent it after the dismissal was told: shown as it came, it would bring
 * back what that window dismissed, until a reload (redges2 R1). Later dismissals need no
 * keeping: they are taken out of what is shown when they come. `dismisses` says whether a
 * dismissal names an entry of the answer.
 */
export function dismissalsUntilAnswered<Entry, Dismissal>(
  dismisses: (dismissed: Dismissal, entry: Entry) => boolean,
): DismissalsUntilAnswered<Entry, Dismissal> {
  let early: Dismissal[] | null = []
  return {
    heard(dismissed) {
      early?.push(dismissed)
    },
    without(answer) {
      return answer.then(
        (entries) => {
          const told = early ?? []
          early = null
          return entries.filter((entry) => !told.some((gone) => dismisses(gone, entry)))
        },
        (error: unknown) => {
          early = null
          throw error
        },
      )
    },
  }
}
