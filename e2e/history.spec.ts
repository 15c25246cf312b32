import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createCore, type Core } from '../src/main/core'
import type { ChangeResult, CommitDetail, CommitSummary, LogPage } from '../src/shared/types'
import {
  claudeTurn,
  create,
  expect,
  notesOverwritten,
  remove,
  reply,
  strReplace,
  test,
} from './fixtures/claude-turns'
import { attachCore } from './fixtures/harness'
import { buildLargeHistory } from './fixtures/large-history'
import { ChatPage } from './pages/chat.page'
import { HistoryPage } from './pages/history.page'
import { MemoryPage } from './pages/memory.page'

test('the user rolls back an overwrite, then undoes the restore too', async ({
  page,
  cairn,
  anthropic,
}) => {
  await notesOverwritten(cairn, anthropic)
  await cairn.open(page)
  const history = new HistoryPage(page)
  const memory = new MemoryPage(page)
  await history.open()

  const overwrite = history.rows.first()
  await expect(overwrite).toContainText('Claude')
  await expect(overwrite).toContainText('Overwrite')
  await expect(history.rows.nth(1)).not.toContainText('Overwrite')
  await history.select(overwrite)
  const diff = history.diffTable('/memories/notes.md')
  await expect(diff.getByRole('cell', { name: 'removed: Pet: a cat called Miso' })).toBeVisible()
  await expect(diff.getByRole('cell', { name: 'added: Favourite colour: green' })).toBeVisible()

  await history.select(history.rows.nth(1))
  await history.fileDiff('notes.md').getByRole('button', { name: 'Restore this version' }).click()
  await expect(history.dialog).toContainText('notes.md will get back the content it had')
  await expect(history.dialog).toContainText('you can undo it')
  await history.dialog.getByRole('button', { name: 'Restore file' }).click()
  await expect(history.notice).toContainText('Restored notes.md')
  await expect(history.notice).toContainText('can be undone')

  const restore = history.rows.first()
  // Named by the time of the version it went back to, never by a commit id.
  await expect(restore).toContainText('You restored notes.md to its version of')
  await expect(history.count).toHaveText('3 changes')

  await memory.open()
  await memory.openFile('notes.md')
  await expect(memory.content('notes.md')).toContainText('Pet: a cat called Miso')

  await history.open()
  await history.undoFromNotice()
  await expect(history.notice).toContainText('Undone')
  await expect(history.rows.first()).toContainText('You undid “You restored notes.md')
  await expect(history.count).toHaveText('4 changes')
  await memory.open()
  await expect(memory.content('notes.md')).toContainText('Favourite colour: green')
  await expect(memory.content('notes.md')).not.toContainText('Miso')
})

test('the user brings back a file Claude deleted', async ({ page, cairn, anthropic }) => {
  await claudeTurn(cairn, anthropic, 'Remember my trip.', [
    create('/memories/trip.md', 'Lisbon, May 12-19\n'),
    reply.text('Saved.'),
  ])
  await claudeTurn(cairn, anthropic, 'Forget the trip.', [
    remove('/memories/trip.md'),
    reply.text('Deleted.'),
  ])
  await cairn.open(page)
  const history = new HistoryPage(page)
  const memory = new MemoryPage(page)
  await expect(memory.item('trip.md')).toHaveCount(0)

  await history.open()
  await history.select(history.row('Claude deleted trip.md'))
  await expect(history.fileDiff('trip.md')).toContainText('Deleted')
  await history.bringBack('trip.md')
  await expect(history.notice).toContainText('Brought back trip.md')
  await expect(history.rows.first()).toContainText('You brought back trip.md')

  await memory.open()
  await memory.openFile('trip.md')
  await expect(memory.content('trip.md')).toContainText('Lisbon, May 12-19')
})

