/**
 * A least-recently-used map bounded by the bytes of what it holds (each value says its size):
 * caches of object names, built objects and delta bases, which must never grow with history.
 */
export class ByteLru<V> {
  private readonly entries = new Map<string, V>()
  private bytes = 0

  constructor(
    private readonly budget: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  /** The value of `key`, now the most recently used. */
  get(key: string): V | undefined {
    const hit = this.entries.get(key)
    if (hit !== undefined) {
      this.entries.delete(key)
      this.entries.set(key, hit)
    }
    return hit
  }

  /** Stores `value`, then drops the least recently used until the total fits the budget. */
  set(key: string, value: V): void {
    this.delete(key)
    this.entries.set(key, value)
    this.bytes += this.sizeOf(value)
    // Within budget (nearly always): no iterator made.
    if (this.bytes <= this.budget) return
    for (const [oldKey, old] of this.entries) {
      if (this.bytes <= this.budget) break
      this.entries.delete(oldKey)
      this.bytes -= this.sizeOf(old)
    }
  }

  delete(key: string): void {
    const old = this.entries.get(key)
    if (old === undefined) return
    this.entries.delete(key)
    this.bytes -= this.sizeOf(old)
  }

  /** Drops every key that starts with `prefix`. */
  deletePrefix(prefix: string): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.delete(key)
  }
}
