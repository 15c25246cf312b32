import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { PlannedChange } from '../memory'
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
