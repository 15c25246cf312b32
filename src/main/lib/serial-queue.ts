/** Runs tasks one at a time, in call order; a failing task does not stop the ones after it. */
export interface SerialQueue {
  run<T>(task: () => Promise<T>): Promise<T>
  /** Resolves when everything queued so far has finished. */
  idle(): Promise<void>
  /** True while a task runs or waits (background work yields to it). */
  busy(): boolean
  /**
   * When (`performance.now()`) the queue was last busy: the present while it is, -Infinity
   * before its first task (background work that must not overlap a task waits for quiet).
   */
  lastActive(): number
  /**
   * Calls `listener` each time a task is queued (work off the main thread stops for it);
   * returns the function that removes it.
   */
  onQueued(listener: () => void): () => void
}

export function createSerialQueue(): SerialQueue {
  let tail: Promise<unknown> = Promise.resolve()
  let pending = 0
  let endedAt = -Infinity
  const listeners = new Set<() => void>()
  return {
    run(task) {
      pending++
      for (const listener of listeners) listener()
      const result = tail.then(task)
      tail = result
        .catch(() => undefined)
        .finally(() => {
          pending--
          endedAt = performance.now()
        })
      return result
    },
    idle() {
      return tail.then(() => undefined)
    },
    busy: () => pending > 0,
    lastActive: () => (pending > 0 ? performance.now() : endedAt),
    onQueued(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}
