import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { OpeningProgress } from '../../shared/types'
import { createRecordingLogger } from '../lib/logger'
import { throttleProgress } from '../lib/progress'
import { openVersionedMemory } from './versioned-memory'
import { claudeUse, commitCount, indexDirIn, leaveStaleLock, testRepo } from './test-helpers'

// Opening can take long (a rebuild of the index walks every commit): it says what it does and
// how far it is, for the window that shows the opening (issue #15, stop 29).

const repo = testRepo({ maintenance: false })
const COMMITS = 40

async function makeHistory(): Promise<void> {
  const memory = await repo.open()
  for (let k = 0; k < COMMITS; k++) {
    await memory.execute(
      { command: 'create', path: `/memories/notes/topic-${k % 7}.md`, file_text: `v${k}\n` },
      claudeUse(`toolu_p${k}`),
    )
  }
  await memory.close()
}

/** Opens with a listener that keeps every report; closes again. */
async function openRecording(): Promise<OpeningProgress[]> {
  const told: OpeningProgress[] = []
  const memory = await openVersionedMemory({
    dataDir: repo.dataDir,
    watch: false,
    maintenance: false,
    logger: createRecordingLogger(),
    onProgress: (progress) => told.push(progress),
  })
  await memory.close()
  return told
}

const stepsOf = (told: ReadonlyArray<OpeningProgress>) =>
  told.map((progress) => progress.step).filter((step, i, all) => all[i - 1] !== step)

describe('the progress of an open', () => {
  it('a rebuild of the index counts every commit up to N of N', async () => {
    await makeHistory()
    await repo.removeSideIndex()
    const told = await openRecording()
    // Every commit git knows (one per command; the folder was empty, so no first commit).
    const total = commitCount(repo.dataDir)
    expect(total).toBe(COMMITS)
    const rebuild = told.filter((progress) => progress.step === 'rebuilding-index')
    expect(rebuild[0]).toEqual({ step: 'rebuilding-index', done: 0, total: null })
    expect(rebuild.at(-1)).toEqual({ step: 'rebuilding-index', done: total, total })
    // Counted forward, never past the end, and all with the one total once it is known.
    const counted = rebuild.slice(1)
    expect(counted.every((progress) => progress.total === total)).toBe(true)
    const dones = counted.map((progress) => progress.done)
    expect(dones).toEqual([...dones].sort((a, b) => a - b))
    expect(stepsOf(told)).toEqual(['checking', 'rebuilding-index', 'checking'])
  })

  it('the format step of an earlier index counts its entries up to N of N', async () => {
    await makeHistory()
    await writeFile(path.join(indexDirIn(repo.dataDir), 'format'), 'cairn-index 3\n')
    const told = await openRecording()
    const total = commitCount(repo.dataDir)
    const update = told.filter((progress) => progress.step === 'updating-index')
    expect(update[0]).toEqual({ step: 'updating-index', done: 0, total })
    expect(update.at(-1)).toEqual({ step: 'updating-index', done: total, total })
    expect(stepsOf(told)).toEqual(['checking', 'updating-index', 'checking'])
  })

  it('an open after an unclean stop says it is recovering; a usual open only checks', async () => {
    await makeHistory()
    expect(stepsOf(await openRecording())).toEqual(['checking'])
    leaveStaleLock(repo.dataDir)
    expect(stepsOf(await openRecording())).toEqual(['recovering'])
  })

  it('a listener that throws is logged and the open goes on', async () => {
    await makeHistory()
    await repo.removeSideIndex()
    const logger = createRecordingLogger()
    const memory = await openVersionedMemory({
      dataDir: repo.dataDir,
      watch: false,
      maintenance: false,
      logger,
      onProgress: () => {
        throw new Error('the window went away')
      },
    })
    try {
      expect((await memory.log({ offset: 0, limit: 100 })).entries).toHaveLength(COMMITS)
    } finally {
      await memory.close()
    }
    expect(logger.entries.map((entry) => entry.message)).toContain(
      'A listener of the opening progress failed',
    )
  })
})

describe('throttleProgress', () => {
  it('passes a step’s first and last report and every change of step, and thins the counting', () => {
    let now = 0
    const passed: OpeningProgress[] = []
    const report = throttleProgress(
      (progress) => passed.push(progress),
      () => undefined,
      100,
      () => now,
    )
    report({ step: 'checking', done: 0, total: null })
    report({ step: 'rebuilding-index', done: 0, total: null })
    report({ step: 'rebuilding-index', done: 0, total: 1000 })
    for (let done = 1; done <= 1000; done++) {
      now += 1
      report({ step: 'rebuilding-index', done, total: 1000 })
    }
    report({ step: 'checking', done: 0, total: null })
    expect(passed.map((progress) => `${progress.step} ${progress.done}/${progress.total}`)).toEqual(
      [
        'checking 0/null',
        'rebuilding-index 0/null',
        'rebuilding-index 0/1000',
        'rebuilding-index 100/1000',
        'rebuilding-index 200/1000',
        'rebuilding-index 300/1000',
        'rebuilding-index 400/1000',
        'rebuilding-index 500/1000',
        'rebuilding-index 600/1000',
        'rebuilding-index 700/1000',
        'rebuilding-index 800/1000',
        'rebuilding-index 900/1000',
        'rebuilding-index 1000/1000',
        'checking 0/null',
      ],
    )
  })
})
