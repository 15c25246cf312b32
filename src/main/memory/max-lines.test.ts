import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MAX_LINES } from './text-model'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'

// hunt13-tool D4: a write could make a file of more than 999,999 lines, which `view` and the
// edits then refuse for good. Such a write is refused, as the byte limits are, changing nothing.
const LIMIT = 'over the limit of 999,999 lines per memory file'

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
})
afterEach(() => box.cleanup())

describe('the line limit on writes (hunt13-tool D4)', () => {
  it('refuses a create of 1,000,000 lines, accepts one of 999,999', async () => {
    const before = await snapshot(box.base)
    const over = await box.run({
      command: 'create',
      path: '/memories/lines.md',
      file_text: '\n'.repeat(MAX_LINES + 1),
    })
    expect(over.isError).toBe(true)
    expect(text(over)).toBe(
      `Error: Nothing was written to /memories/lines.md: the file would have 1,000,000 lines, ${LIMIT} (past it a file can no longer be viewed or edited). Split it into smaller files.`,
    )
    expect(await snapshot(box.base)).toBe(before)
    // The same count without a final newline: the last line is one more.
    const noNewline = await box.run({
      command: 'create',
      path: '/memories/lines.md',
      file_text: `${'\n'.repeat(MAX_LINES)}x`,
    })
    expect(text(noNewline)).toContain('the file would have 1,000,000 lines')
    expect(await snapshot(box.base)).toBe(before)

    const at = await box.run({
      command: 'create',
      path: '/memories/lines.md',
      file_text: `${'\n'.repeat(MAX_LINES - 1)}x`,
    })
    expect(at.isError, text(at)).toBe(false)
    const viewed = await box.run({
      command: 'view',
      path: '/memories/lines.md',
      view_range: [MAX_LINES, -1],
    })
    expect(text(viewed)).toContain('999999\tx')
  })

  it('refuses an insert or str_replace that passes the limit, and keeps the file viewable', async () => {
    // 999,999 lines in 1,000,000 bytes, under the 1 MiB per-file limit.
    await box.write('full.md', `a\n${'\n'.repeat(MAX_LINES - 1)}`)
    const before = await snapshot(box.base)
    const inserted = await box.run({
      command: 'insert',
      path: '/memories/full.md',
      insert_line: 0,
      insert_text: 'one more',
    })
    const replaced = await box.run({
      command: 'str_replace',
      path: '/memories/full.md',
      old_str: 'a\n',
      new_str: 'a\nb\n',
    })
    for (const result of [inserted, replaced]) {
      expect(result.isError).toBe(true)
      expect(text(result)).toContain('the file would have 1,000,000 lines')
      expect(text(result)).toContain(LIMIT)
    }
    expect(await snapshot(box.base)).toBe(before)
    // Still viewable and editable: an edit that keeps the count is accepted.
    const view = await box.run({ command: 'view', path: '/memories/full.md', view_range: [1, 2] })
    expect(view.isError, text(view)).toBe(false)
    const same = await box.run({
      command: 'insert',
      path: '/memories/full.md',
      insert_line: 0,
      insert_text: '',
    })
    expect(same.isError).toBe(true)
    const shorter = await box.run({
      command: 'str_replace',
      path: '/memories/full.md',
      old_str: 'a\n',
      new_str: '',
    })
    expect(shorter.isError, text(shorter)).toBe(false)
  })
})
