import { describe, expect, it } from 'vitest'
import { dismissalsUntilAnswered } from './dismissals-until-answered'

interface Notice {
  readonly id: string
  readonly message: string
}

const notice = (id: string): Notice => ({ id, message: `${id} is not versioned` })

/** Dismissals as the core tells them: the id of the one dismissed. */
const byId = () =>
  dismissalsUntilAnswered<Notice, { readonly id: string }>((gone, entry) => gone.id === entry.id)

/** An answer the test lets arrive when it says, as the core's comes over IPC. */
function onTheWay() {
  let arrive: (value: ReadonlyArray<Notice>) => void = () => {}
  let fail: (error: unknown) => void = () => {}
  const answer = new Promise<ReadonlyArray<Notice>>((resolve, reject) => {
    arrive = resolve
    fail = reject
  })
  return { answer, arrive, fail }
}

describe('dismissals until answered', () => {
  it('takes out of the answer what was dismissed while it was on its way, and only that', async () => {
    const early = byId()
    const { answer, arrive } = onTheWay()
    const filtered = early.without(answer)
    early.heard({ id: 'recording.wav' })
    early.heard({ id: 'gone-before.bin' })
    arrive([notice('recording.wav'), notice('video.mp4'), notice('notes.bin')])
    expect(await filtered).toEqual([notice('video.mp4'), notice('notes.bin')])
  })

  it('keeps nothing once the answer came', async () => {
    const early = byId()
    const first = onTheWay()
    const filtered = early.without(first.answer)
    first.arrive([notice('recording.wav')])
    expect(await filtered).toEqual([notice('recording.wav')])

    // Heard after the answer: taken out of what is shown by the window itself, not kept here.
    early.heard({ id: 'recording.wav' })
    expect(await early.without(Promise.resolve([notice('recording.wav')]))).toEqual([
      notice('recording.wav'),
    ])
  })

  it('fails as the answer failed, and keeps nothing after', async () => {
    const early = byId()
    const { answer, fail } = onTheWay()
    const filtered = early.without(answer)
    early.heard({ id: 'recording.wav' })
    fail(new Error('the core is gone'))
    await expect(filtered).rejects.toThrow('the core is gone')

    expect(await early.without(Promise.resolve([notice('recording.wav')]))).toEqual([
      notice('recording.wav'),
    ])
  })
})
