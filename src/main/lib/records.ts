/**
 * Guards for values read back from JSON (a file Cairn wrote, a tool call's input): what
 * `JSON.parse` or the API hands over is checked before it is used.
 */

/**
 * True for a JSON object: not an array, not `null` (what the API takes as a tool call's input,
 * and what each of Cairn's own JSON files holds at its top).
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
