import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { openVersionedMemory, type VersionedMemory } from './index'
import { gitCli, leftoverTempFiles, treeHash, CLAUDE } from './test-helpers'

// An independent acceptance check of issue #9 ("nothing escapes"): a memory folder made
// hostile by another program before Cairn opens it (links to a file and a folder outside,
// a fifo, a character device, a 3 GiB sparse file, names with control characters, NFC/NFD
// and case twins), then every command of Claude's on it, also on the hostile entries. Nothing
// outside the data folder changes, open never hangs or fails, no reply names a host path or
// holds a stack, HEAD holds only plain files, and `git fsck --strict` is clean.

let scratch: string
let dataDir: string
let outside: string
let memory: VersionedMemory | null = null
beforeEach(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'probe32b-hostile-'))
  dataDir = path.join(scratch, 'data')
  outside = path.join(scratch, 'outside')
  fs.mkdirSync(path.join(outside, 'folder'), { recursive: true })
  fs.writeFileSync(path.join(outside, 'secret.md'), 'outside the data folder\n')
  fs.writeFileSync(path.join(outside, 'folder', 'inside.md'), 'also outside\n')
})
afterEach(async () => {
  await memory?.close()
  memory = null
  fs.rmSync(scratch, { recursive: true, force: true, maxRetries: 10 })
})

function makeHostileFolder(): void {
  const root = path.join(dataDir, 'memories')
  fs.mkdirSync(path.join(root, 'dir'), { recursive: true })
  fs.writeFileSync(path.join(root, 'plain.md'), 'plain\n')
  fs.writeFileSync(path.join(root, 'dir', 'a.md'), 'a\n')
  fs.symlinkSync(path.join(outside, 'secret.md'), path.join(root, 'link-file.md'))
  fs.symlinkSync(path.join(outside, 'folder'), path.join(root, 'dir', 'link-folder'))
  fs.symlinkSync('../../outside/secret.md', path.join(root, 'relative-link.md'))
  execFileSync('mkfifo', [path.join(root, 'dir', 'fifo.md')])
  execFileSync('mknod', [path.join(root, 'device.md'), 'c', '1', '3'])
  const big = fs.openSync(path.join(root, 'huge.md'), 'w')
  fs.ftruncateSync(big, 3 * 1024 ** 3)
  fs.closeSync(big)
  fs.writeFileSync(path.join(root, 'line\nbreak.md'), 'newline in the name\n')
  fs.writeFileSync(path.join(root, 'bell\u0007.md'), 'a control character\n')
  fs.writeFileSync(path.join(root, 'caf\u00e9.md'), 'NFC\n')
  fs.writeFileSync(path.join(root, 'cafe\u0301.md'), 'NFD\n')
  fs.writeFileSync(path.join(root, 'Notes.md'), 'upper\n')
  fs.writeFileSync(path.join(root, 'notes.md'), 'lower\n')
}

const HOST = () => new RegExp(`${scratch}|/tmp/|\\n\\s+at |ENOENT|EISDIR|ELOOP`)

describe('a hostile memory folder, opened and then worked on (issue #9)', () => {
  it('touches nothing outside, answers every command in plain words, commits only plain files', async () => {
    makeHostileFolder()
    const outsideBefore = treeHash(outside)
    memory = await openVersionedMemory({ dataDir, watch: false, logger: createRecordingLogger() })
    if (memory.recovery) expect(memory.recovery.message).not.toMatch(HOST())
    const paths = [
      '/memories',
      '/memories/dir',
      '/memories/link-file.md',
      '/memories/relative-link.md',
      '/memories/dir/link-folder',
      '/memories/dir/link-folder/inside.md',
      '/memories/dir/fifo.md',
      '/memories/device.md',
      '/memories/huge.md',
      '/memories/line\nbreak.md',
      '/memories/bell\u0007.md',
      '/memories/caf\u00e9.md',
      '/memories/cafe\u0301.md',
      '/memories/Notes.md',
      '/memories/notes.md',
    ]
    const replies: string[] = []
    const run = async (input: Record<string, unknown>) => {
      const result = await memory!.execute(input, CLAUDE)
      const text = String(result.content)
      replies.push(text)
      expect(text, JSON.stringify(input)).not.toMatch(HOST())
      return result
    }
    for (const p of paths) {
      await run({ command: 'view', path: p })
      await run({ command: 'str_replace', path: p, old_str: 'a', new_str: 'b' })
      await run({ command: 'insert', path: p, insert_line: 0, insert_text: 'top' })
      await run({ command: 'create', path: p, file_text: 'over\n' })
      await run({ command: 'create', path: `${p}/child.md`, file_text: 'child\n' })
      await run({ command: 'rename', old_path: p, new_path: `${p}-moved` })
    }
    for (const p of paths) {
      await run({ command: 'delete', path: `${p}-moved` })
      await run({ command: 'delete', path: p })
    }
    // A command after all of that still works.
    const after = await run({ command: 'create', path: '/memories/after.md', file_text: 'x\n' })
    expect(after.isError, String(after.content)).toBe(false)
    await memory.close()
    memory = null

    expect(treeHash(outside), 'nothing outside the data folder changed').toBe(outsideBefore)
    // HEAD holds only plain files (mode 100644), named as a memory path may be.
    const entries = gitCli(dataDir, 'ls-tree', '-r', '-z', 'main').split('\0').filter(Boolean)
    for (const entry of entries) {
      expect(entry, 'only plain files in HEAD').toMatch(/^100644 blob [0-9a-f]{40}\t/)
      const name = entry.slice(entry.indexOf('\t') + 1)
      expect(
        [...name].some((c) => c.charCodeAt(0) < 0x20),
        `control character in ${name}`,
      ).toBe(false)
    }
    expect(leftoverTempFiles(dataDir)).toEqual([])
    const fsck = spawnSync(
      'git',
      ['--git-dir', path.join(dataDir, 'history.git'), 'fsck', '--strict', '--no-dangling'],
      { encoding: 'utf8', env: { ...process.env, HOME: dataDir } },
    )
    expect(fsck.stderr).toBe('')
    expect(fsck.status).toBe(0)
  }, 120_000)
})
