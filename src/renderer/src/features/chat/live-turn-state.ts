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
 * nothing missing, nothing twice. A conversation main does not name keeps what the window has.
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
