import { open, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Page } from '@playwright/test'
import type { Core } from '../src/main/core'
import type { RequestChannel } from '../src/shared/contract'
import { attachCore, expect, test, type Cairn } from './fixtures/harness'
import { ChatPage } from './pages/chat.page'

// A dismissed notice stays dismissed, everywhere: after a reload, in a window opened later,
// and at once in a window already open (each on the same core, as two Electron windows are).
// The memory notices were dismissed in the window's state only, and no dismissal reached
// another open window.

/** The notices a window shows in its chat. */
function shown(page: Page) {
  const chat = page.getByRole('main', { name: 'Chat' })
  const tooLarge = (name: string) =>
    chat
      .getByRole('status', { name: 'A file is not versioned' })
      .filter({ hasText: `/memories/${name} is not versioned` })
  return {
    recording: tooLarge('recording.wav'),
    video: tooLarge('video.mp4'),
    outside: chat.getByRole('status', { name: 'Edits made outside Cairn saved' }),
  }
}

/**
 * Dismisses one too-large notice and the outside-edit report in `here`'s window, and waits
 * until both are gone there and the core answers no report.
 */
async function dismissBoth(here: ReturnType<typeof shown>, core: Core): Promise<void> {
  await here.recording.getByRole('button', { name: 'Dismiss' }).click()
  await here.outside.getByRole('button', { name: 'Dismiss' }).click()
  await expect(here.recording).toBeHidden()
  await expect(here.outside).toBeHidden()
  await expect
    .poll(async () => core.dispatch('app:recoveries', undefined))
    .toEqual({ ok: true, value: [] })
}

/**
 * Made outside Cairn while it runs: a note (saved as its own change, a recovery report) and
 * two files too large to version (a memory notice each).
 */
async function editOutside(dataDir: string): Promise<void> {
  await writeFile(path.join(dataDir, 'memories', 'todo.md'), 'buy milk\n')
  for (const name of ['recording.wav', 'video.mp4']) await tooLargeOutside(dataDir, name)
}

/**
 * `core` with its answers on `channels` held: each is made at once, when the window asks, and
 * reaches the window only once `release()` is called, after what the test does meanwhile.
 * `asked` settles once every one of `channels` was asked.
 */
function holdingAnswers(core: Core, channels: ReadonlyArray<RequestChannel>) {
  let release = (): void => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  const waiting = new Set<unknown>(channels)
  let allAsked = (): void => {}
  const asked = new Promise<void>((resolve) => (allAsked = resolve))
  const held: Core = {
    ...core,
    dispatch: async (channel, payload) => {
      const answer = await core.dispatch(channel, payload)
      if (!channels.includes(channel as RequestChannel)) return answer
      waiting.delete(channel)
      if (waiting.size === 0) allAsked()
      await released
      return answer
    },
  }
  return { core: held, asked, release }
}

/** Makes `name` outside Cairn, too large to version (sparse: instant, no disk space). */
async function tooLargeOutside(dataDir: string, name: string): Promise<void> {
  const big = await open(path.join(dataDir, 'memories', name), 'w')
  await big.truncate(40 * 1024 * 1024)
  await big.close()
}

test('a dismissed notice is not shown again after a reload or in a window opened later', async ({
  page,
  cairn,
}) => {
  await cairn.open(page)
  await editOutside(cairn.dataDir)
  const here = shown(page)
  await expect(here.recording).toBeVisible()
  await expect(here.video).toBeVisible()
  await expect(here.outside).toContainText('todo.md was edited outside Cairn')
  await dismissBoth(here, cairn.core)

  // Reloaded, or opened later, a window shows the notice still standing (so it has read the
  // notices) and not the dismissed one; the reports it reads are none.
  await page.reload()
  const later = await page.context().newPage()
  await cairn.open(later)
  for (const window of [shown(page), shown(later)]) {
    await expect(window.video).toBeVisible()
    await expect(window.recording).toHaveCount(0)
    await expect(window.outside).toHaveCount(0)
  }
})

test('a notice dismissed in one window is hidden at once in another already open', async ({
  page,
  cairn,
}) => {
  const other = await twoWindowsShowing(page, cairn)
  const here = shown(page)
  const there = shown(other)

  // Each dismissed in one window is gone from the other without anything done there, and
  // only that one.
  await here.recording.getByRole('button', { name: 'Dismiss' }).click()
  await expect(here.recording).toBeHidden()
  await expect(there.recording).toBeHidden()
  await expect(there.video).toBeVisible()
  await there.outside.getByRole('button', { name: 'Dismiss' }).click()
  await expect(there.outside).toBeHidden()
  await expect(here.outside).toBeHidden()
  await expect(here.video).toBeVisible()
})

