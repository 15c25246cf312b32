import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import type { MadeChange, PlannedChange } from '../memory'
import { openVersionedMemory } from './versioned-memory'
import { commitCount, folderFiles, fsck, gitCli, tempDataDir } from './test-helpers'
import type { VersionedMemory } from './types'

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  memory = await openVersionedMemory({ dataDir, watch: false })
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})

const claude = { actor: 'claude', conversationId: 'c', toolUseId: 'toolu_1' } as const

describe('execute with beforeRun', () => {
  it('asks before running, with the plan, and runs nothing when told not to', async () => {
    const seen: PlannedChange[] = []
    const outcome = await memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'A\n' },
      claude,
      {
        beforeRun: (planned) => {
          seen.push(planned)
          return { run: false }
        },
      },
    )
    expect(seen).toMatchObject([{ command: 'create', path: '/memories/a.md', after: 'A\n' }])
    expect(outcome).toMatchObject({ held: true, commit: null, isError: false, mutation: null })
    expect(outcome.planned).toEqual(seen[0])
    expect(commitCount(dataDir)).toBe(0)
    expect(await folderFiles(dataDir)).toEqual(new Map())
  })

  it('commits the review and the flags it is given, under the subject asked for', async () => {
    const outcome = await memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'A\n' },
      claude,
      {
        subject: 'expire',
        beforeRun: () => ({
          run: true,
          review: 'approved',
          flags: [{ rule: 'deletes-most', path: '/memories/a.md', line: null, message: 'm' }],
        }),
      },
    )
    expect(outcome.commit).toMatchObject({
      subject: 'expire',
      review: 'approved',
      flags: [{ rule: 'deletes-most' }],
    })
    expect(gitCli(dataDir, 'log', '-1', '--format=%s').trim()).toBe('expire')
    fsck(dataDir)
  })

  it('does not ask about a command the dry run refuses, nor about a view', async () => {
    let asked = 0
    const beforeRun = () => {
      asked++
      return { run: true } as const
    }
    const refused = await memory.execute({ command: 'delete', path: '/memories/x.md' }, claude, {
      beforeRun,
    })
    expect(refused).toMatchObject({ isError: true, errorCode: 'not-found', commit: null })
    const viewed = await memory.execute({ command: 'view', path: '/memories' }, claude, {
      beforeRun,
    })
    expect(viewed.isError).toBe(false)
    expect(asked).toBe(0)
  })
})

describe('execute without a dry run (needsDryRun says no)', () => {
  const flag = { rule: 'instructions', path: '/memories/a.md', line: 1, message: 'm' } as const

  it('runs at once, never asks beforeRun, and commits the facts afterRun finds', async () => {
    await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'A\n' }, claude)
    const made: MadeChange[] = []
    let asked = 0
    const outcome = await memory.execute(
      { command: 'str_replace', path: '/memories/a.md', old_str: 'A', new_str: 'B' },
      claude,
      {
        needsDryRun: () => false,
        beforeRun: () => {
          asked++
          return { run: false }
        },
        afterRun: (change) => {
          made.push(change)
          return { flags: [flag] }
        },
      },
    )
    expect(asked).toBe(0)
    expect(made).toEqual([
      {
        command: 'str_replace',
        path: '/memories/a.md',
        newPath: null,
        kind: 'file',
        before: 'A\n',
        after: 'B\n',
        notTextBytes: null,
        files: [],
        fileCount: 0,
      },
    ])
    expect(outcome).toMatchObject({ isError: false, commit: { flags: [flag] } })
    expect(outcome).not.toHaveProperty('made')
    expect(gitCli(dataDir, 'show', 'main:a.md')).toBe('B\n')
    expect(gitCli(dataDir, 'log', '-1', '--format=%B')).toContain('Flag: ')
    expect(commitCount(dataDir)).toBe(2)
    fsck(dataDir)
  })

  it('keeps the dry run and beforeRun when needsDryRun says yes', async () => {
    let described = 0
    const outcome = await memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'A\n' },
      claude,
      {
        needsDryRun: () => true,
        beforeRun: () => ({ run: false }),
        afterRun: () => {
          described++
          return {}
        },
      },
    )
    expect(outcome.held).toBe(true)
    expect(described).toBe(0)
    expect(commitCount(dataDir)).toBe(0)
  })

  it('commits a change whose facts could not be found, without them', async () => {
    await memory.close()
    const logger = createRecordingLogger()
    memory = await openVersionedMemory({ dataDir, watch: false, logger })
    const outcome = await memory.execute(
      { command: 'create', path: '/memories/a.md', file_text: 'A\n' },
      claude,
      {
        needsDryRun: () => false,
        afterRun: () => {
          throw new Error('the rules broke')
        },
      },
    )
    expect(outcome).toMatchObject({ isError: false, commit: { subject: 'create /memories/a.md' } })
    expect(outcome.commit?.flags ?? []).toEqual([])
    expect(await folderFiles(dataDir)).toEqual(new Map([['a.md', 'A\n']]))
    expect(commitCount(dataDir)).toBe(1)
    expect(logger.entries.map((entry) => entry.message)).toContain(
      'The facts of a change could not be found; it is committed without them',
    )
  })

  it('asks afterRun nothing about a refusal', async () => {
    let described = 0
    const refused = await memory.execute({ command: 'delete', path: '/memories/x.md' }, claude, {
      needsDryRun: () => false,
      afterRun: () => {
        described++
        return {}
      },
    })
    expect(refused).toMatchObject({ isError: true, errorCode: 'not-found', commit: null })
    expect(described).toBe(0)
    expect(commitCount(dataDir)).toBe(0)
  })
})
