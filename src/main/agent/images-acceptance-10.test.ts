/**
 * Images Claude views, through the real core, the real SDK and the fake Messages API: every
 * request of a turn carries the images viewed earlier in it, so the turn keeps them within what
 * one request may carry (32 MB, and 20 images before the API allows less per image), and tells
 * Claude in plain words when it cannot show one more, instead of a request the API refuses
 * whole (which ended the turn as "too large" and would do so again on every retry).
 */
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { reply, type RecordedRequest } from '../../../test/fixtures/fake-anthropic'
import { TINY_PNG } from '../../../test/fixtures/images'
import { coreThroughFakeApi } from '../core-test-support'
import { MAX_TURN_IMAGES } from './run-turn'

const cairn = coreThroughFakeApi({ prefix: 'cairn-images-10-' })

/** The API's limit on one Messages request. */
const REQUEST_LIMIT = 32 * 1000 * 1000

function toolResults(request: RecordedRequest) {
  return (request.body?.messages ?? []).flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as Array<Record<string, unknown>>).filter((b) => b.type === 'tool_result')
      : [],
  )
}

function imagesIn(request: RecordedRequest): number {
  return JSON.stringify(request.body).split('"type":"image"').length - 1
}

/** A PNG `size` bytes long: a real 1×1 header and image, then bytes a decoder skips. */
function pngOfSize(size: number): Buffer {
  return Buffer.concat([TINY_PNG, Buffer.alloc(size - TINY_PNG.length, 7)])
}

async function viewEach(names: ReadonlyArray<string>) {
  cairn.fake.script(
    ...names.map((name, i) =>
      reply.toolUse({ id: `toolu_${i}`, input: { command: 'view', path: `/memories/${name}` } }),
    ),
    reply.text('Seen.'),
  )
  const before = cairn.fake.messageRequests().length
  const turn = await cairn.turn(null, 'Look at my pictures')
  return { turn, requests: cairn.fake.messageRequests().slice(before) }
}

describe('images viewed in one turn', () => {
  it('keeps every request under the API’s 32 MB, telling Claude the image it cannot carry', async () => {
    await mkdir(path.join(cairn.dataDir, 'memories'), { recursive: true })
    // Seven images near the 3,750,000-byte cap: about 35 MB of base64 together.
    const names = Array.from({ length: 7 }, (_, i) => `big-${i}.png`)
    for (const name of names) {
      await writeFile(path.join(cairn.dataDir, 'memories', name), pngOfSize(3_700_000))
    }
    const { turn, requests } = await viewEach(names)
    expect(turn.events.some((e) => e.type === 'error')).toBe(false)
    expect(turn.events.at(-1)).toMatchObject({ type: 'turn-finished', stopped: false })
    expect(requests).toHaveLength(8)
    for (const request of requests) {
      expect(Buffer.byteLength(JSON.stringify(request.body))).toBeLessThan(REQUEST_LIMIT)
    }
    const results = toolResults(requests.at(-1)!)
    expect(results).toHaveLength(7)
    const refused = results.filter((result) => result.is_error === true)
    expect(refused.length).toBeGreaterThan(0)
    for (const result of refused) {
      expect(result.content).toMatch(
        /^Error: This image was not shown: the images already viewed in this turn \(\d+\) are as many as one request can carry\./,
      )
    }
    // The images shown are whole; the window shows each refusal as Claude got it.
    expect(imagesIn(requests.at(-1)!)).toBe(7 - refused.length)
    const cards = turn.events.filter((e) => e.type === 'tool-result')
    expect(cards.filter((e) => e.type === 'tool-result' && e.isError)).toHaveLength(refused.length)

    // The next turn starts afresh: earlier turns carry only `[image]`.
    const next = await viewEach([names[6]!])
    expect(next.turn.events.some((e) => e.type === 'error')).toBe(false)
    expect(imagesIn(next.requests.at(-1)!)).toBe(1)
  }, 120_000)

  it('leaves "Memory at this reply" where Claude last read when an image it cannot carry is refused', async () => {
    await mkdir(path.join(cairn.dataDir, 'memories'), { recursive: true })
    await cairn.call('memory:write', { path: '/memories/a.md', content: 'The user likes tea.\n' })
    const names = Array.from({ length: MAX_TURN_IMAGES + 1 }, (_, i) => `dot-${i}.png`)
    for (const name of names) await writeFile(path.join(cairn.dataDir, 'memories', name), TINY_PNG)
    let release: () => void = () => {}
    const hold = new Promise<void>((resolve) => (release = resolve))
    cairn.fake.script(
      reply.toolUse({ id: 'toolu_a', input: { command: 'view', path: '/memories/a.md' } }),
      ...names.map((name, i) =>
        reply.toolUse(
          { id: `toolu_${i}`, input: { command: 'view', path: `/memories/${name}` } },
          i === MAX_TURN_IMAGES ? { hold } : {},
        ),
      ),
      reply.text('Seen.'),
    )
    const { conversationId, turnId } = await cairn.send(null, 'Look at my pictures')
    const results = () =>
      cairn.events.filter((e) => e.turnId === turnId && e.type === 'tool-result').length
    // The last view is held until another program has saved a.md: the view commits that save
    // before it reads, and its image is then refused.
    await cairn.until(() => results() === MAX_TURN_IMAGES + 1)
    await writeFile(path.join(cairn.dataDir, 'memories', 'a.md'), 'The user likes coffee now.\n')
    release()
    const events = await cairn.finished(turnId)
    expect(events.filter((e) => e.type === 'tool-result').at(-1)).toMatchObject({ isError: true })

    const { messages } = await cairn.call('conversations:get', { id: conversationId })
    const last = messages.filter((message) => message.role === 'assistant').at(-1)!
    // Claude never saw the save (the view that committed it was refused to it): the reply's
    // memory is the one its last shown read was at, as for any view that failed.
    const at = last.memoryAt as string
    const read = await cairn.call('memory:read', { path: '/memories/a.md', at })
    expect(read.text).toBe('The user likes tea.\n')
    expect(last.viewed).not.toContain(`/memories/${names.at(-1)}`)
    // Nor is it read for the Memory tab's "last read" and the expiry proposals.
    const { files } = await cairn.call('hygiene:stats')
    const lastRead = (name: string) => files.find((f) => f.path === `/memories/${name}`)?.lastReadAt
    expect(lastRead(names[0]!)).toEqual(expect.any(Number))
    expect(lastRead(names.at(-1)!)).toBeNull()
  }, 120_000)

  it(`carries at most ${MAX_TURN_IMAGES} images in a turn’s requests`, async () => {
    await mkdir(path.join(cairn.dataDir, 'memories'), { recursive: true })
    const names = Array.from({ length: MAX_TURN_IMAGES + 2 }, (_, i) => `dot-${i}.png`)
    for (const name of names) await writeFile(path.join(cairn.dataDir, 'memories', name), TINY_PNG)
    const { turn, requests } = await viewEach(names)
    expect(turn.events.some((e) => e.type === 'error')).toBe(false)
    const last = requests.at(-1)!
    expect(imagesIn(last)).toBe(MAX_TURN_IMAGES)
    const flags = toolResults(last).map((result) => result.is_error === true)
    expect(flags).toEqual([...Array(MAX_TURN_IMAGES).fill(false), true, true])
  }, 120_000)
})
