/**
 * Long whole-folder work (the memory tree, the size meter) done in slices, the event loop given
 * back between them: on one loop, a synchronous walk of 20,000 files held every other answer
 * (a conversation list, the sync status) for seconds. The disk calls stay synchronous (they go
 * through each folder's handle, `lib/folders.ts`); only their order with other work changes.
 */

/**
 * Asked between two steps of a long job: a promise to await when the job has had the loop long
 * enough (resolved once other work has had its turn), or undefined to go on at once.
 */
export type Breather = () => Promise<void> | undefined

/** How long a slice holds the loop: short enough for an answer or a keypress to get through. */
export const SLICE_MS = 8

/** A breather that gives the loop back once `budgetMs` have passed since the last time. */
export function timeSlices(budgetMs: number = SLICE_MS): Breather {
  let since = performance.now()
  return () => {
    if (performance.now() - since < budgetMs) return undefined
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now()
        resolve()
      }),
    )
  }
}

/** A breather that never gives the loop back: the job runs in one go, as before slices. */
export const inOneGo: Breather = () => undefined

/**
 * Reads the folder in slices, and trusts the result only if no change to the folder ran while
 * it did: `changeStamp` (the memory's) is odd while a change runs and moves on with each one, so
 * a read made between the slices of a rename, a restore or a sync (one that could list a moved
 * file twice or not at all) is read again. After `tries` torn reads it is made in one go, which
 * no change's synchronous steps can split (what every read did before slices).
 *
 * A read asked while a change runs waits for it to end (`changeEnded`, the memory's) before it
 * starts: a change awaits the disk between its steps (a restore fsyncs each file before the
 * next), so a read made then, even in one go, listed one restored file and the other not.
 * Without `changeEnded` (a caller that has none) such a read is made in one go at once.
 */
export async function consistentRead<T>(
  changeStamp: () => number,
  read: (breathe: Breather) => Promise<T>,
  options: {
    readonly slices?: () => Breather
    readonly tries?: number
    readonly changeEnded?: () => Promise<void>
  } = {},
): Promise<T> {
  const slices = options.slices ?? (() => timeSlices())
  const { changeEnded } = options
  const settled = async () => {
    // The next change in the queue may start as soon as one ends.
    while (changeEnded && changeStamp() % 2 !== 0) await changeEnded()
  }
  for (let attempt = 0; attempt < (options.tries ?? 2); attempt++) {
    await settled()
    const before = changeStamp()
    // A change running now, with no way to wait for its end, would tear every sliced read.
    if (before % 2 !== 0) break
    const result = await read(slices())
    if (changeStamp() === before) return result
  }
  await settled()
  return read(inOneGo)
}