test('the user brings back a file from its older deletion and gets that version', async ({
  page,
  cairn,
  anthropic,
}) => {
  await claudeTurn(cairn, anthropic, 'Plan a weekend.', [
    create('/memories/plan.md', 'FIRST plan: hike the ridge\n'),
    remove('/memories/plan.md'),
    create('/memories/plan.md', 'SECOND plan: stay home\n'),
    remove('/memories/plan.md'),
    reply.text('Changed my mind twice.'),
  ])
  await cairn.open(page)
  const history = new HistoryPage(page)
  const memory = new MemoryPage(page)
  await history.open()
  // Newest first: the second deletion, the second plan, then the older deletion.
  const older = history.rows.nth(2)
  await expect(older).toContainText('Claude deleted plan.md')
  await history.select(older)
  await expect(history.fileDiff('plan.md')).toContainText('FIRST plan')
  await history.fileDiff('plan.md').getByRole('button', { name: 'Bring back this file' }).click()
  await expect(history.dialog).toContainText('the content it had just before the change of')
  await history.dialog.getByRole('button', { name: 'Bring back' }).click()
  await expect(history.notice).toContainText(
    'Brought back plan.md as it was just before the change of',
  )

  await memory.open()
  await memory.openFile('plan.md')
  await expect(memory.content('plan.md')).toContainText('FIRST plan: hike the ridge')
  await expect(memory.content('plan.md')).not.toContainText('SECOND')
})

test('the user reverts one str_replace, and reverting it again says memory already matches', async ({
  page,
  cairn,
  anthropic,
}) => {
  await claudeTurn(cairn, anthropic, 'Track my tools.', [
    create('/memories/tools.md', 'Editor: vim\nShell: bash\n'),
    reply.text('Saved.'),
  ])
  await claudeTurn(cairn, anthropic, 'I moved to Helix.', [
    strReplace('/memories/tools.md', 'Editor: vim', 'Editor: helix'),
    reply.text('Updated.'),
  ])
  await cairn.open(page)
  const history = new HistoryPage(page)
  const memory = new MemoryPage(page)
  await history.open()

  const change = history.rows.first()
  await expect(change).toContainText('Claude edited tools.md')
  await history.select(change)
  await expect(history.diffTable('/memories/tools.md')).toContainText('helix')
  await history.revertSelected()
  await expect(history.notice).toContainText('Undid the change of')
  await expect(history.rows.first()).toContainText('You undid “Claude edited tools.md”')
  await memory.open()
  await memory.openFile('tools.md')
  await expect(memory.content('tools.md')).toContainText('Editor: vim')

  // The file is back as it was before that str_replace (the revert itself): reverting it
  // again has nothing to undo, says so and commits nothing.
  await history.open()
  await history.select(history.row(/^Claude edited tools\.md/))
  await history.revertSelected()
  await expect(history.notice).toContainText('already matches how it was before that change')
  await expect(history.count).toHaveText('3 changes')
  await memory.open()
  await expect(memory.content('tools.md')).toContainText('Editor: vim')
})

test('the user restores all memory to an earlier point', async ({ page, cairn, anthropic }) => {
  await claudeTurn(cairn, anthropic, 'Remember two things.', [
    create('/memories/a.md', 'alpha\n'),
    create('/memories/b.md', 'beta\n'),
    reply.text('Saved both.'),
  ])
  await claudeTurn(cairn, anthropic, 'Change things.', [
    strReplace('/memories/a.md', 'alpha', 'ALPHA'),
    remove('/memories/b.md'),
    create('/memories/c.md', 'gamma\n'),
    reply.text('Done.'),
  ])
  await cairn.open(page)
  const history = new HistoryPage(page)
  const memory = new MemoryPage(page)
  await history.open()
  await expect(history.count).toHaveText('5 changes')

  await history.select(history.row('Claude created b.md'))
  await history.detail.getByRole('button', { name: 'Restore all memory to this point' }).click()
  await expect(history.dialog).toContainText('files added since are removed')
  await history.dialog.getByRole('button', { name: 'Restore all memory' }).click()
  await expect(history.notice).toContainText('Restored all memory to how it was on')
  await expect(history.rows.first()).toContainText('You restored all memory to how it was on')

  await memory.open()
  await expect(memory.item('c.md')).toHaveCount(0)
  await memory.openFile('b.md')
  await expect(memory.content('b.md')).toContainText('beta')
  await memory.openFile('a.md')
  await expect(memory.content('a.md')).toContainText('alpha')
})

