/**
 * Global setup of `npm run test:stress`: gives the tests a file to add their totals to, and
 * prints the sums when the run ends.
 */

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { TOTAL_NAMES, type Totals } from './stress'

export default function setup(): () => void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-stress-'))
  const file = path.join(dir, 'totals.jsonl')
  fs.writeFileSync(file, '')
  process.env['CAIRN_STRESS_TOTALS'] = file
  process.env['CAIRN_STRESS'] = '1'
  return () => {
    const sums: Totals = {
      rounds: 0,
      kills: 0,
      damageKinds: 0,
      injectedFaults: 0,
      generatedCommands: 0,
      escapes: 0,
      losses: 0,
    }
    const byTest = new Map<string, Partial<Totals>>()
    for (const line of fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
      const { test, ...counts } = JSON.parse(line) as Partial<Totals> & { test: string }
      const mine = byTest.get(test) ?? {}
      for (const name of TOTAL_NAMES) {
        const value = counts[name] ?? 0
        sums[name] += value
        if (counts[name] !== undefined) mine[name] = (mine[name] ?? 0) + value
      }
      byTest.set(test, mine)
    }
    fs.rmSync(dir, { recursive: true, force: true })
    const label: Record<keyof Totals, string> = {
      rounds: 'rounds',
      kills: 'kills',
      damageKinds: 'damage kinds',
      injectedFaults: 'injected faults',
      generatedCommands: 'generated commands',
      escapes: 'escapes',
      losses: 'losses',
    }
    const lines = ['', 'Stress totals', '-------------']
    for (const name of TOTAL_NAMES) lines.push(`${label[name].padEnd(20)} ${sums[name]}`)
    lines.push('', 'by test:')
    for (const [test, counts] of byTest) {
      const parts = TOTAL_NAMES.filter((n) => counts[n] !== undefined).map(
        (n) => `${label[n]} ${counts[n]}`,
      )
      lines.push(`  ${test}: ${parts.join(', ')}`)
    }
    console.log(lines.join('\n'))
    if (sums.escapes > 0 || sums.losses > 0) {
      console.error(`STRESS FAILED: ${sums.escapes} escapes, ${sums.losses} losses`)
      process.exitCode = 1
    }
  }
}
