import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { hookDisk } from '../lib/disk-hooks'
import { claudeCommands, gitAsAnn, gitCli, memoryTestBed } from './test-helpers'

// rlive29: what the readers say after the outside history won (issue #9's follow-up).

let clock = 1_700_000_000_000
const bed = memoryTestBed({ memory: { now: () => (clock += 1000), watch: false } })

const run = claudeCommands(bed, 'conv-r', 'r')

const gitdir = () => path.join(bed.dataDir, 'history.git')
/** Runs git as Ann, with the memory folder as its work tree (as durability.md says). */
const asAnn = (...args: string[]) => gitAsAnn(bed.dataDir, ...args)

describe('readers after an outside rewrite of main', () => {
  it('no reader points at a commit that left main once the next change followed it', async () => {
    await run({ command: 'create', path: '/memories/plan.md', file_text: 'a\nb\n' })
    const second = await run({
      command: 'str_replace',
      path: '/memories/plan.md',
      old_str: 'b',
      new_str: 'zebra',
    })
    // Blame and search read (and cache) before the rewrite.
    const before = await bed.memory.blame('/memories/plan.md')
    expect(before[1]?.commit.oid).toBe(second.oid)
    await bed.memory.searchHistory({ text: 'zebra', matchCase: false })
    // Ann rewords Cairn's last commit outside (the folder does not change).
    gitCli(bed.dataDir, 'read-tree', 'main')
    asAnn('commit', '-q', '--amend', '-m', 'Ann rewords')
    const amended = gitCli(bed.dataDir, 'rev-parse', 'main').trim()
    await run({ command: 'create', path: '/memories/other.md', file_text: 'o\n' })
    const onMain = new Set(gitCli(bed.dataDir, 'rev-list', 'main').trim().split('\n'))
    expect(onMain.has(second.oid)).toBe(false)
    const blamed = await bed.memory.blame('/memories/plan.md')
    for (const line of blamed) expect(onMain.has(line.commit.oid)).toBe(true)
    expect(blamed[1]?.commit.oid).toBe(amended)
    const found = await bed.memory.searchHistory({ text: 'zebra', matchCase: false })
    expect(JSON.stringify(found)).not.toContain(second.oid)
    const log = await bed.memory.log({ offset: 0, limit: 20 })
    for (const entry of log.entries) expect(onMain.has(entry.oid)).toBe(true)
    const file = await bed.memory.fileHistory('/memories/plan.md')
    expect(JSON.stringify(file)).not.toContain(second.oid)
    const uses = await bed.memory.toolUseCommits('conv-r', ['toolu_r2'])
    expect(uses.get('toolu_r2')?.oid).not.toBe(second.oid)
  })
})

describe('a change whose commit met an outside commit', () => {
  it("is saved as Claude's, with its Tool-Use-Id, on top of the outside commit", async () => {
    await run({ command: 'create', path: '/memories/plan.md', file_text: 'a\n' })
    let ann: string | null = null
    // Ann commits (without touching the folder) at the first flush of Claude's next change.
    const undo = setDisk(
      hookDisk(nodeDisk, (call) => {
        if (ann === null && call.name === 'fsync') {
          const tree = gitCli(bed.dataDir, 'rev-parse', 'main^{tree}').trim()
          ann = execFileSync(
            'git',
            ['--git-dir', gitdir(), 'commit-tree', tree, '-p', 'main', '-m', 'Ann'],
            {
              encoding: 'utf8',
              env: {
                ...process.env,
                GIT_CONFIG_NOSYSTEM: '1',
                HOME: bed.dataDir,
                GIT_AUTHOR_NAME: 'Ann',
                GIT_AUTHOR_EMAIL: 'a@x',
                GIT_COMMITTER_NAME: 'Ann',
                GIT_COMMITTER_EMAIL: 'a@x',
              },
            },
          ).trim()
          gitCli(bed.dataDir, 'update-ref', 'refs/heads/main', ann)
        }
        return undefined
      }).disk,
    )
    let met
    try {
      met = await bed.memory.execute(
        { command: 'create', path: '/memories/met.md', file_text: 'm\n' },
        { actor: 'claude', conversationId: 'conv-r', toolUseId: 'toolu_met' },
      )
    } finally {
      undo()
    }
    expect(ann).not.toBeNull()
    expect(met.commit).toBeFalsy()
    await run({ command: 'create', path: '/memories/next.md', file_text: 'n\n' })
    expect(isAncestorOfMain(ann!)).toBe(true)
    // The commit that brought met.md into main is Claude's, found by its tool use.
    const brought = gitCli(
      bed.dataDir,
      'log',
      '--format=%H',
      '--diff-filter=A',
      'main',
      '--',
      'met.md',
    ).trim()
    expect(gitCli(bed.dataDir, 'log', '-1', '--format=%B', brought)).toContain('toolu_met')
    const uses = await bed.memory.toolUseCommits('conv-r', ['toolu_met'])
    expect(uses.get('toolu_met')?.oid).toBe(brought)
  })
})

function isAncestorOfMain(oid: string): boolean {
  try {
    gitCli(bed.dataDir, 'merge-base', '--is-ancestor', oid, 'main')
    return true
  } catch {
    return false
  }
}
