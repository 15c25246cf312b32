/**
 * A JPEG whose frame header gives a side of 0 pixels passed `view`'s image check: its markers
 * run as they should, so it went to the API as an image, which refuses the whole request over
 * it (the turn ends in an error over one view). It is now told plainly that it is not a valid
 * JPEG image, as a PNG with a side of 0 already was.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { legalImages, TINY_JPEG } from '../../../test/fixtures/images'
import { imageTypeOf } from './view'
import { makeSandbox, type Sandbox } from './test-support'

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
})
afterEach(async () => {
  await box.cleanup()
})

// Where a frame header's fields start (precision, height, width), by walking the segments.
function frameOf(bytes: Buffer): number {
  let at = 2
  for (;;) {
    const marker = bytes[at + 1]!
    const length = bytes.readUInt16BE(at + 2)
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) return at + 4
    at += 2 + length
  }
}

function withSides(height: number, width: number): Buffer {
  const bytes = Buffer.from(TINY_JPEG)
  const frame = frameOf(bytes)
  bytes.writeUInt16BE(height, frame + 1)
  bytes.writeUInt16BE(width, frame + 3)
  return bytes
}

describe('a JPEG with a side of 0 pixels', () => {
  it('is refused by view as not a valid JPEG image, and sent as no image', async () => {
    // The fixture itself is 16×16: the patch lands on its frame header.
    expect(withSides(16, 16)).toEqual(TINY_JPEG)
    for (const [name, bytes] of [
      ['no-width.jpg', withSides(16, 0)],
      ['no-height.jpg', withSides(0, 16)],
      ['nothing.jpeg', withSides(0, 0)],
    ] as const) {
      expect(imageTypeOf(bytes), name).toBeNull()
      await box.write(name, bytes)
      expect(await box.run({ command: 'view', path: `/memories/${name}` }), name).toMatchObject({
        isError: true,
        content: `Error: /memories/${name} is not a valid JPEG image.`,
      })
    }
  })

  it('leaves every legal JPEG an image, one pixel a side included', async () => {
    const dot = withSides(1, 1)
    expect(imageTypeOf(dot)).toBe('image/jpeg')
    for (const { name, bytes, type } of legalImages()) expect(imageTypeOf(bytes), name).toBe(type)
  })
})