test('a restore touching 151 files shows the first 100 and loads a left-out diff on demand', async ({
  page,
  cairn,
}) => {
  async function write(file: string, content: string): Promise<string> {
    const result = await cairn.core.dispatch('memory:write', { path: file, content })
    if (!result.ok) throw new Error(`${file}: ${result.error.message}`)
    const { commit } = result.value as ChangeResult
    if (!commit) throw new Error(`${file}: no commit`)
    return commit.oid
  }
  // 1,000 lines of ~1,000 characters: two versions of it overflow what one change may send.
  const big = (side: string) =>
    Array.from({ length: 1_000 }, (_, i) =>
      `${side} line ${String(i).padStart(4, '0')} `.padEnd(1_000, side[0]),
    ).join('\n')
  await write('/memories/huge.md', big('before'))
  const early = await write('/memories/keep.md', 'kept\n')
  await write('/memories/huge.md', big('after'))
  for (let i = 0; i < 150; i++) {
    await write(`/memories/many/f${String(i).padStart(3, '0')}.md`, `file ${i}\n`)
  }
  const restored = await cairn.core.dispatch('history:restoreAll', { oid: early })
  expect(restored.ok).toBe(true)

  await cairn.open(page)
  const history = new HistoryPage(page)
  await history.open()
  await expect(history.rows.first()).toContainText('You restored all memory')
  await history.select(history.rows.first())
  await expect(history.filesShown).toContainText('Showing 100 of 151 changed files')
  await expect(history.detail.getByRole('article')).toHaveCount(100)
  await expect(history.fileDiff('many/f000.md')).toContainText('file 0')
  await expect(history.fileDiff('many/f098.md')).toBeVisible()
  await expect(history.fileDiff('many/f099.md')).toHaveCount(0)

  const huge = history.fileDiff('huge.md')
  await expect(huge).toContainText('diff was not loaded')
  await expect(history.diffTable('/memories/huge.md')).toHaveCount(0)
  await huge.scrollIntoViewIfNeeded()
  await page.screenshot({ path: 'e2e/artifacts/history-large-omitted-light.png' })
  await history.loadDiff('huge.md')
  const diff = history.diffTable('/memories/huge.md')
  await expect(diff).toContainText('before line 0007')
  await expect(diff).toContainText('after line 0007')
  await page.screenshot({ path: 'e2e/artifacts/history-large-change-light.png' })
  await expect(huge.getByRole('button', { name: 'Load diff' })).toHaveCount(0)
  await expect(huge.getByRole('button', { name: 'Restore this version' })).toBeVisible()
})

test('a left-out change too large to show says so when its diff is asked for', async ({
  page,
  cairn,
}) => {
  // A 5 MB log file edited in another program: over the memory browser's 4 MB, so neither
  // the commit nor "Load diff" may send it to the window.
  const log = path.join(cairn.dataDir, 'memories', 'recording.log')
  const changes = async () => {
    const page = await cairn.core.dispatch('history:log', { offset: 0, limit: 1 })
    return page.ok ? (page.value as LogPage).total : 0
  }
  const before = await changes()
  await writeFile(log, 'a'.repeat(5 * 1024 * 1024))
  await expect.poll(changes).toBe(before + 1)
  await writeFile(log, 'b'.repeat(5 * 1024 * 1024))
  await expect.poll(changes).toBe(before + 2)

  await cairn.open(page)
  const history = new HistoryPage(page)
  await history.open()
  await history.select(history.rows.first())
  const file = history.fileDiff('recording.log')
  await expect(file).toContainText('diff was not loaded')
  await history.loadDiff('recording.log')
  await expect(file).toContainText(
    '/memories/recording.log is too large to show here: this version is 5.0 MB, and Cairn shows files of up to 4.0 MB.',
  )
  // Trying again cannot help: no button offers it.
  await expect(file.getByRole('button', { name: 'Try again' })).toHaveCount(0)
  await expect(file.getByRole('button', { name: 'Load diff' })).toHaveCount(0)
  await expect(file.getByRole('button', { name: 'Restore this version' })).toBeVisible()
  await page.screenshot({ path: 'e2e/artifacts/history-too-large-light.png' })
  await page.emulateMedia({ colorScheme: 'dark' })
  await page.screenshot({ path: 'e2e/artifacts/history-too-large-dark.png' })
})

