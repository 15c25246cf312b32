import { reply, sse, type FakeResponse } from '../test/fixtures/fake-anthropic'
import { expect, test } from './fixtures/harness'
import { shoot } from './fixtures/screens'
import { ChatPage } from './pages/chat.page'

const KEY = 'sk-ant-e2e-markdown-streaming'

/**
 * `text` streamed as the API streams it, `size` characters a delta and one delta every
 * `everyMs`; the reply ends `endAfterMs` after its last delta.
 */
function streamed(text: string, size: number, everyMs: number, endAfterMs = everyMs): FakeResponse {
  const delta = (piece: string) =>
    sse.event('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: piece },
    })
  const later: Array<{ afterMs: number; body: string }> = []
  for (let at = 0; at < text.length; at += size) {
    later.push({ afterMs: everyMs, body: delta(text.slice(at, at + size)) })
  }
  later.push({
    afterMs: endAfterMs,
    body:
      sse.event('content_block_stop', { type: 'content_block_stop', index: 0 }) +
      sse.end('end_turn'),
  })
  const start = sse.event('content_block_start', {
    type: 'content_block_start',
    index: 0,
    content_block: { type: 'text', text: '' },
  })
  return reply.raw(sse.messageStart() + start, { later })
}

interface LongTasks {
  durations: number[]
}

for (const scheme of ['light', 'dark'] as const) {
  test(`a streamed reply of thousands of marks is shown plain with a note; one of hundreds is shown plain while streaming and formatted once complete (${scheme})`, async ({
    page,
    cairn,
    anthropic,
  }) => {
    test.setTimeout(120_000)
    await cairn.core.dispatch('settings:setApiKey', { key: KEY })
    // 2,400 levels of emphasis, 12 characters every 15 ms: each delta was formatted again until
    // it passed the limit of 1,000 (the window froze for seconds).
    const marks = '*_'.repeat(1200)
    // 800 levels, under the limit: costly at every delta, so it waits until it is complete.
    const some = `Nested: ${'*_'.repeat(200)}deep${'_*'.repeat(200)}`
    anthropic.script(streamed(marks, 12, 15), streamed(some, 12, 15, 3000))
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    await page.evaluate(() => {
      const state = globalThis as unknown as { longTasks: LongTasks }
      state.longTasks = { durations: [] }
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) state.longTasks.durations.push(entry.duration)
      }).observe({ type: 'longtask' })
    })
    const chat = new ChatPage(page)

    await chat.send('Stream marks.')
    await expect(chat.lastReply()).toContainText('too many *, _, ~ or [ marks to format quickly')
    await expect(chat.composer).toBeEnabled()
    await expect(chat.lastReply()).toContainText('*_*_*_*_')
    const durations = await page.evaluate(
      () => (globalThis as unknown as { longTasks: LongTasks }).longTasks.durations,
    )
    // A figure for the performance notes (measured, never asserted: the machine's load decides).
    console.log(
      `long tasks while streaming ${marks.length} marks: ${durations.length}, longest ${Math.round(
        Math.max(0, ...durations),
      )} ms, in all ${Math.round(durations.reduce((sum, d) => sum + d, 0))} ms`,
    )

    await chat.send('Some marks.')
    await expect(chat.replies()).toHaveCount(2)
    // Still streaming (the end is 3 s away): shown plain, and said so.
    await expect(chat.lastReply()).toContainText(
      'Shown as plain text until the reply is complete, then formatted.',
    )
    await expect(chat.lastReply()).toHaveAttribute('aria-busy', 'true')
    await shoot(page, cairn, `chat-streaming-plain-${scheme}`)
    // Complete: formatted once, its marks paired as emphasis.
    await expect(chat.lastReply().locator('em').first()).toBeAttached()
    await expect(chat.lastReply()).toContainText('deep')
    await expect(chat.lastReply()).not.toContainText('Shown as plain text')
    expect(cairn.pageErrors).toEqual([])
  })
}
