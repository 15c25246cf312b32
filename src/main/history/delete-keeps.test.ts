import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk } from '../lib/disk-hooks'
import { openVersionedMemory, type VersionedMemory } from './index'
import { fsck, gitCli, tempDataDir, userDelete, CLAUDE } from './test-helpers'

// Issue #9, "nothing lost": a folder `delete` removed files history never held (a name it
// does not track, a user's .git, a file too large to version) with the folder, and no
// restore could bring them back. They are now kept aside, the way restores keep such files.

let dataDir: string
let root: string
let cleanup: () => Promise<void>
let memory: VersionedMemory

const BIG = 33 * 1024 * 1024

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  root = path.join(dataDir, 'memories')
  memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  await memory.execute(
    { command: 'create', path: '/memories/project/notes.md', file_text: 'notes\n' },
    CLAUDE,
  )
  await memory.execute(
    { command: 'create', path: '/memories/project/deep/plan.md', file_text: 'plan\n' },
    CLAUDE,
  )
  await memory.close()
  // Put there by the person, outside Cairn: none of it can be in the history.
  const project = path.join(root, 'project')
  fs.writeFileSync(path.join(project, 'export\\2026.md'), 'named with a backslash\n')
  fs.mkdirSync(path.join(project, '.git', 'objects'), { recursive: true })
  fs.writeFileSync(path.join(project, '.git', 'HEAD'), 'ref: refs/heads/main\n')
  const big = fs.openSync(path.join(project, 'deep', 'recording.log'), 'w')
  fs.ftruncateSync(big, BIG)
  fs.writeSync(big, 'end', BIG - 3)
  fs.closeSync(big)
  fs.symlinkSync('/etc/hostname', path.join(project, 'link'))
  memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})

function listTree(dir: string, at = ''): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((d) =>
      d.isDirectory() ? listTree(path.join(dir, d.name), `${at}${d.name}/`) : [`${at}${d.name}`],
    )
    .sort()
}

