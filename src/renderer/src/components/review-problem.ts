import type { ErrorCode } from '../../../shared/errors'

/** A refused decision as the review card shows it: main's code and its words. */
export interface ReviewRefusal {
  readonly code: ErrorCode | null
  readonly message: string
}

/**
 * Whether the review card shows its note on `problem` (what stops the change, and that it can
 * only be declined). Not while the refusal of an Approve says it already: main's refusal for a
 * change that can no longer be applied (`review-unappliable`) names the problem and the way on,
 * whatever its words.
 */
export function showsProblemNote(problem: string | null, refusal: ReviewRefusal | null): boolean {
  return problem !== null && problem !== '' && refusal?.code !== 'review-unappliable'
}
