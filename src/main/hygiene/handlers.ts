import type { DomainHandlers } from '../lib/handlers'
import type { HygieneService } from './hygiene-service'

/** Request handlers for the `hygiene:*` channels (payloads already validated). */
export function hygieneHandlers(hygiene: HygieneService): DomainHandlers<'hygiene'> {
  return {
    'hygiene:stats': () => hygiene.stats(),
    'hygiene:expire': ({ path }) => hygiene.expire(path),
  }
}