// A window still loading asks the core for its notices and reports; a dismissal made in another
// window after the core answered, and told before the answer reached the window, was undone by
// that answer: the window showed the dismissed notice and report until it was reloaded
// (redges2 R1). The window here gets the core's answers only once the dismissal was told.
test('a window still loading does not show what another dismissed while its answer was on the way', async ({
  page,
  cairn,
}) => {
  await cairn.open(page)
  await editOutside(cairn.dataDir)
  const here = shown(page)
  for (const notice of [here.recording, here.video, here.outside])
    await expect(notice).toBeVisible()

  // Answered before the dismissal; received after it was told.
  const held = holdingAnswers(cairn.core, ['memory:notices', 'app:recoveries'])
  const later = await page.context().newPage()
  const detach = await attachCore(later, held.core)
  try {
    await later.goto(page.url())
    await held.asked
    await dismissBoth(here, cairn.core)
    // The events reach the loading window (its page answers in order) before its answers do.
    await later.evaluate(() => 0)
    held.release()
    const there = shown(later)
    await expect(there.video).toBeVisible()
    await expect(there.recording).toHaveCount(0)
    await expect(there.outside).toHaveCount(0)
  } finally {
    held.release()
    detach()
  }
})

// Its file's notice raised again after it was dealt with reads word for word as the first did
// (here the file moved away, its notice with it, and another file too large took its name). A
// dismissal of the first, on its way from one window while that happened, took the second too:
// one Dismiss, and a banner the person had not dismissed was gone from every window and after
// every reload. A notice is now dismissed by the id the core raised it with.
test('one Dismiss takes one notice: another that reads the same stays, here, in another window and after a reload', async ({
  page,
  cairn,
}) => {
  await cairn.open(page)
  // The window `here` sends its first dismissal only once the test lets it go.
  let release = (): void => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  let sent = (): void => {}
  const dismissing = new Promise<void>((resolve) => (sent = resolve))
  let landed: ReturnType<Core['dispatch']> | null = null
  const held: Core = {
    ...cairn.core,
    dispatch: async (channel, payload) => {
      if (channel !== 'memory:dismissNotice' || landed) return cairn.core.dispatch(channel, payload)
      landed = released.then(() => cairn.core.dispatch(channel, payload))
      sent()
      return landed
    },
  }
  const here = await page.context().newPage()
  const detach = await attachCore(here, held)
  try {
    await here.goto(page.url())
    const tooLarge = (window: Page, name: string) =>
      window
        .getByRole('main', { name: 'Chat' })
        .getByRole('status', { name: 'A file is not versioned' })
        .filter({ hasText: `/memories/${name} is not versioned` })
    await tooLargeOutside(cairn.dataDir, 'big.log')
    for (const window of [page, here]) await expect(tooLarge(window, 'big.log')).toHaveCount(1)
    const first = await tooLarge(page, 'big.log').textContent()

    await tooLarge(here, 'big.log').getByRole('button', { name: 'Dismiss' }).click()
    await dismissing
    await expect(tooLarge(here, 'big.log')).toHaveCount(0)
    // Meanwhile the file is moved away, and another file too large takes its name.
    expect(
      await cairn.core.dispatch('memory:rename', {
        from: '/memories/big.log',
        to: '/memories/moved.log',
      }),
    ).toMatchObject({ ok: true })
    await tooLargeOutside(cairn.dataDir, 'big.log')
    for (const window of [page, here]) {
      await expect(tooLarge(window, 'moved.log')).toHaveCount(1)
      await expect(tooLarge(window, 'big.log')).toHaveCount(1)
    }
    // Two banners that read the same, the second raised after the first was dismissed.
    expect(await tooLarge(here, 'big.log').textContent()).toBe(first)

    release()
    expect(await landed).toEqual({ ok: true, value: null })
    // What the core told of the dismissal reaches each page (they answer in order) before this.
    for (const window of [page, here]) await window.evaluate(() => 0)
    // The notice dismissed goes where its file went (it is the same notice, with its id: it
    // came back there, rnotices26 R1); the other file's, which reads the same, stays.
    for (const window of [page, here]) {
      await expect(tooLarge(window, 'moved.log')).toHaveCount(0)
      await expect(tooLarge(window, 'big.log')).toHaveCount(1)
    }
    await here.reload()
    await expect(tooLarge(here, 'big.log')).toHaveCount(1)
    await expect(tooLarge(here, 'moved.log')).toHaveCount(0)
    expect(await cairn.core.dispatch('memory:notices', undefined)).toMatchObject({
      ok: true,
      value: [{ path: '/memories/big.log' }],
    })

    // Dismissed in its turn, it goes from every window.
    await tooLarge(page, 'big.log').getByRole('button', { name: 'Dismiss' }).click()
    for (const window of [page, here]) await expect(tooLarge(window, 'big.log')).toHaveCount(0)
    expect(await cairn.core.dispatch('memory:notices', undefined)).toEqual({ ok: true, value: [] })
  } finally {
    release()
    detach()
  }
})

