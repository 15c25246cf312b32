import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { makeSandbox, text, type Sandbox } from './test-support'

// The memory folder removed while Cairn runs (a person starting afresh in the file manager):
// every command answered "an unexpected file system error" until a restart, because the root
// was made only once. Now a command that finds it gone makes it again and runs once more.

let box: Sandbox | null = null
afterEach(async () => {
  await box?.cleanup()
  box = null
})

describe('the memory folder removed while the tool runs', () => {
  it('is made again, empty, by the next command, which then works', async () => {
    box = await makeSandbox({ logger: createRecordingLogger() })
    expect(
      (await box.run({ command: 'create', path: '/memories/a.md', file_text: 'a\n' })).isError,
    ).toBe(false)
    fs.rmSync(box.root, { recursive: true })

    const listing = await box.run({ command: 'view', path: '/memories' })
    expect(listing.isError).toBe(false)
    expect(text(listing)).not.toContain('a.md')
    expect(fs.readdirSync(box.root)).toEqual([])

    fs.rmSync(box.root, { recursive: true })
    const created = await box.run({ command: 'create', path: '/memories/b.md', file_text: 'b\n' })
    expect(text(created)).toBe('File created successfully at: /memories/b.md')
    expect(fs.readFileSync(path.join(box.root, 'b.md'), 'utf8')).toBe('b\n')
  })

  it('still answers plainly when the folder cannot be made again', async () => {
    box = await makeSandbox({ logger: createRecordingLogger() })
    await box.run({ command: 'view', path: '/memories' })
    fs.rmSync(box.root, { recursive: true })
    // Something that is not a folder took its place.
    fs.writeFileSync(box.root, 'not a folder\n')
    const result = await box.run({ command: 'view', path: '/memories' })
    expect(result.isError).toBe(true)
    expect(text(result)).not.toContain(box.base)
    expect(fs.readFileSync(box.root, 'utf8')).toBe('not a folder\n')
  })
})
