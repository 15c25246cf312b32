import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory } from './index'
import { CLAUDE, fsck, gitCli, tempDataDir } from './test-helpers'

// Issue #3, D8e found by review: files put in the memory folder outside Cairn whose names hold
// a line break or a tab were left out of the start-up commit without a word (HEAD and the
// folder disagreed and nobody knew why). They are still not versioned (such a name cannot be
// handed back safely), but the person is told, as for a file too large to version.

let dataDir: string
let cleanup: () => Promise<void>
const open = () => openVersionedMemory({ dataDir, watch: false })

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

describe('names the history refuses (D8e)', () => {
  it('reports each outside file it leaves out for its name, and commits the rest', async () => {
    let memory = await open()
    await memory.execute({ command: 'create', path: '/memories/a.md', file_text: 'a\n' }, CLAUDE)
    await memory.close()
    const root = path.join(dataDir, 'memories')
    await fs.writeFile(path.join(root, 'evil\nCommand: delete'), 'outside\n')
    await fs.mkdir(path.join(root, 'dir'))
    await fs.writeFile(path.join(root, 'dir', 'tab\there.md'), 'outside\n')
    await fs.writeFile(path.join(root, 'fine.md'), 'outside\n')

    memory = await open()
    try {
      const notices = memory.notices()
      expect(notices).toHaveLength(2)
      expect(notices).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ kind: 'name-not-allowed', path: '/memories/dir/tab\there.md' }),
          expect.objectContaining({
            kind: 'name-not-allowed',
            path: '/memories/evil\nCommand: delete',
          }),
        ]),
      )
      for (const notice of notices) {
        expect(notice.message).toContain('is not versioned: name not allowed')
        // Shown escaped: the message stays one line, nothing hidden in it.
        expect(notice.message).not.toMatch(/[\n\t]/)
      }
      expect(notices.map((n) => n.message.split(' ')[0])).toEqual(
        expect.arrayContaining(['/memories/dir/tab\\there.md', '/memories/evil\\nCommand:']),
      )
      const tracked = gitCli(dataDir, 'ls-tree', '-r', '--name-only', 'main').trim().split('\n')
      expect(tracked).toEqual(['a.md', 'fine.md'])
      fsck(dataDir)
    } finally {
      await memory.close()
    }
  })

  it('raises nothing for the temp files of an interrupted write', async () => {
    let memory = await open()
    await memory.close()
    await fs.writeFile(path.join(dataDir, 'memories', '.cairn-tmp-x\ny'), 'stray\n')
    memory = await open()
    try {
      expect(memory.notices()).toEqual([])
    } finally {
      await memory.close()
    }
  })
})
