import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory, type VersionedMemory } from '../../history'
import { gitCli, tempDataDir, userWrite } from '../../history/test-helpers'
import { createReviewService } from '../review-service'
import { lastPersonEdit, personEditedFlags, PERSON_EDIT_WINDOW_MS } from './person-edited'

const HOUR = 60 * 60 * 1000
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0)

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory
let clock = T0

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  clock = T0
  memory = await openVersionedMemory({ dataDir, watch: false, now: () => clock })
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})

const claudeCreate = (file: string, text: string) =>
  memory.execute(
    { command: 'create', path: file, file_text: text },
    { actor: 'claude', conversationId: 'c1', toolUseId: `toolu_${clock}` },
  )

const lastEdit = (file: string) => lastPersonEdit(memory, file, clock)

describe('the person-edited rule', () => {
  it('finds the person’s own edit of the last 24 hours, and only theirs', async () => {
    await userWrite(memory, '/memories/mine.md', 'by hand')
    clock += HOUR
    await claudeCreate('/memories/claude.md', 'by Claude')
    clock += 2 * HOUR
    expect(await lastEdit('/memories/mine.md')).toBe(T0)
    expect(await lastEdit('/memories/claude.md')).toBeNull()
    const [flag] = personEditedFlags('/memories/mine.md', T0, clock)
    expect(flag).toEqual({
      rule: 'person-edited',
      path: '/memories/mine.md',
      line: null,
      message: 'You edited this yourself 3 hours before this change',
    })
  })

  it('forgets edits older than a day, even behind Claude’s later ones', async () => {
    await userWrite(memory, '/memories/mine.md', 'by hand')
    clock += PERSON_EDIT_WINDOW_MS + HOUR
    await claudeCreate('/memories/mine.md', 'Claude took over')
    expect(await lastEdit('/memories/mine.md')).toBeNull()
    expect(personEditedFlags('/memories/mine.md', T0, clock)).toEqual([])
  })

  it('counts Claude’s change the person rewrote before approving it, not one they approved as is', async () => {
    await memory.execute(
      { command: 'create', path: '/memories/edited.md', file_text: 'their words' },
      { actor: 'claude', conversationId: 'c1', toolUseId: 'toolu_e' },
      { beforeRun: () => ({ run: true, review: 'edited' }) },
    )
    await memory.execute(
      { command: 'create', path: '/memories/approved.md', file_text: 'Claude’s words' },
      { actor: 'claude', conversationId: 'c1', toolUseId: 'toolu_a' },
      { beforeRun: () => ({ run: true, review: 'approved' }) },
    )
    clock += HOUR
    expect(await lastEdit('/memories/edited.md')).toBe(T0)
    expect(await lastEdit('/memories/approved.md')).toBeNull()
  })

  it('counts edits made in another editor, and files inside a folder', async () => {
    await claudeCreate('/memories/work/plan.md', 'v1')
    clock += HOUR
    await writeFile(path.join(dataDir, 'memories', 'work', 'plan.md'), 'edited in vim\n')
    // Cairn saves the outside edit as its own commit before Claude's next change there.
    await claudeCreate('/memories/work/plan.md', 'v2')
    expect(await lastEdit('/memories/work/plan.md')).toBe(clock)
    expect(await lastEdit('/memories/work')).toBe(clock)
    expect(await lastEdit('/memories/elsewhere.md')).toBeNull()
  })

  it('counts an edit the person made in another editor while Cairn was closed', async () => {
    await claudeCreate('/memories/notes.md', 'line one\nline two\n')
    await memory.close()
    clock += HOUR
    // Saved at the next start as an `outside` commit: the person's words.
    await writeFile(
      path.join(dataDir, 'memories', 'notes.md'),
      'line one\nline two\nMy own note, written by hand.\n',
    )
    memory = await openVersionedMemory({ dataDir, watch: false, now: () => clock })
    expect(gitCli(dataDir, 'log', '-1', '--format=%an %s')).toContain(
      'Changes made outside Cairn while it was closed',
    )
    clock += 5 * 60_000
    expect(await lastEdit('/memories/notes.md')).toBe(T0 + HOUR)

    const gate = createReviewService({ memory, mode: 'flagged', now: () => clock })
    try {
      const held = new Promise<ReadonlyArray<unknown>>((resolve) =>
        gate.onPending((changes) => changes.length > 0 && resolve(changes)),
      )
      const outcome = gate.execute(
        {
          command: 'str_replace',
          path: '/memories/notes.md',
          old_str: 'My own note, written by hand.',
          new_str: 'My own note, written by Claude.',
        },
        { actor: 'claude', conversationId: 'c1', toolUseId: 'toolu_rewrite' },
      )
      expect(await held).toMatchObject([
        {
          path: '/memories/notes.md',
          flags: [
            {
              rule: 'person-edited',
              message: 'You edited this yourself 5 minutes before this change',
            },
          ],
        },
      ])
      gate.close()
      expect(await outcome).toMatchObject({ isError: true })
      expect(gitCli(dataDir, 'show', 'main:notes.md')).toContain('written by hand')
    } finally {
      gate.close()
    }
  })

  it('names the author of an edit made with git, as History does, not "you"', async () => {
    await claudeCreate('/memories/notes.md', 'line one\n')
    await memory.close()
    clock += HOUR
    await writeFile(path.join(dataDir, 'memories', 'notes.md'), 'line one\nAnn was here.\n')
    const when = `@${Math.floor(clock / 1000)} +0000`
    gitCli(dataDir, '--work-tree', path.join(dataDir, 'memories'), 'add', 'notes.md')
    execFileSync(
      'git',
      [
        '--git-dir',
        path.join(dataDir, 'history.git'),
        '--work-tree',
        path.join(dataDir, 'memories'),
        '-c',
        'user.name=Ann Smith',
        '-c',
        'user.email=ann@example.com',
        'commit',
        '-q',
        '-m',
        'Ann adds a line',
      ],
      {
        env: {
          ...process.env,
          GIT_CONFIG_NOSYSTEM: '1',
          HOME: dataDir,
          GIT_AUTHOR_DATE: when,
          GIT_COMMITTER_DATE: when,
        },
      },
    )
    memory = await openVersionedMemory({ dataDir, watch: false, now: () => clock })
    expect(gitCli(dataDir, 'log', '-1', '--format=%an')).toBe('Ann Smith\n')
    clock += 5 * 60_000

    const gate = createReviewService({ memory, mode: 'flagged', now: () => clock })
    try {
      const held = new Promise<ReadonlyArray<unknown>>((resolve) =>
        gate.onPending((changes) => changes.length > 0 && resolve(changes)),
      )
      const outcome = gate.execute(
        { command: 'str_replace', path: '/memories/notes.md', old_str: 'Ann', new_str: 'Claude' },
        { actor: 'claude', conversationId: 'c1', toolUseId: 'toolu_ann' },
      )
      expect(await held).toMatchObject([
        {
          path: '/memories/notes.md',
          flags: [
            {
              rule: 'person-edited',
              message: 'Ann Smith edited this outside Cairn 5 minutes before this change',
            },
          ],
        },
      ])
      gate.close()
      expect(await outcome).toMatchObject({ isError: true })
    } finally {
      gate.close()
    }
  })

  it('escapes what would draw as nothing in that name', () => {
    const [flag] = personEditedFlags('/memories/a.md', T0, T0 + HOUR, '\u202EedualC')
    expect(flag?.message).toBe('\\u202EedualC edited this outside Cairn 1 hour before this change')
  })
})
