/**
 * How long Cairn waits on the Anthropic API before it gives up on a reply. The SDK's own timeout
 * (10 minutes by default, tried three times) covers only the wait for a response's head: a reply
 * that goes silent after it would stream forever, and a server that never answers would be
 * reported after half an hour. Here the head gets a shorter wait, and a streamed reply a limit on
 * silence between the bytes that arrive.
 *
 * The silence is watched under the SDK, at its `fetch`: the SDK drops the API's `ping` events
 * before Cairn's loop sees any event, and pings are what keeps a slow reply (long thinking, a
 * large tool input buffered by the API) alive. Every byte counts, a ping's as much as a word's.
 */
import { AnthropicError, type Anthropic } from '@anthropic-ai/sdk'

/** The Fetch the SDK accepts (`client.ts`'s `AnthropicFetch`; named here so neither imports the other). */
type AnthropicFetch = NonNullable<ConstructorParameters<typeof Anthropic>[0]>['fetch']

export interface ReplyLimits {
  /**
   * How long one request may wait for the response's head (ms), per attempt: the SDK's
   * `timeout`, so a request that gets no answer is tried again as the SDK retries, then ends
   * as `timeout`.
   */
  readonly firstByteMs: number
  /** How long a streamed reply may send nothing at all, pings included (ms). */
  readonly silenceMs: number
}

/**
 * The API sends a `ping` every 15 to 30 seconds or so while a reply is being made (observed, not
 * documented): two minutes is four of the slowest of those missed, so a live reply is never cut,
 * and a dead one is said within two minutes rather than never. The head of a streamed reply
 * comes within seconds (the work is done after it, in the stream); one minute per attempt, three
 * attempts, reports a server that never answers after about three minutes, not thirty.
 */
export const DEFAULT_REPLY_LIMITS: ReplyLimits = { firstByteMs: 60_000, silenceMs: 120_000 }

/** A streamed reply sent nothing for `silenceMs`: Cairn ended it (told as `timeout`). */
export class ReplySilenceError extends AnthropicError {
  constructor(readonly silenceMs: number) {
    super(`The reply sent nothing for ${silenceMs} ms`)
    this.name = 'ReplySilenceError'
  }
}

/**
 * `fetch` whose event-stream responses fail with a `ReplySilenceError` when no byte arrives for
 * `silenceMs` while the SDK is reading, the connection then closed. Other responses (errors, the
 * models list) pass as they are; a Stop (the SDK aborting the request) ends the body as before.
 */
export function watchSilence(fetch: AnthropicFetch, silenceMs: number): AnthropicFetch {
  const base = fetch ?? globalThis.fetch
  return async (input, init) => {
    const response = await base(input, init)
    const type = response.headers.get('content-type') ?? ''
    if (!response.body || !type.includes('text/event-stream')) return response
    const reader = response.body.getReader()
    let timer: ReturnType<typeof setTimeout> | undefined
    let over = false
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        // The clock runs only while the SDK waits for bytes: silence is the server's.
        timer = setTimeout(() => {
          over = true
          controller.error(new ReplySilenceError(silenceMs))
          reader.cancel().catch(() => {})
        }, silenceMs)
        try {
          const { done, value } = await reader.read()
          if (over) return
          if (done) controller.close()
          else controller.enqueue(value)
        } catch (error) {
          if (!over) controller.error(error)
        } finally {
          clearTimeout(timer)
        }
      },
      async cancel(reason) {
        clearTimeout(timer)
        await reader.cancel(reason)
      },
    })
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  }
}