test('the timeline filters by author and file, and shows where a change came from', async ({
  page,
  cairn,
  anthropic,
}) => {
  await claudeTurn(cairn, anthropic, 'Remember my dog.', [
    create('/memories/pets.md', 'Dog: Rex\n'),
    reply.text('Saved.'),
  ])
  await cairn.core.dispatch('memory:write', { path: '/memories/todo.md', content: 'Buy milk\n' })
  await cairn.open(page)
  const history = new HistoryPage(page)
  await history.open()
  await expect(history.count).toHaveText('2 changes')

  await history.filterByAuthor('Claude')
  await expect(history.count).toHaveText('1 change')
  await expect(history.rows.first()).toContainText('pets.md')
  await history.filterByAuthor('All authors')
  await history.filterByFile('/memories/todo.md')
  await expect(history.count).toHaveText('1 change')
  await expect(history.rows.first()).toContainText('todo.md')
  await history.pane.getByRole('button', { name: 'Clear filters' }).click()
  await expect(history.count).toHaveText('2 changes')
  await history.filterByConversation('Remember my dog.')
  await expect(history.count).toHaveText('1 change')
  await expect(history.rows.first()).toContainText('pets.md')
  await history.filterByConversation('All conversations')
  await expect(history.count).toHaveText('2 changes')

  // The conversation a change came from is one click away.
  await history.rows.filter({ hasText: 'pets.md' }).getByRole('button').click()
  const chat = new ChatPage(page)
  await expect(chat.title).toHaveText('Remember my dog.')
  await expect(chat.userMessages().first()).toHaveText('Remember my dog.')
  await expect(chat.conversation('Remember my dog.')).toHaveAttribute('aria-current', 'page')
})

test('the timeline navigates with the keyboard and updates live', async ({
  page,
  cairn,
  anthropic,
}) => {
  await cairn.core.dispatch('memory:write', { path: '/memories/one.md', content: '1\n' })
  await cairn.core.dispatch('memory:write', { path: '/memories/two.md', content: '2\n' })
  await cairn.open(page)
  const history = new HistoryPage(page)
  await history.open()
  await history.timeline.focus()
  await history.timeline.press('ArrowDown')
  await expect(history.timeline.getByRole('row', { selected: true })).toContainText('two.md')
  await history.timeline.press('ArrowDown')
  await expect(history.timeline.getByRole('row', { selected: true })).toContainText('one.md')
  await expect(history.detail).toContainText('/memories/one.md')

  const splitter = history.pane.getByRole('separator', { name: 'Resize timeline' })
  await splitter.focus()
  await splitter.press('ArrowDown')
  await expect(splitter).toHaveAttribute('aria-valuenow', '43')

  await claudeTurn(cairn, anthropic, 'Remember three.', [
    create('/memories/three.md', '3\n'),
    reply.text('Saved.'),
  ])
  await expect(history.rows.first()).toContainText('three.md')
  await expect(history.rows.first()).toContainText('Claude')
  await expect(history.timeline.getByRole('row', { selected: true })).toContainText('one.md')
})

test('a failed load shows an error with Retry, and a slow one shows progress', async ({
  page,
  cairn,
  rendererServer,
}) => {
  await cairn.core.dispatch('memory:write', { path: '/memories/slow.md', content: 'slow\n' })
  // The real core, with history:log failing until the test lets it work and history:show held.
  let failLog = true
  let release: () => void = () => {}
  const held = new Promise<void>((resolve) => (release = resolve))
  const flaky: Core = {
    ...cairn.core,
    dispatch: async (channel, payload) => {
      if (channel === 'history:log' && failLog) {
        return { ok: false, error: { code: 'io-error', message: 'The history could not be read.' } }
      }
      if (channel === 'history:show') await held
      return cairn.core.dispatch(channel, payload)
    },
  }
  const detach = await attachCore(page, flaky)
  try {
    await page.goto(rendererServer.url)
    const history = new HistoryPage(page)
    await history.open()
    await expect(history.error).toContainText('The history could not be read.')
    failLog = false
    await history.error.getByRole('button', { name: 'Retry' }).click()
    await expect(history.error).toHaveCount(0)
    await expect(history.rows.first()).toContainText('slow.md')

    await history.select(history.rows.first())
    await expect(history.pane.getByRole('status', { name: 'Loading change…' })).toBeVisible()
    release()
    await expect(history.detail).toContainText('/memories/slow.md')
    await expect(history.pane.getByRole('status', { name: 'Loading change…' })).toHaveCount(0)
  } finally {
    release()
    detach()
  }
})

