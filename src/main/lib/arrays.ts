/**
 * Array helpers that hold for any length. `target.push(...items)` passes every item as an
 * argument, and V8 overflows its stack past about 120,000 of them ("Maximum call stack size
 * exceeded"): a merge of a 200,000-line file failed that way. Anything whose length a person
 * or another machine decides is appended with these instead.
 */

/** Appends every item of `items` to `target`, one at a time. */
export function appendAll<T>(target: T[], items: Iterable<T>): void {
  for (const item of items) target.push(item)
}
