import { existsSync } from 'node:fs'
import { chmod, mkdir, readFile, readdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory, type VersionedMemory } from './index'
import { RESTORE_INTENT_FILE } from './restore-intent'
import { asAnotherAccount, CLAUDE, fsck, gitCli, tempDataDir } from './test-helpers'

// Restoring one file, bringing back a deleted one and undoing a change answered a folder or a
// file the system would not let Cairn change with "That did not work because permission was
// denied by the operating system", naming nothing, where restoring the whole folder named it
// (review13-story R4; closing-13, "Left"). Each now says which file or folder, and that nothing
// changed. The tests run as root, so Cairn is made to look like another account.

let dataDir: string
let cleanup: () => Promise<void>
let backToRoot: () => void = () => {}
const open = () => openVersionedMemory({ dataDir, watch: false })
const memories = (relative: string) => path.join(dataDir, 'memories', relative)

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(async () => {
  backToRoot()
  backToRoot = () => {}
  await cleanup()
})

async function run(memory: VersionedMemory, command: Record<string, string>): Promise<void> {
  const result = await memory.execute(command as never, CLAUDE)
  expect(result.isError, String(result.content)).toBe(false)
}

async function edit(memory: VersionedMemory, relative: string, from: string, to: string) {
  await run(memory, {
    command: 'str_replace',
    path: `/memories/${relative}`,
    old_str: from,
    new_str: to,
  })
}

/** The error `attempt` ends in, with Cairn looking like another account meanwhile. */
async function refusal(attempt: () => Promise<unknown>): Promise<Error> {
  backToRoot = asAnotherAccount(dataDir)
  let error: unknown = null
  try {
    await attempt()
  } catch (refused) {
    error = refused
  } finally {
    backToRoot()
    backToRoot = () => {}
  }
  expect(error).toBeInstanceOf(Error)
  return error as Error
}

/** What the memory folder holds, path by path (readable again: modes put back first). */
async function folderNow(): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  const walk = async (relative: string): Promise<void> => {
    for (const entry of await readdir(memories(relative), { withFileTypes: true })) {
      const inside = relative ? `${relative}/${entry.name}` : entry.name
      if (entry.isDirectory()) await walk(inside)
      else found.set(inside, await readFile(memories(inside), 'utf8'))
    }
  }
  await walk('')
  return found
}

function expectNamed(error: Error, what: string, refused: string): void {
  expect(error.message).toContain(`${what} did not happen, because ${refused}`)
  expect(error.message).toContain('permission was denied')
  expect(error.message).toContain('Nothing was changed.')
  expect(error.message).not.toContain(dataDir)
  expect(error.message).not.toMatch(/\n\s+at /)
}

