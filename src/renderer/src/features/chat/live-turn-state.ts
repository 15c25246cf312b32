/**
 * The live turns a window holds, by conversation, and how events and the running turns main
 * reports (`chat:running`) change them. Pure: values in, values out.
 */
import type { AgentEvent, RunningTurn } from '../../../../shared/types'
import { applyAgentEvent, startLiveTurn, type LiveTurn } from './transcript-model'

/** A live turn plus whether the stored conversation has caught up with it. */
export interface TrackedTurn extends LiveTurn {
  /** True once the pane reloaded the stored conversation after the turn finished. */
  readonly settled: boolean
  readonly errorDismissed: boolean
  /** The `seq` of the next event this turn expects: an event below it was applied already. */
  readonly next: number
  /** False when the window saw only the turn's later events (it opened in the middle). */
  readonly fromStart: boolean
}

export type TurnsByConversation = Readonly<Record<string, TrackedTurn>>

function track(
  turn: LiveTurn,
  previous: TrackedTurn | undefined,
  next: number,
  fromStart: boolean,
): TrackedTurn {
  const sameTurn = previous?.turnId === turn.turnId
  return {
    ...turn,
    settled: sameTurn ? previous.settled : false,
    errorDismissed: sameTurn ? previous.errorDismissed : false,
    next,
    fromStart: sameTurn ? previous.fromStart : fromStart,
  }
}

/** Applies one live event; one the turn already holds (its `seq` is below `next`) is skipped. */
export function withEvent(all: TurnsByConversation, event: AgentEvent): TurnsByConversation {
  const current = all[event.conversationId]
  const sameTurn = current !== undefined && current.turnId === event.turnId
  if (sameTurn && event.seq < current.next) return all
  const base = sameTurn ? current : track(startLiveTurn(event), undefined, 0, event.seq === 0)
  return {
    ...all,
    [event.conversationId]: track(applyAgentEvent(base, event), base, event.seq + 1, false),
  }
}

/**
 * The turns main says run now (`chat:running`), each rebuilt from its events so far, then the
 * live events that came while the question was out (`since`) applied on top from its `next`:
 * nothing missing, nothing twice. A conversation main does not name keeps what the window has,
 * and so does one whose answered turn has since given way to a newer one: main answered before
 * that turn ended and the next began, so its answer is about the older turn, never the current.
 */
export function withRunning(
  all: TurnsByConversation,
  running: ReadonlyArray<RunningTurn>,
  since: ReadonlyArray<AgentEvent>,
): TurnsByConversation {
  let result = all
  for (const turn of running) {
    const [first] = turn.events
    if (!first) continue
    const current = all[turn.conversationId]
    // A later turn in the same conversation is already here (this one ended since).
    if (current && current.turnId !== turn.turnId && !current.finished) continue
    // ... or came and ended while the question was out (a short turn, a quick failure).
    if (newerTurnArrived(turn, since)) continue
    if (current && current.turnId === turn.turnId && current.fromStart) continue
    let rebuilt: LiveTurn = startLiveTurn(first)
    for (const event of turn.events) rebuilt = applyAgentEvent(rebuilt, event)
    result = {
      ...result,
      [turn.conversationId]: track(rebuilt, undefined, turn.next, first.seq === 0),
    }
    for (const event of since) {
      if (event.turnId === turn.turnId) result = withEvent(result, event)
    }
  }
  return result
}

/**
 * True when `since` (the live events, in the order they came) holds an event of another turn of
 * `turn`'s conversation after one of `turn`'s own: main ran `turn` when it answered, so the other
 * one began after it ended, and is the newer. (One whose events all come before `turn`'s is an
 * older turn that ended before `turn` began.)
 */
function newerTurnArrived(turn: RunningTurn, since: ReadonlyArray<AgentEvent>): boolean {
  let seenOwn = false
  for (const event of since) {
    if (event.conversationId !== turn.conversationId) continue
    if (event.turnId === turn.turnId) seenOwn = true
    else if (seenOwn) return true
  }
  return false
}
