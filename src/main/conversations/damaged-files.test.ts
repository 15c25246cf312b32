/**
 * Conversation files damaged on disk, through the real core: the real SDK against the fake
 * Messages API, the real versioned memory and the real conversation store on a temp folder.
 * A file cut short is listed as unreadable and can be deleted (kept aside, not destroyed); a
 * block of a type Cairn does not know (a newer build's) is skipped, never sent, and kept.
 */
import { execFileSync } from 'node:child_process'
import { copyFile, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { reply } from '../../../test/fixtures/fake-anthropic'
import { coreThroughFakeApi } from '../core-test-support'

const cairn = coreThroughFakeApi({ prefix: 'cairn-damaged-conv-', quiet: true })
const { call, fileOf, reopen } = cairn

/** One finished turn; resolves with its conversation's id. */
const turn = async (conversationId: string | null, text: string) =>
  (await cairn.turn(conversationId, text)).conversationId

describe('damaged conversation files', () => {
  it('lists a file cut short as unreadable, under its recovered title, and keeps it aside on delete', async () => {
    cairn.fake.script(
      reply.toolUse({
        input: { command: 'create', path: '/memories/lisbon.md', file_text: 'Trip in May.\n' },
      }),
      reply.text('Noted.'),
    )
    const damaged = await turn(null, 'Trip to Lisbon')
    cairn.fake.script(reply.text('ok'))
    const sound = await turn(null, 'Tax notes')
    const { updatedAt } = (await call('conversations:get', { id: damaged }))!
    await reopen()
    const whole = await readFile(fileOf(damaged), 'utf8')
    await writeFile(fileOf(damaged), whole.slice(0, 200))

    const list = await call('conversations:list', {})
    expect(list.map((hit) => hit.conversation.id).sort()).toEqual([damaged, sound].sort())
    const entry = list.find((hit) => hit.conversation.id === damaged)!.conversation
    expect(entry).toMatchObject({ title: 'Trip to Lisbon', unreadable: true, updatedAt })
    expect(list.find((hit) => hit.conversation.id === sound)!.conversation.unreadable).toBe(
      undefined,
    )
    // A search by its recovered title finds it too.
    expect(
      (await call('conversations:list', { query: 'lisbon' })).map((h) => h.conversation.id),
    ).toEqual([damaged])

    const opened = await cairn.core.dispatch('conversations:get', { id: damaged })
    expect(opened).toMatchObject({ ok: false, error: { code: 'conversation-corrupt' } })
    expect(JSON.stringify(opened)).not.toContain(cairn.dataDir)

    // The memory commit that conversation made stays linked to it in History.
    const commits = await call('history:log', { offset: 0, limit: 10, conversationId: damaged })
    expect(commits.entries.map((e) => e.command)).toEqual(['create'])

    await call('conversations:delete', { id: damaged })
    expect((await call('conversations:list', {})).map((h) => h.conversation.id)).toEqual([sound])
    // Kept aside, byte for byte, not destroyed; the listing does not take the folder for a file.
    const kept = path.join(cairn.dataDir, 'conversations', 'cairn-damaged', `${damaged}.json`)
    expect(await readFile(kept, 'utf8')).toBe(whole.slice(0, 200))
    await expect(stat(fileOf(damaged))).rejects.toMatchObject({ code: 'ENOENT' })
    expect(await cairn.core.dispatch('conversations:get', { id: damaged })).toMatchObject({
      ok: false,
      error: { code: 'conversation-not-found' },
    })
  })

  it('lists a file that is not JSON at all under a fallback title and its file time', async () => {
    cairn.fake.script(reply.text('ok'))
    const id = await turn(null, 'hello')
    await reopen()
    await writeFile(fileOf(id), '\u0000\u0000\u0000garbage')
    const list = await call('conversations:list', {})
    expect(list).toHaveLength(1)
    const { mtimeMs } = await stat(fileOf(id))
    expect(list[0]!.conversation).toMatchObject({
      id,
      title: 'Unreadable conversation',
      unreadable: true,
      updatedAt: mtimeMs,
    })
    // Deleting a second damaged file of the same id does not overwrite the first one kept.
    await call('conversations:delete', { id })
    await writeFile(fileOf(id), 'second')
    await call('conversations:delete', { id })
    const aside = path.join(cairn.dataDir, 'conversations', 'cairn-damaged')
    expect((await readdir(aside)).sort()).toEqual([`${id}-2.json`, `${id}.json`])
    expect(await readFile(path.join(aside, `${id}-2.json`), 'utf8')).toBe('second')
  })

  it('lists a copy under another name (its id inside differs) as unreadable, and keeps it aside on delete', async () => {
    cairn.fake.script(reply.text('ok'))
    const original = await turn(null, 'Trip to Kyoto')
    await reopen()
    // A backup copy restored under another file name: a valid file whose id is not its name's.
    const copy = `c_${'f'.repeat(32)}`
    const bytes = await readFile(fileOf(original), 'utf8')
    await copyFile(fileOf(original), fileOf(copy))

    const list = await call('conversations:list', {})
    expect(list.map((hit) => [hit.conversation.id, hit.conversation.unreadable]).sort()).toEqual(
      [
        [copy, true],
        [original, undefined],
      ].sort(),
    )
    expect(await cairn.core.dispatch('conversations:get', { id: copy })).toMatchObject({
      ok: false,
      error: { code: 'conversation-corrupt' },
    })

    await call('conversations:delete', { id: copy })
    const kept = path.join(cairn.dataDir, 'conversations', 'cairn-damaged', `${copy}.json`)
    expect(await readFile(kept, 'utf8')).toBe(bytes)
    await expect(stat(fileOf(copy))).rejects.toMatchObject({ code: 'ENOENT' })
    // The original is untouched.
    expect((await call('conversations:list', {})).map((h) => h.conversation.id)).toEqual([original])
    expect(await readFile(fileOf(original), 'utf8')).toBe(bytes)
  })

  it('keeps a damaged file aside in another folder when a file holds the name cairn-damaged', async () => {
    cairn.fake.script(reply.text('ok'))
    const id = await turn(null, 'hello')
    await reopen()
    await writeFile(fileOf(id), 'garbage')
    const blocker = path.join(cairn.dataDir, 'conversations', 'cairn-damaged')
    await writeFile(blocker, 'not a folder')

    const deleted = await cairn.core.dispatch('conversations:delete', { id })
    expect(deleted).toMatchObject({ ok: true })
    const kept = path.join(cairn.dataDir, 'conversations', 'cairn-damaged-2', `${id}.json`)
    expect(await readFile(kept, 'utf8')).toBe('garbage')
    expect(await readFile(blocker, 'utf8')).toBe('not a folder')
    expect(await call('conversations:list', {})).toEqual([])
  })

  it('refuses in words, naming no host path, when every kept-folder name is taken by a file', async () => {
    cairn.fake.script(reply.text('ok'))
    const id = await turn(null, 'hello')
    await reopen()
    await writeFile(fileOf(id), 'garbage')
    const conversations = path.join(cairn.dataDir, 'conversations')
    for (let n = 1; n <= 20; n++) {
      await writeFile(
        path.join(conversations, n === 1 ? 'cairn-damaged' : `cairn-damaged-${n}`),
        'x',
      )
    }
    const deleted = await cairn.core.dispatch('conversations:delete', { id })
    expect(deleted).toMatchObject({
      ok: false,
      error: { code: 'conversation-corrupt', message: expect.stringContaining('Move those files') },
    })
    expect(JSON.stringify(deleted)).not.toContain(cairn.dataDir)
    // Nothing changed: the damaged file is still there, still listed.
    expect(await readFile(fileOf(id), 'utf8')).toBe('garbage')
    expect((await call('conversations:list', {}))[0]!.conversation.unreadable).toBe(true)
  })

  it('keeps aside a file damaged after it was loaded, before saving over it or deleting it', async () => {
    cairn.fake.script(reply.text('ok'))
    const id = await turn(null, 'hello there')
    await call('conversations:get', { id })
    const whole = await readFile(fileOf(id), 'utf8')
    // Another program cuts the file short while Cairn holds it.
    await writeFile(fileOf(id), whole.slice(0, 100))

    await call('conversations:rename', { id, title: 'Renamed' })
    const aside = path.join(cairn.dataDir, 'conversations', 'cairn-damaged')
    expect(await readFile(path.join(aside, `${id}.json`), 'utf8')).toBe(whole.slice(0, 100))
    // The conversation itself lives on from the copy Cairn held.
    const saved = JSON.parse(await readFile(fileOf(id), 'utf8'))
    expect(saved.title).toBe('Renamed')
    expect(saved.messages).toEqual(JSON.parse(whole).messages)

    // Damaged again, then deleted: kept aside too, not removed.
    await writeFile(fileOf(id), 'cut')
    await call('conversations:delete', { id })
    expect(await readFile(path.join(aside, `${id}-2.json`), 'utf8')).toBe('cut')
    await expect(stat(fileOf(id))).rejects.toMatchObject({ code: 'ENOENT' })

    // A file changed on disk that is still whole is deleted as before (nothing kept aside).
    cairn.fake.script(reply.text('ok'))
    const other = await turn(null, 'second')
    await call('conversations:get', { id: other })
    const file = JSON.parse(await readFile(fileOf(other), 'utf8'))
    await writeFile(fileOf(other), JSON.stringify({ ...file, title: 'Edited by hand' }))
    await call('conversations:delete', { id: other })
    await expect(stat(fileOf(other))).rejects.toMatchObject({ code: 'ENOENT' })
    expect((await readdir(aside)).sort()).toEqual([`${id}-2.json`, `${id}.json`])
  })

  it('skips a block of an unknown type: shown without it, never sent, kept when saved again', async () => {
    cairn.fake.script(
      reply.toolUse({
        input: { command: 'create', path: '/memories/tax.md', file_text: 'Due in April.\n' },
      }),
      reply.text('Saved it.'),
    )
    const id = await turn(null, 'Tax notes')
    await reopen()
    const file = JSON.parse(await readFile(fileOf(id), 'utf8'))
    const thinking = { type: 'thinking', thinking: 'Let me think', signature: 'sig' }
    const firstReply = file.messages.findIndex((m: { role: string }) => m.role === 'assistant')
    file.messages[firstReply].content.unshift(thinking)
    await writeFile(fileOf(id), JSON.stringify(file))

    const list = await call('conversations:list', {})
    expect(list.map((hit) => [hit.conversation.title, hit.conversation.unreadable])).toEqual([
      ['Tax notes', undefined],
    ])
    const conversation = await call('conversations:get', { id })
    const shown = conversation.messages[firstReply]!
    expect(shown.content.map((b) => b.type)).toEqual(['tool_use'])

    // Continuing the conversation: the API never sees the unknown block.
    cairn.fake.script(reply.text('Still there.'))
    await turn(id, 'Is it saved?')
    const sent = cairn.fake.messageRequests().at(-1)!.body!.messages!
    expect(JSON.stringify(sent)).not.toContain('thinking')
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])

    // Saved again with the new turn: the newer build's block is still in its place.
    const saved = JSON.parse(await readFile(fileOf(id), 'utf8'))
    expect(saved.messages[firstReply].content[0]).toEqual(thinking)
    expect(saved.messages[firstReply].content.map((b: { type: string }) => b.type)).toEqual([
      'thinking',
      'tool_use',
    ])
    expect(saved.messages).toHaveLength(file.messages.length + 2)
    await reopen()
    expect((await call('conversations:get', { id })).messages).toHaveLength(
      file.messages.length + 2,
    )
    // Its memory commit still names it (git CLI as second opinion).
    const log = execFileSync('git', ['--git-dir', path.join(cairn.dataDir, 'history.git'), 'log'], {
      encoding: 'utf8',
    })
    expect(log).toContain(id)
  })

  it('still refuses a block of a known type that is not of its shape', async () => {
    cairn.fake.script(reply.text('ok'))
    const id = await turn(null, 'hello')
    await reopen()
    const file = JSON.parse(await readFile(fileOf(id), 'utf8'))
    file.messages[0].content[0] = { type: 'text' }
    await writeFile(fileOf(id), JSON.stringify(file))
    expect(await cairn.core.dispatch('conversations:get', { id })).toMatchObject({
      ok: false,
      error: { code: 'conversation-corrupt' },
    })
    expect((await call('conversations:list', {}))[0]!.conversation.unreadable).toBe(true)
  })
})
