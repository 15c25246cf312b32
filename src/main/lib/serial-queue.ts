/** Runs tasks one at a time, in call order; a failing task does not stop the ones after it. */
export interface SerialQueue {
  run<T>(task: () => Promise<T>): Promise<T>
  /** Resolves when everything queued so far has finished. */
  idle(): Promise<void>
}

export function createSerialQueue(): SerialQueue {
  let tail: Promise<unknown> = Promise.resolve()
  return {
    run(task) {
      const result = tail.then(task)
      tail = result.catch(() => undefined)
      return result
    },
    idle() {
      return tail.then(() => undefined)
    },
  }
}