describe('a restore the system refuses names what refused it', () => {
  it('restoring one file into a folder at 555, the file at 000', async () => {
    const memory = await open()
    let error: Error
    let before: Map<string, string>
    try {
      await run(memory, { command: 'create', path: '/memories/d/a.md', file_text: 'v1\n' })
      const first = memory.head()!
      await edit(memory, 'd/a.md', 'v1', 'v2')
      const head = memory.head()
      before = await folderNow()
      await chmod(memories('d/a.md'), 0o000)
      await chmod(memories('d'), 0o555)
      error = await refusal(() => memory.restoreFile('/memories/d/a.md', first))
      expect(memory.head()).toBe(head)
    } finally {
      await memory.close()
      await chmod(memories('d'), 0o755)
      await chmod(memories('d/a.md'), 0o644)
    }
    expectNamed(error, 'The restore', 'Cairn could not change /memories/d/a.md')
    expect(await folderNow()).toEqual(before)
    expect(gitCli(dataDir, 'show', 'main:d/a.md')).toBe('v2\n')
    fsck(dataDir)
  })

  it('restoring one file into a folder at 000', async () => {
    const memory = await open()
    let error: Error
    try {
      await run(memory, { command: 'create', path: '/memories/locked/a.md', file_text: 'v1\n' })
      const first = memory.head()!
      await edit(memory, 'locked/a.md', 'v1', 'v2')
      await chmod(memories('locked'), 0o000)
      error = await refusal(() => memory.restoreFile('/memories/locked/a.md', first))
    } finally {
      await memory.close()
      await chmod(memories('locked'), 0o755)
    }
    // Named already by the folder's own refusal (opening it, before anything was written).
    expect(error.message).toBe(
      'That did not work because the folder /memories/locked could not be opened: permission was denied by the operating system. Nothing was changed.',
    )
    expect(await readFile(memories('locked/a.md'), 'utf8')).toBe('v2\n')
  })

  it('bringing back a deleted file into a folder at 555', async () => {
    const memory = await open()
    let error: Error
    let before: Map<string, string>
    try {
      await run(memory, { command: 'create', path: '/memories/d/a.md', file_text: 'a\n' })
      await run(memory, { command: 'create', path: '/memories/d/keep.md', file_text: 'k\n' })
      await run(memory, { command: 'delete', path: '/memories/d/a.md' })
      const head = memory.head()
      before = await folderNow()
      await chmod(memories('d'), 0o555)
      error = await refusal(() => memory.restoreDeleted('/memories/d/a.md'))
      expect(memory.head()).toBe(head)
    } finally {
      await memory.close()
      await chmod(memories('d'), 0o755)
    }
    expectNamed(error, 'The restore', 'Cairn could not change /memories/d/a.md')
    expect(await folderNow()).toEqual(before)
    expect(existsSync(path.join(dataDir, 'history.git', RESTORE_INTENT_FILE))).toBe(false)
    fsck(dataDir)
  })

  it('bringing back a deleted folder inside a folder at 555, putting back what it wrote', async () => {
    const memory = await open()
    let error: Error
    let before: Map<string, string>
    try {
      await mkdir(memories('d'))
      await run(memory, { command: 'create', path: '/memories/d/keep.md', file_text: 'k\n' })
      await run(memory, { command: 'create', path: '/memories/d/e/one.md', file_text: '1\n' })
      await run(memory, { command: 'create', path: '/memories/d/e/two.md', file_text: '2\n' })
      await run(memory, { command: 'delete', path: '/memories/d/e' })
      before = await folderNow()
      await chmod(memories('d'), 0o555)
      error = await refusal(() => memory.restoreDeleted('/memories/d/e'))
    } finally {
      await memory.close()
      await chmod(memories('d'), 0o755)
    }
    expectNamed(error, 'The restore', 'Cairn could not change /memories/d/e/')
    expect(await folderNow()).toEqual(before)
    fsck(dataDir)
  })

  it('undoing a change to a file at 000 in a folder at 555', async () => {
    const memory = await open()
    let error: Error
    let before: Map<string, string>
    try {
      await run(memory, { command: 'create', path: '/memories/d/a.md', file_text: 'v1\n' })
      await edit(memory, 'd/a.md', 'v1', 'v2')
      const change = memory.head()!
      before = await folderNow()
      await chmod(memories('d/a.md'), 0o000)
      await chmod(memories('d'), 0o555)
      error = await refusal(() => memory.revert(change))
      expect(memory.head()).toBe(change)
    } finally {
      await memory.close()
      await chmod(memories('d'), 0o755)
      await chmod(memories('d/a.md'), 0o644)
    }
    expectNamed(error, 'The undo', 'Cairn could not change /memories/d/a.md')
    expect(await folderNow()).toEqual(before)
    expect(existsSync(path.join(dataDir, 'history.git', RESTORE_INTENT_FILE))).toBe(false)
    fsck(dataDir)
  })

  // R2 (review14-story): the refusal and the kept-aside note drew the path as it is, so a
  // right-to-left override in a name reversed the rest of the sentence on the History screen.
  it('escapes characters that draw as nothing in the refusal', async () => {
    const name = 'a\u200B\u202Etxt.md'
    await mkdir(memories('d'), { recursive: true })
    await writeFile(memories(`d/${name}`), 'v1\n')
    let memory = await open()
    const first = memory.head()!
    await memory.close()
    await writeFile(memories(`d/${name}`), 'v2\n')
    memory = await open()
    let error: Error
    try {
      await chmod(memories(`d/${name}`), 0o000)
      await chmod(memories('d'), 0o555)
      error = await refusal(() => memory.restoreFile(`/memories/d/${name}`, first))
    } finally {
      await memory.close()
      await chmod(memories('d'), 0o755)
      await chmod(memories(`d/${name}`), 0o644)
    }
    expectNamed(error, 'The restore', 'Cairn could not change /memories/d/a\\u200B\\u202Etxt.md')
    expect(error.message).not.toMatch(/[\u200B\u202E]/)
  })

  it('escapes characters that draw as nothing in the note of what was kept aside', async () => {
    const name = 'b\u202E.md'
    await mkdir(memories(''), { recursive: true })
    await writeFile(memories(name), 'v1\n')
    let memory = await open()
    const first = memory.head()!
    await memory.close()
    await writeFile(memories(name), 'v2\n')
    memory = await open()
    let message: string
    try {
      // Unreadable now: the restore keeps it aside and writes v1.
      await chmod(memories(name), 0o000)
      backToRoot = asAnotherAccount(dataDir)
      message = (await memory.restoreAll(first)).message
    } finally {
      backToRoot()
      backToRoot = () => {}
      await memory.close()
    }
    expect(message).toContain(
      '/memories/b\\u202E.md could not be read (permission denied), so it was kept as /memories/b\\u202E (unreadable).md;',
    )
    expect(message).not.toMatch(/\u202E/)
    expect(await readFile(memories(name), 'utf8')).toBe('v1\n')
  })
})
