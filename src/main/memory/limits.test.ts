import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'
import { measure, UsageCache } from './usage'

let box: Sandbox | undefined
afterEach(async () => {
  await box?.cleanup()
  box = undefined
})

describe('limits', () => {
  it('refuses a file over the per-file limit and writes nothing', async () => {
    box = await makeSandbox({ limits: { maxFileBytes: 10 } })
    const before = await snapshot(box.base)
    const result = await box.run({
      command: 'create',
      path: '/memories/new/big.md',
      file_text: 'x'.repeat(11),
    })
    expect(result).toMatchObject({ isError: true, mutation: null })
    expect(text(result)).toBe(
      'Error: Nothing was written to /memories/new/big.md: the file would be 11 bytes, over the limit of 10 bytes per memory file. Split it into smaller files.',
    )
    expect(await snapshot(box.base)).toBe(before)
    expect(
      (await box.run({ command: 'create', path: '/memories/ok.md', file_text: 'x'.repeat(10) }))
        .isError,
    ).toBe(false)
  })

  it('counts one file and one byte in the singular in its refusals', async () => {
    box = await makeSandbox({ limits: { maxFiles: 1, maxFileBytes: 1, maxTotalBytes: 1 } })
    expect(
      (await box.run({ command: 'create', path: '/memories/a.md', file_text: 'a' })).isError,
    ).toBe(false)
    const before = await snapshot(box.base)
    const second = await box.run({ command: 'create', path: '/memories/b.md', file_text: 'b' })
    expect(text(second)).toBe(
      'Error: Nothing was written to /memories/b.md: memory already holds 1 file, the limit is 1. Merge or delete files first.',
    )
    const big = await box.run({ command: 'create', path: '/memories/a.md', file_text: 'ab' })
    expect(text(big)).toBe(
      'Error: Nothing was written to /memories/a.md: the file would be 2 bytes, over the limit of 1 byte per memory file. Split it into smaller files.',
    )
    expect(await snapshot(box.base)).toBe(before)
  })

  it('counts one byte of total in the singular', async () => {
    box = await makeSandbox({ limits: { maxFileBytes: 10, maxTotalBytes: 1 } })
    const result = await box.run({ command: 'create', path: '/memories/a.md', file_text: 'ab' })
    expect(text(result)).toBe(
      'Error: Nothing was written to /memories/a.md: memory would hold 2 bytes in total, over the limit of 1 byte. Shorten or delete files first.',
    )
  })

  it('counts bytes as UTF-8, not characters', async () => {
    box = await makeSandbox({ limits: { maxFileBytes: 5 } })
    expect(
      (await box.run({ command: 'create', path: '/memories/e.md', file_text: 'ééé' })).isError,
    ).toBe(true)
  })

  it('refuses edits that would grow a file past the limit', async () => {
    box = await makeSandbox({ limits: { maxFileBytes: 8 } })
    await box.write('f.md', 'abc\n')
    const grow = await box.run({
      command: 'insert',
      path: '/memories/f.md',
      insert_line: 1,
      insert_text: 'defghi',
    })
    expect(grow.isError).toBe(true)
    const replace = await box.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: 'abc',
      new_str: 'abcdefghij',
    })
    expect(replace.isError).toBe(true)
    expect(await box.read('f.md')).toBe('abc\n')
  })

  it('refuses a write that would pass the total bytes limit, but allows one that shrinks', async () => {
    box = await makeSandbox({ limits: { maxTotalBytes: 20 } })
    await box.run({ command: 'create', path: '/memories/a.md', file_text: 'x'.repeat(15) })
    const before = await snapshot(box.base)
    const result = await box.run({
      command: 'create',
      path: '/memories/b.md',
      file_text: 'x'.repeat(6),
    })
    expect(text(result)).toBe(
      'Error: Nothing was written to /memories/b.md: memory would hold 21 bytes in total, over the limit of 20 bytes. Shorten or delete files first.',
    )
    expect(await snapshot(box.base)).toBe(before)
    // Overwriting counts the replaced file's bytes as freed.
    expect(
      (await box.run({ command: 'create', path: '/memories/a.md', file_text: 'x'.repeat(20) }))
        .isError,
    ).toBe(false)
    expect(
      (await box.run({ command: 'create', path: '/memories/a.md', file_text: 'x' })).isError,
    ).toBe(false)
    expect(
      (await box.run({ command: 'create', path: '/memories/b.md', file_text: 'x'.repeat(19) }))
        .isError,
    ).toBe(false)
  })

  it('refuses a new file past the file-count limit, but still allows edits and overwrites', async () => {
    box = await makeSandbox({ limits: { maxFiles: 2 } })
    await box.run({ command: 'create', path: '/memories/a.md', file_text: 'a' })
    await box.run({ command: 'create', path: '/memories/d/b.md', file_text: 'b' })
    const before = await snapshot(box.base)
    const third = await box.run({ command: 'create', path: '/memories/new/c.md', file_text: 'c' })
    expect(text(third)).toBe(
      'Error: Nothing was written to /memories/new/c.md: memory already holds 2 files, the limit is 2. Merge or delete files first.',
    )
    expect(await snapshot(box.base)).toBe(before)
    expect(
      (await box.run({ command: 'create', path: '/memories/a.md', file_text: 'A' })).isError,
    ).toBe(false)
    expect(
      (
        await box.run({
          command: 'insert',
          path: '/memories/a.md',
          insert_line: 0,
          insert_text: 'x',
        })
      ).isError,
    ).toBe(false)
  })

  it('keeps its count current through its own deletes and renames', async () => {
    box = await makeSandbox({ limits: { maxFiles: 2 } })
    await box.run({ command: 'create', path: '/memories/d/a.md', file_text: 'a' })
    await box.run({ command: 'create', path: '/memories/d/b.md', file_text: 'b' })
    await box.run({ command: 'rename', old_path: '/memories/d', new_path: '/memories/e' })
    expect(
      (await box.run({ command: 'create', path: '/memories/c.md', file_text: 'c' })).isError,
    ).toBe(true)
    await box.run({ command: 'delete', path: '/memories/e' })
    expect(
      (await box.run({ command: 'create', path: '/memories/c.md', file_text: 'c' })).isError,
    ).toBe(false)
    expect(
      (await box.run({ command: 'create', path: '/memories/x.md', file_text: 'x' })).isError,
    ).toBe(false)
    expect(
      (await box.run({ command: 'create', path: '/memories/y.md', file_text: 'y' })).isError,
    ).toBe(true)
  })

  it('sees files added behind its back at once when a write comes near a limit', async () => {
    // A clock that never moves: the cached total never expires on its own.
    box = await makeSandbox({ limits: { maxFiles: 2 }, usageMaxAgeMs: 1000, now: () => 0 })
    await box.run({ command: 'create', path: '/memories/a.md', file_text: 'a' })
    await box.write('outside-1.md', 'x')
    // The cached total (1 file) would allow it; near the limit the folder is counted again.
    expect(
      (await box.run({ command: 'create', path: '/memories/b.md', file_text: 'b' })).isError,
    ).toBe(true)
    await fs.rm(path.join(box.root, 'outside-1.md'))
    expect(
      (await box.run({ command: 'create', path: '/memories/b.md', file_text: 'b' })).isError,
    ).toBe(false)
  })

  it('walks the folder between commands once its total is past half its age', async () => {
    let clock = 0
    box = await makeSandbox({ limits: { maxFiles: 2 }, usageMaxAgeMs: 1000, now: () => clock })
    await box.run({ command: 'create', path: '/memories/a.md', file_text: 'a' })
    await box.write('outside-1.md', 'x')
    clock = 600
    // This command finds the total getting old; the walk runs after it, before the next one.
    await box.run({ command: 'view', path: '/memories' })
    const result = await box.run({ command: 'create', path: '/memories/b.md', file_text: 'b' })
    expect(text(result)).toContain('memory already holds 2 files, the limit is 2')
  })

  it('re-walks right after invalidateUsage, so the next write does not have to', async () => {
    // Far from the limits the running total is trusted; the walks are counted here.
    class CountedCache extends UsageCache {
      walks = 0
      override async refresh(): Promise<void> {
        this.walks++
        await super.refresh()
      }
    }
    let cache!: CountedCache
    box = await makeSandbox({
      usageFor: (root) => (cache = new CountedCache(root, 60_000, Date.now)),
    })
    await box.run({ command: 'create', path: '/memories/a.md', file_text: 'a' })
    expect(cache.walks).toBe(1)
    await box.run({ command: 'create', path: '/memories/b.md', file_text: 'b' })
    expect(cache.walks).toBe(1)
    await box.write('outside-1.md', 'x')
    box.tool.invalidateUsage()
    // Queued behind the walk: once it answers, the walk has counted outside-1.md.
    await box.run({ command: 'view', path: '/memories' })
    expect(cache.walks).toBe(2)
    await box.run({ command: 'create', path: '/memories/c.md', file_text: 'c' })
    expect(cache.walks).toBe(2)
    expect(await cache.get()).toEqual({ files: 4, bytes: 4 })
  })

  it('measures regular, non-hidden files only', async () => {
    box = await makeSandbox()
    await box.write('a.md', '12345')
    await box.write('d/b.md', '123')
    await box.write('.hidden/c.md', '1234567')
    await fs.symlink(path.join(box.sentinel, 'secret.txt'), path.join(box.root, 'link.md'))
    expect(await measure(box.root)).toEqual({ files: 2, bytes: 8 })
  })
})
