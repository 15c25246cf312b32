/**
 * Many changes held at once in one turn: a reply's memory calls run side by side, and under
 * review each change that waits for the person listened to the turn's signal on its own, so at
 * 11 Node printed a MaxListenersExceededWarning (a leak warning for what is no leak). The gate
 * now listens once per turn, however many changes wait; Stop still declines every one.
 */
import { getEventListeners } from 'node:events'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { PendingChange } from '../../shared/types'
import { openVersionedMemory, type VersionedMemory } from '../history'
import { commitCount, fsck, tempDataDir } from '../history/test-helpers'
import { createRecordingLogger } from '../lib/logger'
import { createReviewService, type ReviewService } from './review-service'

let cleanup: () => Promise<void>
let dataDir: string
let memory: VersionedMemory
let gate: ReviewService
const warnings: string[] = []
const onWarning = (warning: Error): void => {
  warnings.push(`${warning.name}: ${warning.message}`)
}

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  memory = await openVersionedMemory({ dataDir, watch: false })
  gate = createReviewService({ memory, mode: 'all', logger: createRecordingLogger() })
  warnings.length = 0
  process.on('warning', onWarning)
})
afterEach(async () => {
  process.off('warning', onWarning)
  await gate.close()
  await memory.close()
  await cleanup()
})

const HELD = 24

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

/** The turn's `HELD` creates, side by side as one reply's calls run, all held. */
async function holdMany(signal: AbortSignal) {
  const shown = waiting(HELD)
  const outcomes = Array.from({ length: HELD }, (_, n) =>
    gate.execute(
      { command: 'create', path: `/memories/n${n}.md`, file_text: `note ${n}\n` },
      { actor: 'claude', conversationId: 'c', toolUseId: `toolu_${n}` },
      { signal },
    ),
  )
  return { held: await shown, outcomes }
}

/** Lets a warning Node emits (on the next tick) arrive. */
const settle = () => new Promise((resolve) => setImmediate(resolve))

describe(`${HELD} changes held at once in one turn`, () => {
  it('listen to the turn once, warn of nothing, and are all declined by Stop', async () => {
    const turn = new AbortController()
    const { held, outcomes } = await holdMany(turn.signal)
    await settle()
    expect(warnings.filter((w) => w.includes('MaxListenersExceeded'))).toEqual([])
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(1)
    expect(held).toHaveLength(HELD)
    turn.abort()
    const results = await Promise.all(outcomes)
    expect(results.every((r) => r.isError && /stopped/i.test(String(r.content)))).toBe(true)
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0)
    expect(gate.list()).toEqual([])
    expect(commitCount(dataDir)).toBe(0)
  })

  it('stop listening once the last of them is decided, and a new one listens again', async () => {
    const turn = new AbortController()
    const { held, outcomes } = await holdMany(turn.signal)
    for (const [i, change] of held.entries()) {
      await gate.decide(
        i % 3 === 0
          ? { id: change.id, decision: 'decline' }
          : { id: change.id, decision: 'approve', revision: change.revision },
      )
      expect(getEventListeners(turn.signal, 'abort')).toHaveLength(i === HELD - 1 ? 0 : 1)
    }
    const results = await Promise.all(outcomes)
    expect(results.filter((r) => !r.isError)).toHaveLength(HELD - HELD / 3)
    expect(commitCount(dataDir)).toBe(HELD - HELD / 3)
    // A later step of the same turn holds one more: Stop still reaches it.
    const shown = waiting(1)
    const late = gate.execute(
      { command: 'create', path: '/memories/late.md', file_text: 'late\n' },
      { actor: 'claude', conversationId: 'c', toolUseId: 'toolu_late' },
      { signal: turn.signal },
    )
    await shown
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(1)
    turn.abort()
    expect((await late).isError).toBe(true)
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0)
    fsck(dataDir)
  })
})
