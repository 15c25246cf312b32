import { nodeDisk, setDisk, type Disk } from '../src/main/lib/disk'
import { reply } from '../test/fixtures/fake-anthropic'
import { expect, test } from './fixtures/harness'
import { shoot } from './fixtures/screens'
import { ChatPage } from './pages/chat.page'
import { MemoryPage } from './pages/memory.page'
import { SettingsPage } from './pages/settings.page'

const KEY = 'sk-ant-e2e-faults-key'

/**
 * A full disk for the core in this process, through its one file-system seam: every write of
 * data (and every new folder) fails with ENOSPC until the returned function is called.
 */
function fillDisk(): () => void {
  const nospace = () =>
    Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
  const full: Disk = {
    ...nodeDisk,
    writeSync: (fd, data, position) => {
      if (data.byteLength > 0) throw nospace()
      return nodeDisk.writeSync(fd, data, position)
    },
    write: async (fd, data, position) => {
      if (data.byteLength > 0) throw nospace()
      return nodeDisk.write(fd, data, position)
    },
    writeFileSync: (file, data, options) => {
      if (data.length > 0) throw nospace()
      nodeDisk.writeFileSync(file, data, options)
    },
    appendFileSync: () => {
      throw nospace()
    },
    mkdirSync: () => {
      throw nospace()
    },
    promises: {
      ...nodeDisk.promises,
      writeFile: async () => {
        throw nospace()
      },
    },
  }
  return setDisk(full)
}

for (const scheme of ['light', 'dark'] as const) {
  test(`a reply that cannot be saved stays on screen and says so (${scheme})`, async ({
    page,
    cairn,
    anthropic,
  }) => {
    await cairn.core.dispatch('settings:setApiKey', { key: KEY })
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    anthropic.script(
      reply.text('Granite is an igneous rock, mostly quartz and feldspar.', { hold }),
    )
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const chat = new ChatPage(page)
    await chat.send('What is granite?')
    await expect(chat.lastReply()).toContainText('Granite')

    // The disk fills while Claude answers: the prompt was saved, the reply cannot be.
    const free = fillDisk()
    try {
      release()
      await expect(chat.errorBanner).toContainText('The disk is full')
      await expect(chat.errorBanner).toContainText('reply could not be saved')
      await expect(chat.composer).toBeEnabled()
      await expect(chat.lastReply()).toContainText(
        'Granite is an igneous rock, mostly quartz and feldspar.',
      )
      await shoot(page, cairn, `chat-unsaved-reply-${scheme}`)

      // Sending now says the disk is full too, and keeps what was typed.
      await chat.send('And basalt?')
      await expect(chat.errorBanner).toContainText('The disk is full')
      await expect(chat.errorBanner).not.toContainText('Something went wrong')
      await expect(chat.composer).toHaveValue('And basalt?')
    } finally {
      free()
    }
  })
}

test('a key pasted with an invisible character inside is refused with the reason', async ({
  page,
  cairn,
}) => {
  await cairn.open(page)
  const settings = new SettingsPage(page)
  await settings.open()
  await settings.enterKey('sk-ant-api03-abc\u200bdef')
  await expect(settings.keyProblem()).toContainText('The key was not saved')
  await expect(settings.keyProblem()).toContainText('invisible zero-width character')
  await expect(settings.keyStatus).toContainText('Not set')

  // Around the key, such characters are simply left out.
  await settings.enterKey('\u200bsk-ant-api03-abcdef\u200b')
  await expect(settings.keyNotice()).toContainText('API key saved.')
  await expect(settings.keyStatus).toContainText('Set')
})

for (const scheme of ['light', 'dark'] as const) {
  test(`a reply or memory file markdown cannot format shows as plain text, never a blank window (${scheme})`, async ({
    page,
    cairn,
    anthropic,
  }) => {
    await cairn.core.dispatch('settings:setApiKey', { key: KEY })
    // Too deep for the parser: a line of 4,000 ">" (it overflowed the stack and blanked the window).
    const deep = `${'>'.repeat(4000)} the end`
    // Thousands of nested emphasis marks: the parser pairs them in quadratic time (5,000 pairs
    // froze the window for 6 s, and a streaming reply is formatted again at every delta).
    const marks = `${'*_'.repeat(1000)}x${'_*'.repeat(1000)}`
    anthropic.script(reply.text(deep), reply.text('Back to **normal**.'), reply.text(marks))
    await page.emulateMedia({ colorScheme: scheme })
    await cairn.open(page)
    const chat = new ChatPage(page)

    await chat.send('Quote me deeply.')
    await expect(chat.lastReply()).toContainText('nests quotes or lists too deeply to format')
    await expect(chat.lastReply()).toContainText('>>>> the end')
    await expect(chat.composer).toBeEnabled()
    await shoot(page, cairn, `chat-plain-reply-${scheme}`)

    await chat.send('And now?')
    await expect(chat.replies()).toHaveCount(2)
    await expect(chat.lastReply().getByText('normal', { exact: true })).toBeVisible()
    // The earlier reply still shows, read back from the store.
    await expect(chat.replies().first()).toContainText('the end')

    await chat.send('Emphasise it.')
    await expect(chat.replies()).toHaveCount(3)
    await expect(chat.lastReply()).toContainText('too many *, _, ~ or [ marks to format quickly')
    await expect(chat.lastReply()).toContainText('*_*_*_x_*_*_*')
    await expect(chat.composer).toBeEnabled()

    // Thousands of nested "**" in two runs of marks, in a memory file's preview: the parser took
    // 15 s, then the renderer's stack overflowed and React formatted it again (30 s of a frozen
    // window). Each run now counts for the levels it nests, so it shows plain at once.
    const failing = `${'**'.repeat(5000)}bold${'**'.repeat(5000)}`
    const written = await cairn.core.dispatch('memory:write', {
      path: '/memories/bold.md',
      content: `${failing}\n`,
    })
    expect(written.ok).toBe(true)
    const memory = new MemoryPage(page)
    await memory.open()
    await memory.openFile('bold.md')
    await memory.fileActions().getByRole('button', { name: 'Preview' }).click()
    await expect(memory.content('bold.md')).toContainText(
      'too many *, _, ~ or [ marks to format quickly',
    )
    await expect(memory.content('bold.md')).toContainText('****bold****')
    await expect(chat.replies().nth(1).getByText('normal', { exact: true })).toBeVisible()
    await shoot(page, cairn, `memory-plain-preview-${scheme}`)
    // Refused before the parser runs: nothing overflowed, nothing was logged.
    expect(cairn.pageErrors).toEqual([])
  })
}