// A window still loading hears the notices raised while the core's answer is on its way; that
// answer, made before them, holds the notice they took the place of. It replaced the newer one
// in the window: a secret taken out of the file and brought in anew by a later outside edit
// showed the first one's version, and its Dismiss named a notice the core no longer kept, so the
// new one stayed in every other window and after a reload (rnotices26 R2).
test('a window still loading keeps the notice told while its answer was on the way, not the older one that answer holds', async ({
  page,
  cairn,
}) => {
  const token = (tail: string) => ['ghp', `wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0p${tail}`].join('_')
  await cairn.core.dispatch('memory:write', { path: '/memories/notes.md', content: 'notes\n' })
  await cairn.open(page)
  const secretIn = (window: Page) =>
    window
      .getByRole('main', { name: 'Chat' })
      .getByRole('status', { name: 'A secret was found in your memory' })
  const file = path.join(cairn.dataDir, 'memories', 'notes.md')
  const secretOutside = async (tail: string): Promise<string> => {
    await writeFile(file, `notes\ndeploy token: ${token(tail)}\n`)
    let version = ''
    await expect
      .poll(async () => {
        const answer = await cairn.core.dispatch('memory:notices', undefined)
        const notices = answer.ok
          ? (answer.value as ReadonlyArray<{ commitOid: string | null }>)
          : []
        version = notices.find((n) => n.commitOid)?.commitOid?.slice(0, 7) ?? ''
        return version
      })
      .not.toBe('')
    return version
  }
  const first = await secretOutside('INUx')
  await expect(secretIn(page)).toContainText(`version ${first}`)
  // Raised before the window loads: only its answer tells it of this one.
  await tooLargeOutside(cairn.dataDir, 'recording.wav')
  await expect(shown(page).recording).toBeVisible()

  // Answered before the second secret; received after it was told.
  const held = holdingAnswers(cairn.core, ['memory:notices'])
  const later = await page.context().newPage()
  const detach = await attachCore(later, held.core)
  try {
    await later.goto(page.url())
    await held.asked
    expect(
      await cairn.core.dispatch('memory:removeSecrets', { path: '/memories/notes.md' }),
    ).toMatchObject({ ok: true })
    const second = await secretOutside('qRSv')
    expect(second).not.toBe(first)
    await expect(secretIn(later)).toContainText(`version ${second}`)
    held.release()
    // The answer came (the notice only it told shows), and left the newer one as it was.
    await expect(shown(later).recording).toBeVisible()
    for (const window of [page, later]) {
      await expect(secretIn(window)).toHaveCount(1)
      await expect(secretIn(window)).toContainText(`version ${second}`)
    }
    // Its Dismiss takes it, everywhere.
    await secretIn(later).getByRole('button', { name: 'Dismiss' }).click()
    for (const window of [page, later]) await expect(secretIn(window)).toHaveCount(0)
    await later.reload()
    await expect(shown(later).recording).toBeVisible()
    await expect(secretIn(later)).toHaveCount(0)
  } finally {
    held.release()
    detach()
  }
})

// A banner dismissed with the focus inside it took the focus with it: it fell to the page's
// body, and a keyboard user had lost their place (review R4). It goes to the banner that
// followed, else the one before, else the chat's message box; and only from the banner that
// went.

