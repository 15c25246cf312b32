import type { OpeningProgress } from '../../shared/types'

/** Told how far the opening of the memory is (see `OpeningProgress`). */
export type OpeningReporter = (progress: OpeningProgress) => void

/** What `throttleProgress` thins out: a count along a step (the opening's, a follow's). */
interface Counting {
  readonly step?: string
  readonly done: number
  readonly total: number | null
}

/** At most this many reports a second reach the listener while one step counts along. */
export const PROGRESS_INTERVAL_MS = 100

/**
 * Thins out the reports of a step that counts commit by commit: a step's first report, its
 * last (`done` equal to `total`) and every change of step or of `total` always pass; the
 * counting in between passes at most once every `intervalMs`. A listener that throws is the
 * listener's problem, never the open's: the error goes to `onError` and the opening goes on.
 */
export function throttleProgress<P extends Counting = OpeningProgress>(
  listener: (progress: P) => void,
  onError: (error: unknown) => void,
  intervalMs: number = PROGRESS_INTERVAL_MS,
  clock: () => number = Date.now,
): (progress: P) => void {
  let last: P | null = null
  let lastAt = 0
  return (progress) => {
    const finished = progress.total !== null && progress.done >= progress.total
    const changed = last === null || last.step !== progress.step || last.total !== progress.total
    const now = clock()
    if (!changed && !finished && now - lastAt < intervalMs) return
    if (last && !changed && last.done === progress.done) return
    last = progress
    lastAt = now
    try {
      listener(progress)
    } catch (error) {
      onError(error)
    }
  }
}
