import { readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { CommitSummary } from '../../shared/types'
import { tempDataDir } from '../history/test-helpers'
import { createRecordingLogger } from '../lib/logger'
import { MAX_FILES, openReadLog } from './read-log'

let dataDir: string
let cleanup: () => Promise<void>
let clock = 1_000_000

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  clock = 1_000_000
})
afterEach(() => cleanup())

const open = (logger = createRecordingLogger()) =>
  openReadLog({ dataDir, logger, now: () => clock, flushDelayMs: 60_000 })

const commit = (over: Partial<CommitSummary>): CommitSummary => ({
  oid: 'a'.repeat(40),
  parent: null,
  time: clock,
  actor: 'claude',
  command: 'create',
  subject: 'x',
  paths: ['/memories/a.md'],
  conversationId: null,
  toolUseId: null,
  overwrite: false,
  restoredFrom: null,
  ...over,
})

describe('the read log', () => {
  it('remembers reads and Claude’s changes across a restart, in one small file', async () => {
    const log = await open()
    expect(log.since).toBe(1_000_000)
    log.noteRead('/memories/a.md')
    clock += 5
    log.noteCommit(commit({ time: clock }))
    log.noteCommit(commit({ actor: 'user', paths: ['/memories/b.md'] }))
    await log.close()
    const file = path.join(dataDir, 'read-log.json')
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      version: 1,
      since: 1_000_000,
      files: { '/memories/a.md': { read: 1_000_000, changed: 1_000_005 } },
    })
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    clock += 1_000
    const again = await open()
    expect(again.since).toBe(1_000_000)
    expect(again.get('/memories/a.md')).toEqual({ read: 1_000_000, changed: 1_000_005 })
    expect(again.get('/memories/b.md')).toBeUndefined()
    await again.close()
  })

  it('carries records along when anyone renames a file or a folder', async () => {
    const log = await open()
    log.noteRead('/memories/d/x.md')
    log.noteRead('/memories/solo.md')
    log.noteCommit(
      commit({ actor: 'user', command: 'rename', paths: ['/memories/d', '/memories/e'] }),
    )
    log.noteCommit(
      commit({ actor: 'user', command: 'rename', paths: ['/memories/solo.md', '/memories/s.md'] }),
    )
    expect(log.get('/memories/e/x.md')).toEqual({ read: clock })
    expect(log.get('/memories/s.md')).toEqual({ read: clock })
    expect(log.get('/memories/d/x.md')).toBeUndefined()
    await log.close()
  })

  it('keeps a deleted file’s record, so a file brought back keeps its past', async () => {
    const log = await open()
    log.noteRead('/memories/a.md')
    log.noteCommit(commit({ actor: 'user', command: 'delete' }))
    expect(log.get('/memories/a.md')).toEqual({ read: clock })
    await log.close()
  })

  it('starts over from a damaged file and says so', async () => {
    await writeFile(path.join(dataDir, 'read-log.json'), '{"version":1,"since":')
    const logger = createRecordingLogger()
    const log = await open(logger)
    expect(log.get('/memories/a.md')).toBeUndefined()
    expect(logger.entries.map((e) => e.message)).toEqual([
      'The read log was damaged; starting a new one',
    ])
    await log.close()
    expect(JSON.parse(await readFile(path.join(dataDir, 'read-log.json'), 'utf8'))).toMatchObject({
      version: 1,
    })
  })

  it('drops records it cannot trust and keeps the rest', async () => {
    await writeFile(
      path.join(dataDir, 'read-log.json'),
      JSON.stringify({
        version: 1,
        since: 5,
        files: {
          '/memories/ok.md': { read: 7, changed: 'yesterday' },
          '/etc/passwd': { read: 9 },
          '/memories/bad.md': 'x',
        },
      }),
    )
    const log = await open()
    expect(log.since).toBe(5)
    expect(log.get('/memories/ok.md')).toEqual({ read: 7 })
    expect(log.get('/etc/passwd')).toBeUndefined()
    expect(log.get('/memories/bad.md')).toBeUndefined()
    await log.close()
  })

  it('stays bounded: past the limit, the longest unused records go', async () => {
    const log = await open()
    for (let i = 0; i <= MAX_FILES; i++) {
      clock++
      log.noteRead(`/memories/f${i}.md`)
    }
    await log.close()
    const stored = JSON.parse(await readFile(path.join(dataDir, 'read-log.json'), 'utf8'))
    const kept = Object.keys(stored.files)
    expect(kept.length).toBeLessThanOrEqual(MAX_FILES)
    expect(kept).toContain(`/memories/f${MAX_FILES}.md`)
    expect(kept).not.toContain('/memories/f0.md')
  })
})
