import { open as openFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createCore, type Core } from '../core'
import { tempDataDir } from '../history/test-helpers'

// Defect 6 of issue #9: the browser side had no size limits. `memory:read` returned 100 MB of
// text to the window, `memory:search` read every file whole, `memory:write` had no maximum.

let dataDir: string
let cleanup: () => Promise<void>
let core: Core

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  core = await createCore({ dataDir })
})
afterEach(async () => {
  await core.close()
  await cleanup()
})

const file = (relative: string) => path.join(dataDir, 'memories', relative)

describe('browser-side size limits (defect 6)', () => {
  it('answers memory:read of a 100 MB file with "too large to show", not its text', async () => {
    await writeFile(file('big.md'), 'line of text\n'.repeat(8_000_000))
    const result = await core.dispatch('memory:read', { path: '/memories/big.md' })
    expect(result.ok).toBe(true)
    if (!result.ok) return
    expect(result.value).toMatchObject({ kind: 'too-large', text: null, data: null })
    expect(JSON.stringify(result.value).length).toBeLessThan(10_000)
  })

  it('answers memory:read of a large version from the history the same way', async () => {
    await writeFile(file('big.md'), 'line of text\n'.repeat(400_000))
    // An edit made outside Cairn: the next open saves it to the history.
    await core.close()
    core = await createCore({ dataDir })
    const log = await core.dispatch('history:log', { offset: 0, limit: 1 })
    if (!log.ok) throw new Error('no history')
    const at = (log.value as { entries: Array<{ oid: string }> }).entries[0]!.oid
    const result = await core.dispatch('memory:read', { path: '/memories/big.md', at })
    expect(result).toMatchObject({ ok: true, value: { kind: 'too-large', text: null } })
    expect(JSON.stringify(result).length).toBeLessThan(10_000)
  })

  it('answers memory:read of a large image the same way', async () => {
    await writeFile(file('big.png'), Buffer.alloc(8_000_000, 0x89))
    const result = await core.dispatch('memory:read', { path: '/memories/big.png' })
    expect(result).toMatchObject({ ok: true, value: { kind: 'too-large', data: null } })
  })

  it('holds a text file named .png to the text cap, as the Memory tool reads it, not the image cap', async () => {
    // Over the image cap (3,750,000 bytes), under the text cap (4 MiB): text is shown.
    const text = 'a line of notes\n'.repeat(245_000)
    expect(text.length).toBeGreaterThan(3_750_000)
    await writeFile(file('notes.png'), text)
    const result = await core.dispatch('memory:read', { path: '/memories/notes.png' })
    expect(result).toMatchObject({ ok: true, value: { kind: 'text', size: text.length } })
    if (result.ok) expect((result.value as { text: string }).text).toBe(text)
    // Past the text cap it is too large, named like an image or not.
    await writeFile(file('notes.png'), 'x'.repeat(4 * 1024 * 1024 + 1))
    expect(await core.dispatch('memory:read', { path: '/memories/notes.png' })).toMatchObject({
      ok: true,
      value: { kind: 'too-large', text: null },
    })
  })

  it('searches around a file too large to read whole, and caps the hits', async () => {
    const handle = await openFile(file('huge.bin'), 'w')
    await handle.truncate(2.5 * 1024 ** 3)
    await handle.close()
    await writeFile(file('many.md'), 'needle here\n'.repeat(100_000))
    // Past the first megabyte of a file the search still finds it (it reads in chunks).
    await writeFile(file('deep.md'), `${'hay\n'.repeat(500_000)}the deep needle\n`)
    const result = await core.dispatch('memory:search', { query: 'needle' })
    expect(result.ok).toBe(true)
    if (!result.ok) return
    const hits = result.value as ReadonlyArray<{ path: string; text: string }>
    expect(hits.length).toBeLessThanOrEqual(200)
    expect(hits.some((hit) => hit.path === '/memories/deep.md')).toBe(true)
    expect(hits.some((hit) => hit.path === '/memories/huge.bin')).toBe(false)
  })

  it('bounds memory:write content in the schema', async () => {
    const result = await core.dispatch('memory:write', {
      path: '/memories/x.md',
      content: 'x'.repeat(1024 * 1024 + 1),
    })
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid-payload' } })
  })
})
