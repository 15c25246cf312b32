import type { Actor, CommitSummary, LogPage } from '../../../../shared/types'

/** What the timeline is filtered by (all optional, combined with AND). */
export interface TimelineFilters {
  readonly path?: string
  readonly conversationId?: string
  readonly actor?: Actor
}

export interface TimelineSnapshot {
  /** Entries matching the filters; null until the first page arrived. */
  readonly total: number | null
  readonly error: string | null
  readonly loading: boolean
  readonly version: number
}

export type FetchPage = (
  query: TimelineFilters & { offset: number; limit: number },
) => Promise<LogPage>

/** Entries per `history:log` request. */
export const PAGE_SIZE = 100

/**
 * The timeline's data, loaded one page at a time as rows scroll into view — never the whole
 * history. A new commit or a filter change refetches the visible pages; pages already shown
 * stay on screen until their fresh version arrives, so the list does not flash.
 */
export class TimelineStore {
  private filters: TimelineFilters = {}
  private generation = 0
  private pages = new Map<number, { generation: number; entries: ReadonlyArray<CommitSummary> }>()
  private inflight = new Map<
    number,
    { generation: number; promise: Promise<ReadonlyArray<CommitSummary> | null> }
  >()
  private range: readonly [number, number] = [0, 0]
  private listeners = new Set<() => void>()
  private snapshot: TimelineSnapshot = { total: null, error: null, loading: true, version: 0 }

  constructor(
    private readonly fetchPage: FetchPage,
    private readonly describeError: (error: unknown) => string,
  ) {}

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  getSnapshot = (): TimelineSnapshot => this.snapshot

  getFilters(): TimelineFilters {
    return this.filters
  }

  /** The entry at `index` (newest first), or undefined while its page loads. */
  entryAt(index: number): CommitSummary | undefined {
    return this.pages.get(Math.floor(index / PAGE_SIZE))?.entries[index % PAGE_SIZE]
  }

  /** Applies new filters: the list starts over from its first page. */
  setFilters(filters: TimelineFilters): void {
    this.filters = filters
    this.pages.clear()
    this.range = [0, 0]
    this.emit({ total: null })
    this.refresh()
  }

  /** Loads the visible pages again (after a commit, or from Retry). */
  refresh(): void {
    this.generation++
    this.inflight.clear()
    this.emit({ error: null })
    this.ensure(this.range[0], this.range[1])
  }

  /** Makes sure the rows `start..end` (inclusive) are loaded or loading. */
  ensure(start: number, end: number): void {
    this.range = [start, end]
    const first = Math.floor(Math.max(0, start) / PAGE_SIZE)
    const last = Math.floor(Math.max(0, end) / PAGE_SIZE)
    for (let page = first; page <= last; page++) void this.load(page)
  }

  /** Finds the position of a commit, loading pages (up to `maxPages`) until it shows up. */
  async locate(oid: string, maxPages = 20): Promise<number | null> {
    for (let page = 0; page < maxPages; page++) {
      const entries = this.pages.get(page)?.entries ?? (await this.load(page))
      if (!entries) return null
      const at = entries.findIndex((entry) => entry.oid === oid)
      if (at >= 0) return page * PAGE_SIZE + at
      if (entries.length < PAGE_SIZE) return null
    }
    return null
  }

  private load(page: number): Promise<ReadonlyArray<CommitSummary> | null> {
    const known = this.pages.get(page)
    if (known?.generation === this.generation) return Promise.resolve(known.entries)
    const running = this.inflight.get(page)
    if (running?.generation === this.generation) return running.promise
    const promise = this.fetch(page)
    this.inflight.set(page, { generation: this.generation, promise })
    return promise
  }

  private async fetch(page: number): Promise<ReadonlyArray<CommitSummary> | null> {
    const generation = this.generation
    const filters = this.filters
    this.emit({ loading: true })
    try {
      const result = await this.fetchPage({
        ...filters,
        offset: page * PAGE_SIZE,
        limit: PAGE_SIZE,
      })
      if (generation !== this.generation) return null
      this.pages.set(page, { generation, entries: result.entries })
      this.inflight.delete(page)
      this.emit({ total: result.total, loading: this.inflight.size > 0 })
      return result.entries
    } catch (error) {
      if (generation !== this.generation) return null
      this.inflight.delete(page)
      this.emit({ error: this.describeError(error), loading: this.inflight.size > 0 })
      return null
    }
  }

  private emit(change: Partial<Omit<TimelineSnapshot, 'version'>>): void {
    this.snapshot = { ...this.snapshot, ...change, version: this.snapshot.version + 1 }
    for (const listener of this.listeners) listener()
  }
}
