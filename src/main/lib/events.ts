import type { EventMap, EventName } from '../../shared/contract'

export type EventListener = <E extends EventName>(name: E, data: EventMap[E]) => void

/** A tiny typed event bus: services emit, the IPC layer or the e2e harness forwards. */
export interface EventBus {
  emit<E extends EventName>(name: E, data: EventMap[E]): void
  on(listener: EventListener): () => void
}

export function createEventBus(): EventBus {
  const listeners = new Set<EventListener>()
  return {
    emit(name, data) {
      for (const listener of listeners) listener(name, data)
    },
    on(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}