/** The Dismiss buttons of the chat's notices, top to bottom. */
function dismissButtons(page: Page) {
  return page
    .getByRole('main', { name: 'Chat' })
    .getByRole('region', { name: 'Notices' })
    .getByRole('button', { name: 'Dismiss' })
}

/**
 * Opens `page` and a second window on the same core, edits outside Cairn (`editOutside`), and
 * waits until each window shows the three notices and no other. Returns the second window.
 */
async function twoWindowsShowing(page: Page, cairn: Cairn): Promise<Page> {
  await cairn.open(page)
  const other = await page.context().newPage()
  await cairn.open(other)
  await editOutside(cairn.dataDir)
  for (const window of [page, other]) {
    const notices = shown(window)
    await expect(notices.recording).toBeVisible()
    await expect(notices.video).toBeVisible()
    await expect(notices.outside).toContainText('todo.md was edited outside Cairn')
    await expect(dismissButtons(window)).toHaveCount(3)
  }
  return other
}

/** Which of `page`'s notices' Dismiss buttons (by its banner's text) has the focus, if one. */
async function focusedBanner(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const focused = document.activeElement
    if (focused?.getAttribute('aria-label') !== 'Dismiss') return null
    return focused.closest('.banner')?.textContent ?? null
  })
}

test('dismissing a notice by keyboard hands the focus to the next notice, then to the message box', async ({
  page,
  cairn,
}) => {
  await cairn.open(page)
  await editOutside(cairn.dataDir)
  const buttons = dismissButtons(page)
  await expect(buttons).toHaveCount(3)
  const texts = await page
    .getByRole('region', { name: 'Notices' })
    .locator('.banner')
    .allTextContents()

  // The middle one: the focus goes to the one that followed it.
  await buttons.nth(0).focus()
  await page.keyboard.press('Tab')
  await expect(buttons.nth(1)).toBeFocused()
  await page.keyboard.press('Enter')
  await expect(buttons).toHaveCount(2)
  expect(await focusedBanner(page)).toBe(texts[2])
  // The last one: to the one before it.
  await page.keyboard.press('Enter')
  await expect(buttons).toHaveCount(1)
  expect(await focusedBanner(page)).toBe(texts[0])
  // None left: to the message box, where typing goes on.
  await page.keyboard.press('Enter')
  await expect(buttons).toHaveCount(0)
  const chat = new ChatPage(page)
  await expect(chat.composer).toBeFocused()
  await page.keyboard.type('still here')
  await expect(chat.composer).toHaveValue('still here')
})

test('a notice dismissed in another window hands the focus on only if the focus was inside it', async ({
  page,
  cairn,
}) => {
  const other = await twoWindowsShowing(page, cairn)
  const here = dismissButtons(page)
  const there = dismissButtons(other)
  const texts = await page
    .getByRole('region', { name: 'Notices' })
    .locator('.banner')
    .allTextContents()

  // The focus is in the first notice here; it is dismissed there: the next one has it here.
  await here.nth(0).focus()
  await there.nth(0).click()
  await expect(here).toHaveCount(2)
  expect(await focusedBanner(page)).toBe(texts[1])

  // The focus is in the message box here; a notice dismissed there leaves it in place.
  const chat = new ChatPage(page)
  await chat.composer.focus()
  await there.nth(0).click()
  await expect(here).toHaveCount(1)
  await expect(chat.composer).toBeFocused()

  // The focus is in the last notice here; it is dismissed there: the message box has it.
  await here.nth(0).focus()
  await there.nth(0).click()
  await expect(here).toHaveCount(0)
  await expect(chat.composer).toBeFocused()
})

// polish26: a too-large file deleted outside Cairn kept its notice in every window for the run,
// naming a file no longer there (only a move took it down).
test('a too-large file deleted outside Cairn takes its notice down in every window', async ({
  page,
  cairn,
}) => {
  const other = await twoWindowsShowing(page, cairn)
  await rm(path.join(cairn.dataDir, 'memories', 'recording.wav'))
  for (const window of [page, other]) {
    await expect(shown(window).recording).toHaveCount(0)
    // Only that one: the other file's notice and the report stay.
    await expect(shown(window).video).toBeVisible()
    await expect(shown(window).outside).toBeVisible()
  }
  // The core no longer answers it: a window reloaded does not show it again.
  await page.reload()
  await expect(shown(page).video).toBeVisible()
  await expect(shown(page).recording).toHaveCount(0)
})
