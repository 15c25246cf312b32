/**
 * Review: the gate Claude's memory commands pass through (held for the person as the review
 * mode says), the pending changes, and the flag rules that mark suspicious writes.
 */
export { reviewHandlers } from './handlers'
export {
  createReviewService,
  type GateOptions,
  type ReviewService,
  type ReviewServiceOptions,
} from './review-service'
export { flagsFor } from './check'
export { heldCallsFile, readHeldCalls, type HeldCall } from './held-calls'
