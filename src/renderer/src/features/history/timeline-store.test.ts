import { describe, expect, it } from 'vitest'
import type { CommitSummary, LogPage } from '../../../../shared/types'
import { PAGE_SIZE, TimelineStore, type FetchPage } from './timeline-store'

function commit(n: number): CommitSummary {
  return {
    oid: n.toString(16).padStart(40, '0'),
    parent: null,
    time: n,
    actor: n % 2 ? 'claude' : 'user',
    command: 'create',
    subject: `create /memories/${n}.md`,
    paths: [`/memories/${n}.md`],
    conversationId: null,
    toolUseId: null,
    overwrite: false,
    restoredFrom: null,
  }
}

/** A history of `count` commits answered like history:log (newest first), recording requests. */
function history(count: number) {
  let all = Array.from({ length: count }, (_, i) => commit(count - i))
  const requests: Array<{ offset: number; limit: number; actor?: string }> = []
  const fetchPage: FetchPage = async (query) => {
    requests.push(query)
    const matching = query.actor ? all.filter((c) => c.actor === query.actor) : all
    const page: LogPage = {
      entries: matching.slice(query.offset, query.offset + query.limit),
      total: matching.length,
    }
    return page
  }
  return {
    requests,
    fetchPage,
    add(n: number) {
      all = [commit(n), ...all]
    },
  }
}

/** Resolves once the store has no page loading (told by its own subscription, no timer). */
function idle(store: TimelineStore): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (store.getSnapshot().loading) return
      unsubscribe()
      resolve()
    }
    const unsubscribe = store.subscribe(check)
    check()
  })
}

describe('TimelineStore', () => {
  it('loads only the pages of the visible rows', async () => {
    const h = history(10_000)
    const store = new TimelineStore(h.fetchPage, String)
    store.ensure(0, 30)
    await idle(store)
    expect(store.getSnapshot().total).toBe(10_000)
    store.ensure(5_020, 5_060)
    await idle(store)
    expect(h.requests.map((r) => r.offset)).toEqual([0, 5_000])
    expect(h.requests.every((r) => r.limit === PAGE_SIZE)).toBe(true)
    expect(store.entryAt(5_030)?.subject).toBe(`create /memories/${10_000 - 5_030}.md`)
    expect(store.entryAt(200)).toBeUndefined()
  })

  it('does not ask twice for a page that is already loading', async () => {
    const h = history(500)
    const store = new TimelineStore(h.fetchPage, String)
    store.ensure(0, 10)
    store.ensure(0, 20)
    await idle(store)
    expect(h.requests).toHaveLength(1)
  })

  it('keeps showing rows while a new commit refetches them, then shows the new one first', async () => {
    const h = history(3)
    const store = new TimelineStore(h.fetchPage, String)
    store.ensure(0, 10)
    await idle(store)
    h.add(4)
    store.refresh()
    expect(store.entryAt(0)?.subject).toBe('create /memories/3.md')
    await idle(store)
    expect(store.entryAt(0)?.subject).toBe('create /memories/4.md')
    expect(store.getSnapshot().total).toBe(4)
  })

  it('starts over from the first page when the filters change', async () => {
    const h = history(10)
    const store = new TimelineStore(h.fetchPage, String)
    store.ensure(0, 10)
    await idle(store)
    store.setFilters({ actor: 'user' })
    expect(store.getSnapshot().total).toBeNull()
    await idle(store)
    expect(store.getSnapshot().total).toBe(5)
    expect(h.requests.at(-1)).toMatchObject({ actor: 'user', offset: 0 })
  })

  it('finds where a commit sits by paging until it shows up', async () => {
    const h = history(450)
    const store = new TimelineStore(h.fetchPage, String)
    expect(await store.locate(commit(450 - 321).oid)).toBe(321)
    expect(await store.locate('f'.repeat(40))).toBeNull()
  })

  it('reports a failed page and loads it again on refresh', async () => {
    let fail = true
    const h = history(5)
    const store = new TimelineStore(
      async (query) => {
        if (fail) throw new Error('core is busy')
        return h.fetchPage(query)
      },
      (error) => (error as Error).message,
    )
    store.ensure(0, 5)
    await idle(store)
    expect(store.getSnapshot().error).toBe('core is busy')
    fail = false
    store.refresh()
    await idle(store)
    expect(store.getSnapshot()).toMatchObject({ error: null, total: 5 })
  })
})
