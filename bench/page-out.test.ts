import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { pageOutNote } from './page-out'

let root = ''
let admin = ''
let reclaim = ''

/** Writes `files` (path under `dir` -> one value) as sysfs shows them: a value and a newline. */
function write(dir: string, files: Record<string, string>): void {
  for (const [name, value] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), `${value}\n`)
  }
}

/** This VM's kdamond: `pageout` for regions idle 12 aggregations of 5 s, 128 MiB/s. */
const kdamond = (state: string, action = 'pageout') => ({
  'kdamonds/nr_kdamonds': '1',
  'kdamonds/0/state': state,
  'kdamonds/0/contexts/nr_contexts': '1',
  'kdamonds/0/contexts/0/operations': 'paddr',
  'kdamonds/0/contexts/0/monitoring_attrs/intervals/sample_us': '500000',
  'kdamonds/0/contexts/0/monitoring_attrs/intervals/aggr_us': '5000000',
  'kdamonds/0/contexts/0/schemes/nr_schemes': '1',
  'kdamonds/0/contexts/0/schemes/0/action': action,
  'kdamonds/0/contexts/0/schemes/0/access_pattern/age/min': '12',
  'kdamonds/0/contexts/0/schemes/0/quotas/bytes': '134217728',
})

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-page-out-'))
  admin = path.join(root, 'admin')
  reclaim = path.join(root, 'reclaim')
})
afterEach(() => fs.rmSync(root, { recursive: true, force: true, maxRetries: 10 }))

describe('pageOutNote', () => {
  it('names a running kdamond that pages out, with its idle age and quota', () => {
    write(admin, kdamond('on'))
    expect(pageOutNote(admin, reclaim)).toMatch(
      /^machine: DAMON page-out on \(kdamond 0: pages idle ~60 s or more dropped, up to 128 MiB\/s\)/,
    )
  })

  it('says nothing when the kdamond is off', () => {
    write(admin, kdamond('off'))
    expect(pageOutNote(admin, reclaim)).toBeNull()
  })

  it('says nothing for a scheme that does not page out', () => {
    write(admin, kdamond('on', 'stat'))
    expect(pageOutNote(admin, reclaim)).toBeNull()
  })

  it('says nothing where the kernel has no DAMON', () => {
    expect(pageOutNote(admin, reclaim)).toBeNull()
  })

  it('names DAMON_RECLAIM when the module is enabled', () => {
    write(reclaim, { enabled: 'Y', min_age: '120000000' })
    expect(pageOutNote(admin, reclaim)).toMatch(
      /\(DAMON_RECLAIM: pages idle ~120 s or more dropped\)/,
    )
    write(reclaim, { enabled: 'N' })
    expect(pageOutNote(admin, reclaim)).toBeNull()
  })
})