test('a commit dated past what a date can hold is listed as an unknown time, and the window stays', async ({
  page,
  cairn,
  rendererServer,
}) => {
  await cairn.core.dispatch('memory:write', { path: '/memories/far.md', content: 'far\n' })
  await cairn.core.dispatch('memory:write', { path: '/memories/near.md', content: 'near\n' })
  // The real core, with the far.md commit dated 99999999999999 s, as a side index written before
  // times were clamped at parse still holds it (review hunt12-story D6).
  const FAR = 99_999_999_999_999_000
  const far = (commit: CommitSummary): CommitSummary =>
    commit.subject.includes('far.md') ? { ...commit, time: FAR } : commit
  const dated: Core = {
    ...cairn.core,
    dispatch: async (channel, payload) => {
      const result = await cairn.core.dispatch(channel, payload)
      if (!result.ok) return result
      if (channel === 'history:log') {
        const page = result.value as LogPage
        return { ok: true, value: { ...page, entries: page.entries.map(far) } }
      }
      if (channel === 'history:show') {
        const detail = result.value as CommitDetail
        return { ok: true, value: { ...detail, commit: far(detail.commit) } }
      }
      return result
    },
  }
  const detach = await attachCore(page, dated)
  try {
    await page.goto(rendererServer.url)
    const history = new HistoryPage(page)
    await history.open()
    const row = history.row('far.md')
    await expect(row).toContainText('an unknown time')
    await expect(history.row('near.md')).toBeVisible()
    await history.select(row)
    await expect(history.detail).toContainText('an unknown time')
    await expect(history.fileDiff('far.md')).toBeVisible()
    await expect(page.getByText('Cairn could not show this window')).toHaveCount(0)
  } finally {
    detach()
  }
})

test('a timeline of 10,000 commits opens and scrolls without loading every entry', async ({
  page,
  rendererServer,
}) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-large-'))
  await buildLargeHistory(dataDir, { commits: 10_000 })
  const core = await createCore({ dataDir })
  // Every history:log request the page makes, as the core receives it.
  const logRequests: Array<{ offset: number; limit: number }> = []
  const recording: Core = {
    ...core,
    dispatch: (channel, payload) => {
      if (channel === 'history:log') logRequests.push(payload as { offset: number; limit: number })
      return core.dispatch(channel, payload)
    },
  }
  const detach = await attachCore(page, recording)
  try {
    await page.goto(rendererServer.url)
    const history = new HistoryPage(page)
    await history.open()
    await expect(history.count).toHaveText('10,000 changes')
    await expect(history.rows.first()).toContainText('topics/topic-00.md')
    await expect(history.rows.first()).toHaveAttribute('aria-rowindex', '1')

    // Jump to the oldest commit with the keyboard, then page and scroll back into the middle.
    await history.timeline.focus()
    await history.timeline.press('End')
    const selected = history.timeline.getByRole('row', { selected: true })
    await expect(selected).toHaveAttribute('aria-rowindex', '10000')
    await expect(selected).toContainText('create')
    await expect(history.detail).toContainText('create /memories/topics/topic-01.md')
    for (let i = 0; i < 5; i++) await history.timeline.press('PageUp')
    await expect(selected).not.toHaveAttribute('aria-rowindex', '10000')
    await history.timeline.hover()
    await page.mouse.wheel(0, -200_000)
    await expect(history.rows.first()).not.toHaveAttribute('aria-rowindex', '1')
    await expect(history.rows.first()).toContainText('topics/')

    // Only the rows on screen exist, and only their pages were asked for.
    expect(await history.rows.count()).toBeLessThan(60)
    expect(Math.max(...logRequests.map((r) => r.limit))).toBeLessThanOrEqual(100)
    const loaded = logRequests.reduce((sum, r) => sum + r.limit, 0)
    test.info().annotations.push({
      type: 'history:log',
      description: `${logRequests.length} requests, ${loaded} entries asked for out of 10,000`,
    })
    expect(loaded).toBeLessThan(2_000)
  } finally {
    detach()
    await core.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})
