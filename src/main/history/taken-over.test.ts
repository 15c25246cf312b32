import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CairnError } from '../lib/errors'
import { LOCK_FILE } from '../lib/instance-lock'
import { deleteFile, renameFile, writeFile } from '../memory-browser'
import { openVersionedMemory, type ExecuteOutcome, type VersionedMemory } from './index'
import { CLAUDE, gitCli, tempDataDir } from './test-helpers'

// An instance whose data folder another Cairn took over changes nothing: every command that
// would change the memory folder is refused with the `locked` error's words before it touches
// a file, and is never reported as a success whose commit is pending.

let dataDir: string
let cleanup: () => Promise<void>
const opened: VersionedMemory[] = []
// The instance that lost its lock, the commit of `a.md`'s first version, and a later one.
let first: VersionedMemory
let firstVersion: string
let deletedIn: string

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  first = await open()
  const made = await first.execute(
    { command: 'create', path: '/memories/a.md', file_text: 'alpha\n' },
    CLAUDE,
  )
  firstVersion = made.commit!.oid
  await first.execute(
    { command: 'str_replace', path: '/memories/a.md', old_str: 'alpha', new_str: 'beta' },
    CLAUDE,
  )
  await first.execute({ command: 'create', path: '/memories/dir/b.md', file_text: 'b\n' }, CLAUDE)
  await first.execute({ command: 'create', path: '/memories/gone.md', file_text: 'g\n' }, CLAUDE)
  deletedIn = (await first.execute({ command: 'delete', path: '/memories/gone.md' }, CLAUDE))
    .commit!.oid
  // Someone removed the lock file by hand and a second Cairn opened the same data folder.
  fs.rmSync(path.join(dataDir, LOCK_FILE))
  await open()
})
afterEach(async () => {
  for (const memory of opened.splice(0)) await memory.close()
  await cleanup()
})

async function open(): Promise<VersionedMemory> {
  const memory = await openVersionedMemory({ dataDir, watch: false })
  opened.push(memory)
  return memory
}

/** Every entry of the memory folder (hidden ones too), folders by name, files by their bytes. */
function folderBytes(): Map<string, string> {
  const found = new Map<string, string>()
  const walk = (dir: string, prefix: string) => {
    for (const dirent of fs.readdirSync(dir, { withFileTypes: true })) {
      const relative = `${prefix}${dirent.name}`
      if (dirent.isDirectory()) {
        found.set(`${relative}/`, '')
        walk(path.join(dir, dirent.name), `${relative}/`)
      } else found.set(relative, fs.readFileSync(path.join(dir, dirent.name)).toString('base64'))
    }
  }
  walk(path.join(dataDir, 'memories'), '')
  return found
}

/** Runs `change` and expects it refused with the locked error, the folder and `main` unchanged. */
async function changesNothing(change: () => Promise<unknown>): Promise<unknown> {
  const before = folderBytes()
  const head = gitCli(dataDir, 'rev-parse', 'main').trim()
  const result = await change().catch((error: unknown) => error)
  expect(folderBytes()).toEqual(before)
  expect(gitCli(dataDir, 'rev-parse', 'main').trim()).toBe(head)
  return result
}

function refusedToClaude(outcome: unknown): void {
  const result = outcome as ExecuteOutcome
  expect(result.isError).toBe(true)
  expect(result.errorCode).toBe('locked')
  expect(result.commitPending).toBeUndefined()
  expect(result.commit).toBeNull()
  expect(String(result.content)).toBe(
    'Error: Another Cairn took over this data folder, so this one stopped saving changes. Close one of them.',
  )
}

function refusedToPerson(error: unknown): void {
  expect(error).toBeInstanceOf(CairnError)
  expect(error).toMatchObject({ code: 'locked' })
  const message = (error as CairnError).message
  expect(message).toContain('Another Cairn took over this data folder')
  expect(message).not.toContain(dataDir)
  expect(message).not.toMatch(/\n\s+at /)
}

