import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { MemoryNotice } from '../../shared/types'
import { openVersionedMemory, type VersionedMemory } from './index'
import { tempDataDir, CLAUDE } from './test-helpers'

// Defect 7 of issue #9 (second half): secrets edited in from outside Cairn were committed
// unscanned, with no word to the person.

const GITHUB_TOKEN = ['ghp', 'wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx'].join('_')

let dataDir: string
let cleanup: () => Promise<void>
let memory: VersionedMemory
let seen: MemoryNotice[]

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  memory = await openVersionedMemory({ dataDir, watch: false })
  seen = []
  memory.onNotice((notice) => seen.push(notice))
})
afterEach(async () => {
  await memory.close()
  await cleanup()
})

const file = (relative: string) => path.join(dataDir, 'memories', relative)

describe('secrets edited in from outside (defect 7)', () => {
  it('warns about a secret in an outside edit and removes it from the file on request', async () => {
    await memory.execute(
      { command: 'create', path: '/memories/notes.md', file_text: 'notes\n' },
      CLAUDE,
    )
    await writeFile(file('notes.md'), `notes\ntoken: ${GITHUB_TOKEN}\nmore\n`)
    // The next change there first commits the outside edit, scanned.
    await memory.execute(
      {
        command: 'str_replace',
        path: '/memories/notes.md',
        old_str: 'more',
        new_str: 'more notes',
      },
      CLAUDE,
    )
    expect(seen).toEqual([expect.objectContaining({ kind: 'secret', path: '/memories/notes.md' })])
    expect(seen[0]!.message).toContain('GitHub Token')
    expect(seen[0]!.message).not.toContain(GITHUB_TOKEN)
    expect(memory.notices()).toHaveLength(1)

    const removed = await memory.removeSecrets('/memories/notes.md')
    expect(removed.commit).toMatchObject({ actor: 'user' })
    const now = await readFile(file('notes.md'), 'utf8')
    expect(now).not.toContain(GITHUB_TOKEN)
    expect(now).toContain('notes\ntoken: ')
    expect(now).toContain('more notes')
    expect(memory.notices()).toEqual([])
  })

  it('warns about secrets found in the recovery commit at open', async () => {
    await memory.close()
    await writeFile(file('keys.md'), `the token ${GITHUB_TOKEN}\n`)
    memory = await openVersionedMemory({ dataDir, watch: false })
    expect(memory.notices()).toEqual([
      expect.objectContaining({ kind: 'secret', path: '/memories/keys.md' }),
    ])
  })
})
