/**
 * A held change stops listening to its turn's signal once it is decided. The gate declines a
 * waiting change when its turn is stopped by listening to the turn's signal; a listener left
 * there after the decision kept the change (its whole text before and after) alive until the
 * turn ended, so a long turn of held edits to a large file held every one of them in memory.
 */
import { getEventListeners } from 'node:events'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { PendingChange } from '../../shared/types'
import { openVersionedMemory, type VersionedMemory } from '../history'
import { commitCount, fsck, tempDataDir } from '../history/test-helpers'
import { createRecordingLogger } from '../lib/logger'
import { createReviewService, type ReviewService } from './review-service'

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory
let gate: ReviewService

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  memory = await openVersionedMemory({ dataDir, watch: false })
  gate = createReviewService({ memory, mode: 'all', logger: createRecordingLogger() })
})
afterEach(async () => {
  await gate.close()
  await memory.close()
  await cleanup()
})

const claude = (n: number) =>
  ({ actor: 'claude', conversationId: 'c', toolUseId: `toolu_${n}` }) as const

/** Resolves with the pending list once `count` changes wait. */
function waiting(count: number): Promise<ReadonlyArray<PendingChange>> {
  return new Promise((resolve) => {
    const off = gate.onPending((changes) => {
      if (changes.length !== count) return
      off()
      resolve(changes)
    })
  })
}

describe("a held change and its turn's signal", () => {
  it('stops listening once approved or declined, one call after another and in parallel', async () => {
    const turn = new AbortController()
    const listening = () => getEventListeners(turn.signal, 'abort').length
    // One after another, as a turn's steps come: each decided before the next is held.
    for (let n = 0; n < 4; n++) {
      const shown = waiting(1)
      const outcome = gate.execute(
        { command: 'create', path: `/memories/step-${n}.md`, file_text: `step ${n}\n` },
        claude(n),
        { signal: turn.signal },
      )
      const [held] = await shown
      expect(listening()).toBe(1)
      await gate.decide({
        id: held!.id,
        decision: n % 2 === 0 ? 'approve' : 'decline',
        revision: held!.revision,
      })
      await outcome
      expect(listening()).toBe(0)
    }
    // Three in parallel, as one reply's tool_use blocks come.
    const shown = waiting(3)
    const outcomes = [4, 5, 6].map((n) =>
      gate.execute(
        { command: 'create', path: `/memories/step-${n}.md`, file_text: `step ${n}\n` },
        claude(n),
        { signal: turn.signal },
      ),
    )
    const held = await shown
    // One listener for all of a turn's waiting changes (many-held.test.ts).
    expect(listening()).toBe(1)
    await gate.decide({ id: held[1]!.id, decision: 'approve', revision: held[1]!.revision })
    expect(listening()).toBe(1)
    await gate.decide({ id: held[0]!.id, decision: 'decline' })
    expect(listening()).toBe(1)
    // Stop declines the last one: it was listening, and is no longer.
    turn.abort()
    const results = await Promise.all(outcomes)
    expect(results.map((r) => r.isError)).toEqual([true, false, true])
    expect(listening()).toBe(0)
    expect(commitCount(dataDir)).toBe(3)
    fsck(dataDir)
  })
})