describe('deleting a folder that holds files history never held', () => {
  it("keeps them when the folder's name is too long to take the label whole", async () => {
    // 80 characters of 3 bytes: with " (not in history)" the name would pass 255 bytes.
    const long = '記'.repeat(80)
    await memory.execute(
      { command: 'create', path: `/memories/${long}/a.md`, file_text: 'a\n' },
      CLAUDE,
    )
    fs.mkdirSync(path.join(root, long, '.git'))
    fs.writeFileSync(path.join(root, long, '.git', 'HEAD'), 'ref: refs/heads/main\n')
    const result = await memory.execute({ command: 'delete', path: `/memories/${long}` }, CLAUDE)
    expect(result.isError).toBe(false)
    const kept = `${'記'.repeat(79)} (not in history)`
    expect(result.content).toContain(kept)
    expect(fs.existsSync(path.join(root, long))).toBe(false)
    expect(fs.readFileSync(path.join(root, kept, '.git', 'HEAD'), 'utf8')).toBe(
      'ref: refs/heads/main\n',
    )
  })

  it("gives the kept folder a name Claude can use when the folder's name is long", async () => {
    // 120 characters: with " (not in history)" the name would pass the 128 the path rules allow.
    const long = 'n'.repeat(120)
    await memory.execute(
      { command: 'create', path: `/memories/${long}/a.md`, file_text: 'a\n' },
      CLAUDE,
    )
    fs.mkdirSync(path.join(root, long, '.git'))
    fs.writeFileSync(path.join(root, long, '.git', 'HEAD'), 'ref: refs/heads/main\n')
    const result = await memory.execute({ command: 'delete', path: `/memories/${long}` }, CLAUDE)
    const kept = `${'n'.repeat(111)} (not in history)`
    expect(kept.length).toBe(128)
    expect(result.content).toContain(`so they were kept in /memories/${kept}.`)
    expect(fs.readFileSync(path.join(root, kept, '.git', 'HEAD'), 'utf8')).toBe(
      'ref: refs/heads/main\n',
    )
    const view = await memory.execute({ command: 'view', path: `/memories/${kept}` }, CLAUDE)
    expect(view.isError).toBe(false)
    const listing = await memory.execute({ command: 'view', path: '/memories' }, CLAUDE)
    expect(String(listing.content)).toContain(`/memories/${kept}/`)
  })

  it('keeps them, in their places, in "<folder> (not in history)", and says so', async () => {
    const result = await memory.execute({ command: 'delete', path: '/memories/project' }, CLAUDE)
    expect(result.isError).toBe(false)
    expect(result.content).toBe(
      'Successfully deleted /memories/project. It held files that are not in the history, which a restore could not bring back, so they were kept in /memories/project (not in history).',
    )
    expect(String(result.content)).not.toContain(dataDir)
    expect(fs.existsSync(path.join(root, 'project'))).toBe(false)
    const kept = path.join(root, 'project (not in history)')
    expect(listTree(kept)).toEqual(['.git/HEAD', 'deep/recording.log', 'export\\2026.md', 'link'])
    expect(fs.readdirSync(path.join(kept, '.git', 'objects'))).toEqual([])
    expect(fs.readFileSync(path.join(kept, 'export\\2026.md'), 'utf8')).toBe(
      'named with a backslash\n',
    )
    expect(fs.statSync(path.join(kept, 'deep', 'recording.log')).size).toBe(BIG)
    expect(fs.readlinkSync(path.join(kept, 'link'))).toBe('/etc/hostname')

    // The commit removed what history held, and only that; the kept folder adds nothing.
    expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim()).toBe('')
    expect(gitCli(dataDir, 'log', '-1', '--format=%s', 'main')).toMatch(/delete/i)
    fsck(dataDir)
    // What history held comes back from it.
    await memory.restoreDeleted('/memories/project')
    expect(listTree(path.join(root, 'project'))).toEqual(['deep/plan.md', 'notes.md'])
  })

  it('does the same for a delete the person makes, and numbers a second kept folder', async () => {
    fs.mkdirSync(path.join(root, 'project (not in history)'))
    await userDelete(memory, '/memories/project')
    expect(fs.existsSync(path.join(root, 'project (not in history 2)', '.git', 'HEAD'))).toBe(true)
    expect(fs.readdirSync(path.join(root, 'project (not in history)'))).toEqual([])
  })

  it('removes a folder whole when history holds everything in it', async () => {
    await memory.execute(
      { command: 'create', path: '/memories/plain/a.md', file_text: 'a\n' },
      CLAUDE,
    )
    const result = await memory.execute({ command: 'delete', path: '/memories/plain' }, CLAUDE)
    expect(result.content).toBe('Successfully deleted /memories/plain')
    expect(fs.readdirSync(root).sort()).toEqual(['project'])
  })

  it('refuses to delete a folder holding only such files, instead of keeping it again', async () => {
    await memory.execute({ command: 'delete', path: '/memories/project' }, CLAUDE)
    const kept = path.join(root, 'project (not in history)')
    const before = listTree(kept)
    const commits = gitCli(dataDir, 'rev-list', '--count', 'main').trim()
    // Before, each delete moved it to "project (not in history) (not in history)", and so on.
    for (let i = 0; i < 2; i++) {
      const result = await memory.execute(
        { command: 'delete', path: '/memories/project (not in history)' },
        CLAUDE,
      )
      expect(result.isError).toBe(true)
      expect(result.content).toBe(
        'Error: /memories/project (not in history) holds only files that are not in the history, which a restore could not bring back; Cairn does not delete them. Nothing was changed.',
      )
    }
    expect(fs.readdirSync(root)).toEqual(['project (not in history)'])
    expect(listTree(kept)).toEqual(before)
    expect(gitCli(dataDir, 'rev-list', '--count', 'main').trim()).toBe(commits)
  })

  it('keeps them in the folder itself when the disk is too full to make the kept folder', async () => {
    // Every mkdir fails as on a full disk; renames and unlinks need no new space.
    let mkdirs = 0
    const full = hookDisk(nodeDisk, (call) => {
      if (call.name === 'mkdirSync' && String(call.args[0]).includes('(not in history)')) {
        mkdirs++
        return errnoError(call, 'ENOSPC')
      }
      return undefined
    })
    const restore = setDisk(full.disk)
    let result
    try {
      result = await memory.execute({ command: 'delete', path: '/memories/project' }, CLAUDE)
    } finally {
      restore()
    }
    expect(mkdirs).toBe(1)
    expect(result.isError).toBe(false)
    expect(result.content).toBe(
      'Successfully deleted /memories/project. It held files that are not in the history, which a restore could not bring back, so they were kept in /memories/project (not in history).',
    )
    expect(fs.readdirSync(root)).toEqual(['project (not in history)'])
    const kept = path.join(root, 'project (not in history)')
    expect(listTree(kept)).toEqual(['.git/HEAD', 'deep/recording.log', 'export\\2026.md', 'link'])
    expect(fs.statSync(path.join(kept, 'deep', 'recording.log')).size).toBe(BIG)
    expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim()).toBe('')
    fsck(dataDir)
  })

  it('changes nothing when keeping them aside fails', async () => {
    const before = listTree(path.join(root, 'project'))
    // Its entries are moved out one by one before the folder goes: the second move fails,
    // and the first is moved back.
    let renames = 0
    const failing = hookDisk(nodeDisk, (call) => {
      if (call.name === 'renameSync' && ++renames === 2) return errnoError(call, 'EIO')
      return undefined
    })
    const restore = setDisk(failing.disk)
    let result
    try {
      result = await memory.execute({ command: 'delete', path: '/memories/project' }, CLAUDE)
    } finally {
      restore()
    }
    expect(renames).toBeGreaterThanOrEqual(3)
    expect(result.isError).toBe(true)
    expect(String(result.content)).not.toContain(dataDir)
    expect(listTree(path.join(root, 'project'))).toEqual(before)
    expect(fs.readdirSync(root)).toEqual(['project'])
    expect(gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim().split('\n')).toEqual([
      'project/deep/plan.md',
      'project/notes.md',
    ])
  })
})
