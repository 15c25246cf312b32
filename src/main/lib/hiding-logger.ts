import { inspect } from 'node:util'
import type { Logger } from './logger'

/**
 * `inner` with `hide` applied to everything it is given to write: the message, and the error
 * whatever it is (its message and stack, its causes, a response body or headers it carries:
 * all it would print). The core wraps its logger in one that hides the API key, so no log call,
 * whatever its caller passes, writes the key. An error that holds nothing to hide is passed on
 * as it is; one that does is passed on as the hidden text of all it holds.
 */
export function createHidingLogger(inner: Logger, hide: (text: string) => string): Logger {
  return {
    warn: (message, error) => write('warn', message, error),
    error: (message, error) => write('error', message, error),
  }

  function write(level: 'warn' | 'error', message: string, error: unknown): void {
    const shown = hideIn(error, hide)
    if (shown === undefined) inner[level](hide(message))
    else inner[level](hide(message), shown)
  }
}

/**
 * Deeper than a console prints (2), so nothing a console would show is left out; bounded, as
 * an error can hold a large graph (a socket, a client). Arrays and buffers as a console shows
 * them (100 items); strings far longer than its 10,000 characters.
 */
const DEPTH = 6
const ARRAY_ITEMS = 100
const STRING_CHARS = 100_000

function hideIn(error: unknown, hide: (text: string) => string): unknown {
  if (error === undefined) return undefined
  let text: string
  try {
    text =
      typeof error === 'string'
        ? error
        : inspect(error, {
            depth: DEPTH,
            maxArrayLength: ARRAY_ITEMS,
            maxStringLength: STRING_CHARS,
            breakLength: 120,
            // Headers, a Map or a class's fields print as what they hold; getters too: the
            // value a getter gives is what a printer calling it would show.
            getters: true,
          })
  } catch {
    // Something that cannot be printed (a getter or a proxy that throws) is not written at all.
    return '(an error that could not be shown)'
  }
  const hidden = hide(text)
  return hidden === text ? error : hidden
}
