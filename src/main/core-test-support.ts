import type { RequestChannel, RequestResults } from '../shared/contract'
import type { Core } from './core'

/**
 * Sends one request through the core's dispatcher, as the window would, and returns its value;
 * a refused request throws with its code and message, so a test fails where it happened.
 */
export async function callCore<C extends RequestChannel>(
  core: Core,
  channel: C,
  payload?: unknown,
): Promise<RequestResults[C]> {
  const result = await core.dispatch(channel, payload)
  if (!result.ok) throw new Error(`${channel} failed: ${result.error.code} ${result.error.message}`)
  return result.value as RequestResults[C]
}
