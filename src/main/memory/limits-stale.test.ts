import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// hunt13-tool D3: the limits were checked against a usage total counted before changes made
// outside the tool, so a write right after them could break maxFiles / maxTotalBytes.
let box: Sandbox | undefined
afterEach(async () => {
  await box?.cleanup()
  box = undefined
})

describe('limits right after outside changes (hunt13-tool D3)', () => {
  it('refuses a new file past maxFiles when the files were added after the first command', async () => {
    box = await makeSandbox({ limits: { maxFiles: 3, maxTotalBytes: 100 } })
    // The first command counts the (empty) folder.
    expect((await box.run({ command: 'view', path: '/memories' })).isError).toBe(false)
    for (let i = 0; i < 3; i++) await box.write(`o${i}.md`, `outside ${i}\n`)
    const before = await snapshot(box.base)
    const created = await box.run({ command: 'create', path: '/memories/new.md', file_text: 'n' })
    expect(created.isError, text(created)).toBe(true)
    expect(text(created)).toContain('memory already holds 3 files, the limit is 3')
    expect(await snapshot(box.base)).toBe(before)
  })

  it('refuses an edit past maxTotalBytes when a file grew outside after the count', async () => {
    box = await makeSandbox({ limits: { maxFiles: 10, maxTotalBytes: 100 } })
    expect(
      (await box.run({ command: 'create', path: '/memories/a.md', file_text: 'x' })).isError,
    ).toBe(false)
    await box.write('big.md', 'b'.repeat(90))
    const before = await snapshot(box.base)
    const edited = await box.run({
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'x',
      new_str: 'x'.repeat(20),
    })
    expect(edited.isError, text(edited)).toBe(true)
    expect(text(edited)).toContain('memory would hold 110 bytes in total, over the limit of 100')
    expect(await snapshot(box.base)).toBe(before)
    // Room made outside is seen too: after the big file goes, the same edit fits.
    await fs.rm(path.join(box.root, 'big.md'))
    const again = await box.run({
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'x',
      new_str: 'x'.repeat(20),
    })
    expect(again.isError, text(again)).toBe(false)
  })
})
