import { describe, expect, it } from 'vitest'
import { heldUntilAnswered } from './held-until-answered'

interface Notice {
  readonly id: string
  readonly path: string
  readonly message: string
}

const notice = (id: string, path = id): Notice => ({
  id,
  path,
  message: `${path} is not versioned`,
})

/**
 * Dismissals as the core tells them: the id of the one dismissed; a notice told takes the place
 * of the answer's of its id or its file.
 */
const byId = () =>
  heldUntilAnswered<Notice, { readonly id: string }>({
    dismisses: (gone, entry) => gone.id === entry.id,
    replaces: (told, entry) => told.id === entry.id || told.path === entry.path,
  })

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

/** Nothing is held any more: a later answer comes as it is. */
async function holdsNothing(early: ReturnType<typeof byId>): Promise<void> {
  const later = [notice('recording.wav')]
  expect(await early.without(Promise.resolve(later))).toEqual(later)
}

describe('held until answered', () => {
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

    // Heard or told after the answer: the window itself takes it out of, or puts it over, what
    // it shows; nothing is kept here.
    early.heard({ id: 'recording.wav' })
    early.told(notice('notice-2', 'recording.wav'))
    await holdsNothing(early)
  })

  it('fails as the answer failed, and keeps nothing after', async () => {
    const early = byId()
    const { answer, fail } = onTheWay()
    const filtered = early.without(answer)
    early.heard({ id: 'recording.wav' })
    early.told(notice('notice-2', 'recording.wav'))
    fail(new Error('the core is gone'))
    await expect(filtered).rejects.toThrow('the core is gone')

    await holdsNothing(early)
  })

  it('takes out of the answer what a notice told while it was on its way takes the place of', async () => {
    const early = byId()
    const { answer, arrive } = onTheWay()
    const filtered = early.without(answer)
    // Raised again for its file (a new id), and moved with its file (its id kept).
    early.told(notice('notice-3', 'notes.md'))
    early.told(notice('notice-1', 'moved.bin'))
    arrive([
      notice('notice-1', 'big.bin'),
      notice('notice-2', 'notes.md'),
      notice('notice-4', 'video.mp4'),
    ])
    expect(await filtered).toEqual([notice('notice-4', 'video.mp4')])
  })

  it('holds dismissals and notices told together, each taking out its own', async () => {
    const early = byId()
    const { answer, arrive } = onTheWay()
    const filtered = early.without(answer)
    early.heard({ id: 'notice-1' })
    early.told(notice('notice-5', 'notes.md'))
    arrive([notice('notice-1'), notice('notice-2', 'notes.md'), notice('notice-3')])
    expect(await filtered).toEqual([notice('notice-3')])
  })
})
