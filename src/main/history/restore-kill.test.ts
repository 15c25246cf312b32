import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory } from './index'
import { RESTORE_INTENT_FILE } from './restore-intent'
import { commitCount, fsck, gitCli, tempDataDir, CLAUDE } from './test-helpers'

// Issue #4 ("restore the whole memory folder to any commit, in one commit") and #9's crash
// promise: a SIGKILL half-way through restoreAll left a folder neither before nor after it,
// which the next open saved as "changes made outside Cairn" (the restore's commit lost).

const FILES = 30

let dataDir: string
let cleanup: () => Promise<void>

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

/** History: FILES files at "old", then all at "new". Returns the "old" commit. */
async function seed(): Promise<string> {
  const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  for (let i = 0; i < FILES; i++) {
    await memory.execute(
      { command: 'create', path: `/memories/f${i}.md`, file_text: `old ${i}\n` },
      CLAUDE,
    )
  }
  const old = memory.head()!
  for (let i = 0; i < FILES; i++) {
    await memory.execute(
      { command: 'create', path: `/memories/f${i}.md`, file_text: `new ${i}\n` },
      CLAUDE,
    )
  }
  await memory.close()
  return old
}

/**
 * A process that restores all memory to `target` and kills itself (SIGKILL) just before the
 * `killAt`-th file of the restore is renamed into place.
 */
async function restoreAndDie(
  target: string,
  killAt: number,
  operation: 'restoreAll' | 'revert' = 'restoreAll',
): Promise<void> {
  const script = `
    const { openVersionedMemory } = await import(${JSON.stringify(path.resolve('src/main/history/index.ts'))})
    const { nodeDisk, setDisk } = await import(${JSON.stringify(path.resolve('src/main/lib/disk.ts'))})
    const { hookDisk } = await import(${JSON.stringify(path.resolve('src/main/lib/disk-hooks.ts'))})
    const memory = await openVersionedMemory({ dataDir: ${JSON.stringify(dataDir)}, watch: false, maintenance: false })
    let renames = 0
    setDisk(hookDisk(nodeDisk, (call) => {
      if (call.name !== 'renameSync') return
      const [from, to] = call.args.map(String)
      if (!from.includes('.cairn-tmp-') || to.endsWith(${JSON.stringify(RESTORE_INTENT_FILE)})) return
      if (++renames === ${killAt}) process.kill(process.pid, 'SIGKILL')
    }).disk)
    await memory[${JSON.stringify(operation)}](${JSON.stringify(target)})
    process.stdout.write('finished\\n')
  `
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, sig) => resolve(sig)),
  )
  expect(signal, stderr).toBe('SIGKILL')
  expect(out).toBe('')
}

function folderContents(): string[] {
  return Array.from({ length: FILES }, (_, i) =>
    fs.readFileSync(path.join(dataDir, 'memories', `f${i}.md`), 'utf8'),
  )
}

describe('a restore of the whole folder killed half-way', () => {
  it.each([1, FILES / 2, FILES])(
    'is finished at the next open and committed as the restore (killed before file %i)',
    async (killAt) => {
      const old = await seed()
      const before = commitCount(dataDir)
      const head = gitCli(dataDir, 'rev-parse', 'main').trim()
      await restoreAndDie(old, killAt)
      // Killed half-way: the folder is a mix (the first files old, the rest new).
      const mixed = folderContents()
      expect(mixed.filter((text) => text.startsWith('old'))).toHaveLength(killAt - 1)

      const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
      try {
        expect(folderContents()).toEqual(Array.from({ length: FILES }, (_, i) => `old ${i}\n`))
        // One commit: the restore's own, by the person, naming where it went back to.
        expect(commitCount(dataDir)).toBe(before + 1)
        expect(gitCli(dataDir, 'rev-parse', 'main~1').trim()).toBe(head)
        const message = gitCli(dataDir, 'log', '-1', '--format=%an%n%B', 'main')
        expect(message).toContain('restore all memories to')
        expect(message).toContain(`Restored-From: ${old}`)
        const [entry] = (await memory.log({ offset: 0, limit: 1 })).entries
        expect(entry).toMatchObject({ actor: 'user', command: 'restore-all', restoredFrom: old })
        expect(gitCli(dataDir, 'diff', '--stat', old, 'main').trim()).toBe('')
        expect(fs.existsSync(path.join(dataDir, 'history.git', RESTORE_INTENT_FILE))).toBe(false)
        fsck(dataDir)
      } finally {
        await memory.close()
      }
    },
  )

  it('is left as the folder holds it when a file it touched was edited meanwhile', async () => {
    const old = await seed()
    await restoreAndDie(old, FILES / 2)
    // Edited by hand while Cairn was not running: neither side of the restore.
    fs.writeFileSync(path.join(dataDir, 'memories', 'f20.md'), 'by hand\n')
    const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    try {
      expect(fs.readFileSync(path.join(dataDir, 'memories', 'f20.md'), 'utf8')).toBe('by hand\n')
      expect(gitCli(dataDir, 'show', 'main:f20.md')).toBe('by hand\n')
      expect(fs.existsSync(path.join(dataDir, 'history.git', RESTORE_INTENT_FILE))).toBe(false)
      fsck(dataDir)
    } finally {
      await memory.close()
    }
  })

  it('finishes a revert of many files the same way', async () => {
    const old = await seed()
    let memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    const restored = await memory.restoreAll(old)
    await memory.close()
    const restore = restored.commit!.oid
    const before = commitCount(dataDir)
    // Undoing the restore brings every file back to "new"; killed half-way.
    await restoreAndDie(restore, FILES / 2, 'revert')
    expect(folderContents().filter((text) => text.startsWith('new'))).toHaveLength(FILES / 2 - 1)
    memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    try {
      expect(folderContents()).toEqual(Array.from({ length: FILES }, (_, i) => `new ${i}\n`))
      expect(commitCount(dataDir)).toBe(before + 1)
      const [entry] = (await memory.log({ offset: 0, limit: 1 })).entries
      expect(entry).toMatchObject({ actor: 'user', command: 'revert', restoredFrom: restore })
      fsck(dataDir)
    } finally {
      await memory.close()
    }
  })

  it('leaves no intent behind after a restore that finished', async () => {
    const old = await seed()
    const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
    try {
      await memory.restoreAll(old)
      expect(fs.existsSync(path.join(dataDir, 'history.git', RESTORE_INTENT_FILE))).toBe(false)
    } finally {
      await memory.close()
    }
  })
})
