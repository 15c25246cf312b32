/**
 * Quick and full sizes of the machinery tests, and their totals.
 *
 * `npm test` runs every machinery test at its quick size (seconds). `npm run test:stress`
 * sets CAIRN_STRESS=1 for the full size and CAIRN_STRESS_TOTALS to a file where each test
 * adds what it did; test/stress/report.ts prints the sums when the run ends.
 */

import fs from 'node:fs'

/** True in `npm run test:stress`. */
export const STRESS = process.env['CAIRN_STRESS'] === '1'

/** `quick` in `npm test`, `full` in the stress run. */
export function size<T>(quick: T, full: T): T {
  return STRESS ? full : quick
}

/** What the machinery tests count. */
export interface Totals {
  /** Scenario runs: crash rounds, fault positions, fuzz runs, race rounds. */
  rounds: number
  /** SIGKILLs delivered to a child running commands (or opening). */
  kills: number
  /** Kinds of damage to history.git opened after. */
  damageKinds: number
  /** File-system calls failed on purpose. */
  injectedFaults: number
  /** Memory commands generated and run (valid, malformed and hostile). */
  generatedCommands: number
  /** Reads or changes that reached outside the memory folder. */
  escapes: number
  /** Acknowledged changes missing afterwards, or commit counts that dropped. */
  losses: number
}

export const TOTAL_NAMES: ReadonlyArray<keyof Totals> = [
  'rounds',
  'kills',
  'damageKinds',
  'injectedFaults',
  'generatedCommands',
  'escapes',
  'losses',
]

/** Adds to the run's totals (a JSON line in CAIRN_STRESS_TOTALS; nothing outside the stress run). */
export function addTotals(test: string, counts: Partial<Totals>): void {
  const file = process.env['CAIRN_STRESS_TOTALS']
  if (!file) return
  fs.appendFileSync(file, `${JSON.stringify({ test, ...counts })}\n`)
}
