import type { PendingChange } from '../../../shared/types'
import { Loading } from './Feedback'
import { LazyPart, retryableLazy } from './LazyPart'

// A change waiting for review (its diff, flags and editor) appears only in review mode: its
// code, with the diff library, loads the first time one is shown.
const PendingChangeView = retryableLazy(() =>
  import('./PendingChangeView').then((module) => ({ default: module.PendingChangeView })),
)

/** `PendingChangeView`, loaded on first use, with a wait that shows only if loading lingers. */
export function LazyPendingChange(props: { readonly change: PendingChange }) {
  return (
    <LazyPart fallback={<Loading active label="Loading the change…" />}>
      <PendingChangeView change={props.change} />
    </LazyPart>
  )
}