describe('after another Cairn took the data folder over', () => {
  it.each([
    ['a file delete', { command: 'delete', path: '/memories/a.md' }],
    ['a folder delete', { command: 'delete', path: '/memories/dir' }],
    ['a rename', { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/c.md' }],
    [
      'a folder rename',
      { command: 'rename', old_path: '/memories/dir', new_path: '/memories/moved' },
    ],
    ['a create of a new file', { command: 'create', path: '/memories/new.md', file_text: 'n' }],
    ['a create over a file', { command: 'create', path: '/memories/a.md', file_text: 'n' }],
    [
      'a create in new folders',
      { command: 'create', path: '/memories/x/y/new.md', file_text: 'n' },
    ],
    [
      'a str_replace',
      { command: 'str_replace', path: '/memories/a.md', old_str: 'beta', new_str: 'gamma' },
    ],
    ['an insert', { command: 'insert', path: '/memories/a.md', insert_line: 0, insert_text: 'i' }],
  ])("refuses %s of Claude's with the locked error, changing nothing", async (_, input) => {
    refusedToClaude(await changesNothing(() => first.execute(input, CLAUDE)))
    // And again: the failure owes no commit that would say otherwise later.
    refusedToClaude(await changesNothing(() => first.execute(input, CLAUDE)))
  })

  it("refuses the person's edits from the window with the locked error, changing nothing", async () => {
    refusedToPerson(await changesNothing(() => writeFile(first.execute, '/memories/a.md', 'x')))
    refusedToPerson(await changesNothing(() => writeFile(first.execute, '/memories/p.md', 'x')))
    refusedToPerson(await changesNothing(() => deleteFile(first.execute, '/memories/a.md')))
    refusedToPerson(
      await changesNothing(() => renameFile(first.execute, '/memories/a.md', '/memories/q.md')),
    )
  })

  it('refuses restores, reverts and secret removal with the locked error, changing nothing', async () => {
    refusedToPerson(await changesNothing(() => first.restoreFile('/memories/a.md', firstVersion)))
    refusedToPerson(
      await changesNothing(() => first.restoreDeleted('/memories/gone.md', deletedIn)),
    )
    refusedToPerson(await changesNothing(() => first.revert(deletedIn)))
    refusedToPerson(await changesNothing(() => first.restoreAll(firstVersion)))
    refusedToPerson(await changesNothing(() => first.removeSecrets('/memories/a.md')))
  })
})

describe('closing after another Cairn took the data folder over', () => {
  // Found at stop 27's review: the refused command left this instance owing a re-read, and its
  // close wrote the note of owed commits into the history the other Cairn now holds. The
  // other closed cleanly all the same, and an edit made outside Cairn while it was closed
  // was then saved as a recovery ("an interrupted write") and told to the person as one.
  it('leaves no note of owed commits in the other’s history, nor its lock', async () => {
    const lock = fs.readFileSync(path.join(dataDir, LOCK_FILE), 'utf8')
    refusedToClaude(
      await first.execute({ command: 'create', path: '/memories/n.md', file_text: 'n\n' }, CLAUDE),
    )
    await first.close()
    expect(fs.existsSync(path.join(dataDir, 'history.git', 'cairn-owed'))).toBe(false)
    expect(fs.readFileSync(path.join(dataDir, LOCK_FILE), 'utf8')).toBe(lock)

    // The other Cairn closes cleanly; an edit made while none runs is an outside change.
    for (const memory of opened.splice(0)) await memory.close()
    fs.writeFileSync(path.join(dataDir, 'memories', 'c.md'), 'c\n')
    const next = await open()
    expect(next.recovery?.kind).not.toBe('uncommitted-changes')
    expect(gitCli(dataDir, 'log', '-1', '--format=%s').trim()).toBe(
      'Changes made outside Cairn while it was closed',
    )
    gitCli(dataDir, 'fsck', '--strict')
  })
})
