import { describe, expect, it } from 'vitest'
import { consistentRead, inOneGo, type Breather } from './time-slices'

// The memory's change stamp stood in for by a counter the test moves; `sliced-walks.test.ts`
// runs the same reads on a real memory folder with real changes.
describe('consistentRead', () => {
  const sliced: Breather = () => Promise.resolve()

  it('reads once, in slices, when nothing changes', async () => {
    const ways: Breather[] = []
    const result = await consistentRead(
      () => 4,
      async (breathe) => {
        ways.push(breathe)
        return 'read'
      },
      { slices: () => sliced },
    )
    expect(result).toBe('read')
    expect(ways).toEqual([sliced])
  })

  it('reads in one go at once while a change runs, never in slices', async () => {
    const ways: Breather[] = []
    await consistentRead(
      () => 5,
      async (breathe) => {
        ways.push(breathe)
        return null
      },
      { slices: () => sliced },
    )
    expect(ways).toEqual([inOneGo])
  })

  it('reads again when a change ran meanwhile, and in one go after two torn reads', async () => {
    let stamp = 0
    const ways: Breather[] = []
    const result = await consistentRead(
      () => stamp,
      async (breathe) => {
        ways.push(breathe)
        // A whole change (start and end) lands in every sliced read.
        if (breathe !== inOneGo) stamp += 2
        return ways.length
      },
      { slices: () => sliced },
    )
    expect(ways).toEqual([sliced, sliced, inOneGo])
    expect(result).toBe(3)
  })
})
