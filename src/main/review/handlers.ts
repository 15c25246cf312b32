import type { DomainHandlers } from '../lib/handlers'
import type { ReviewService } from './review-service'

/** Request handlers for the `review:*` channels (payloads already validated). */
export function reviewHandlers(review: ReviewService): DomainHandlers<'review'> {
  return {
    'review:list': () => review.list(),
    'review:decide': (decision) => review.decide(decision),
    'review:text': ({ id }) => review.text(id),
  }
}
