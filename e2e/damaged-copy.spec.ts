import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { mkdtemp, readFile, realpath, rm, truncate, utimes, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { createCore, type Core } from '../src/main/core'
import { nodeDisk, setDisk } from '../src/main/lib/disk'
import { hookDisk } from '../src/main/lib/disk-hooks'
import { reply } from '../test/fixtures/fake-anthropic'
import { attachCore, expect, test } from './fixtures/harness'
import { shootBoth } from './fixtures/screens'
import { ChatPage } from './pages/chat.page'
import { FullHistoryPage } from './pages/full-history.page'
import { HistoryPage } from './pages/history.page'
import { MemoryPage } from './pages/memory.page'

const git = (dataDir: string, ...args: string[]): string =>
  execFileSync('git', ['--git-dir', path.join(dataDir, 'history.git'), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })

/**
 * `git`, for `expect.poll`: a failure (`main` still naming the damaged copy, before the edit
 * made meanwhile is committed) is an answer to poll again, with git's words if it never passes.
 */
const gitNow = (dataDir: string, ...args: string[]): string => {
  try {
    return git(dataDir, ...args)
  } catch (error) {
    return `git failed: ${(error as Error).message}`
  }
}

/**
 * The disk seam, set so that the first time the core touches the loose file `loose` (the
 * check made after open: an `lstat`, then a read), `file` is written with `text` just before,
 * as an editor saving in that first second would. No timer is raced: whenever the check runs,
 * the edit has landed by then.
 */
function editWhenChecked(loose: string, file: string, text: string) {
  let edits = 0
  const hooked = hookDisk(nodeDisk, (call) => {
    if (edits === 0 && call.args[0] === loose) {
      writeFileSync(file, text)
      edits++
    }
  })
  return { undo: setDisk(hooked.disk), edits: () => edits }
}

// The copy History keeps of a file, damaged on disk while Cairn was closed, is checked after
// open; when the file changed in that first second it cannot be repaired. The person is told
// what is lost (that version) and what is not (the file), History marks that version as
// damaged, and memory keeps working.
test('a damaged copy that cannot be repaired is a warning, marked in History, and nothing stops', async ({
  page,
  anthropic,
  rendererServer,
}) => {
  // Four opens of the core before the page loads.
  test.slow()
  const dataDir = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-damaged-copy-')))
  // Quiet: the damage is expected here, not a fault to print.
  const logger = { info: () => {}, warn: () => {}, error: () => {} }
  const open = () =>
    createCore({
      appVersion: '0.1.0-e2e',
      env: { ANTHROPIC_API_KEY: 'sk-ant-e2e-key', ANTHROPIC_BASE_URL: anthropic.url },
      anthropicMaxRetries: 0,
      dataDir,
      logger,
    })
  const trip = path.join(dataDir, 'memories', 'trip.md')
  let core: Core | null = await open()
  let stop = () => {}
  let undoDisk = () => {}
  try {
    const written = await core.dispatch('memory:write', {
      path: '/memories/trip.md',
      content: 'Lisbon in May: book the train.\n',
    })
    expect(written.ok).toBe(true)
    await core.close()
    core = null
    // Older than the stat cache's racy window, the file is trusted by its stamp from the next
    // open on; the open after that records its blob's stamp, and the one after takes the blob
    // unchecked at open (the folder is exactly HEAD), leaving it to the check after open.
    const past = new Date(Date.now() - 10_000)
    await utimes(trip, past, past)
    for (let i = 0; i < 2; i++) await (await open()).close()

    const blob = git(dataDir, 'rev-parse', 'main:trip.md').trim()
    const loose = path.join(dataDir, 'history.git', 'objects', blob.slice(0, 2), blob.slice(2))
    await truncate(loose, 5)
    const edit = editWhenChecked(loose, trip, 'Lisbon in June: the train is booked.\n')
    undoDisk = edit.undo
    core = await open()
    stop = await attachCore(page, core)
    await page.goto(rendererServer.url)

    const chat = new ChatPage(page)
    const banner = chat.pane.getByRole('status', {
      name: 'An earlier version of a file is damaged',
    })
    await expect(banner).toContainText(
      "The history's copy of /memories/trip.md from when Cairn started is damaged on disk and could not be repaired",
    )
    await expect(banner).toContainText('The file as it is now is not affected')
    await expect(banner).toContainText('only that earlier version is lost')
    await expect(banner).not.toContainText(dataDir)
    await expect(banner).not.toContainText(os.tmpdir())
    // A loss, not news: a warning.
    await expect(banner).toHaveClass(/banner-warning/)
    expect(edit.edits()).toBe(1)
    // The edit made in the check's window is saved, as an edit outside Cairn.
    await expect
      .poll(() => gitNow(dataDir, 'show', 'main:trip.md'))
      .toBe('Lisbon in June: the train is booked.\n')
    // Another edit outside Cairn, now the page listens: its notice stacks with this one.
    await writeFile(path.join(dataDir, 'memories', 'notes.md'), 'Ask about the night train.\n')
    const outside = chat.pane.getByRole('status', { name: 'Edits made outside Cairn saved' })
    await expect(outside).toContainText('notes.md')
    await expect(chat.composer).toBeVisible()
    await shootBoth(page, { dataDir }, 'damaged-copy-notice')
    await page.emulateMedia({ colorScheme: 'light' })

    // "View in History", from the keyboard, opens that file's history; its first version is
    // marked damaged, never shown with wrong content.
    const show = banner.getByRole('button', { name: 'View in History' })
    await show.focus()
    await page.keyboard.press('Enter')
    const history = new HistoryPage(page)
    await expect(history.pane).toBeVisible()
    await expect(history.rows).toHaveCount(2)
    await history.select(history.rows.last())
    const first = history.fileDiff('trip.md')
    await expect(first.getByRole('note')).toContainText(
      "The history's copy of this version is damaged",
    )
    await expect(history.diffTable('/memories/trip.md')).toHaveCount(0)
    await expect(first).not.toContainText('Lisbon')
    // The version after it is intact: shown whole (nothing sound to compare it with), with a
    // line saying why, never marked damaged itself.
    await history.select(history.rows.first())
    const next = history.fileDiff('trip.md')
    await expect(next.getByRole('note')).toHaveText(
      'Compared with an earlier version that is damaged, so shown whole.',
    )
    await expect(next).not.toContainText("The history's copy of this version is damaged")
    await expect(
      next.getByRole('table', { name: 'Content of /memories/trip.md' }).getByRole('cell'),
    ).toHaveText(['Lisbon in June: the train is booked.'])
    await expect(history.diffTable('/memories/trip.md')).toHaveCount(0)
    await shootBoth(page, { dataDir }, 'damaged-copy-next-version')
    await page.emulateMedia({ colorScheme: 'light' })

    // Reverting it would bring the damaged version back: refused in plain words, naming the
    // file, before anything is written.
    await history.revertSelected()
    await expect(history.error).toContainText(
      "the history's copy of /memories/trip.md from before it is damaged on disk, so that version cannot be brought back. Nothing was changed.",
    )
    await expect(history.error).toContainText('Cannot undo that change')
    await expect(history.error).not.toContainText(dataDir)
    await expect(history.rows).toHaveCount(2)
    expect(git(dataDir, 'show', 'main:trip.md')).toBe('Lisbon in June: the train is booked.\n')
    expect(await readFile(trip, 'utf8')).toBe('Lisbon in June: the train is booked.\n')
    await shootBoth(page, { dataDir }, 'damaged-copy-revert-refused')
    await page.emulateMedia({ colorScheme: 'light' })

    // Dismissed, it stays dismissed while the person moves around the app.
    await banner.getByRole('button', { name: 'Dismiss' }).click()
    await expect(banner).toBeHidden()
    const memory = new MemoryPage(page)
    await memory.open()
    await history.open()
    const full = new FullHistoryPage(page)
    await full.openWithKeyboard()
    await expect(full.view).toBeVisible()
    await page.keyboard.press('Escape')
    await expect(full.view).toBeHidden()
    await chat.sidebar.getByRole('button', { name: 'New chat' }).click()
    await expect(chat.composer).toBeVisible()
    await expect(banner).toBeHidden()
    await expect(outside).toBeVisible()

    // A save and a chat turn still commit.
    await memory.open()
    await memory.openFile('trip.md')
    await expect(memory.content('trip.md')).toContainText('Lisbon in June: the train is booked.')
    await memory.editAndSave('trip.md', 'Lisbon in June: train booked, hotel next.\n')
    await expect(memory.notice).toBeVisible()
    await expect
      .poll(() => gitNow(dataDir, 'show', 'main:trip.md'))
      .toBe('Lisbon in June: train booked, hotel next.\n')
    anthropic.script(
      reply.toolUse({
        input: { command: 'create', path: '/memories/packing.md', file_text: 'Sunscreen.\n' },
      }),
      reply.text('Added a packing list.'),
    )
    await chat.send('Start a packing list.')
    await expect(chat.lastReply()).toContainText('Added a packing list.')
    await expect.poll(() => gitNow(dataDir, 'show', 'main:packing.md')).toBe('Sunscreen.\n')
    await expect(banner).toBeHidden()
    // The damaged copy is still damaged (nothing wrote other bytes under its id), and the rest
    // of the history is sound.
    expect(() => git(dataDir, 'cat-file', '-p', blob)).toThrow()
    expect(git(dataDir, 'log', '--format=%s').trim().split('\n')).toHaveLength(5)
  } finally {
    undoDisk()
    stop()
    await core?.close()
    await rm(dataDir, { recursive: true, force: true })
  }
})
