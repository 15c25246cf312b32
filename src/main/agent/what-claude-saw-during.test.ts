/**
 * "Memory at this reply" holds what Claude's views read when another program saves a memory
 * file while the turn runs (probe31b): the view commits that edit before it reads, and the
 * reply records the commit its results read at. Checked through the channels the window uses
 * (`conversations:get`, `memory:read { at }`) and against `git show`, with the real SDK on the
 * fake Messages API and the real core.
 */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { reply } from '../../../test/fixtures/fake-anthropic'
import type { AgentEvent, StoredMessage } from '../../shared/types'
import { coreThroughFakeApi } from '../core-test-support'

const cairn = coreThroughFakeApi({ prefix: 'cairn-saw-during-' })
const { call } = cairn

const git = (...args: string[]): string =>
  execFileSync('git', ['--git-dir', path.join(cairn.dataDir, 'history.git'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cairn.dataDir },
  })

/** Saves `text` to memory file `name` as another program would, behind Cairn's back. */
const saveOutside = (name: string, text: string): void =>
  writeFileSync(path.join(cairn.dataDir, 'memories', name), text)

/** A hold on a scripted reply, and its release. */
function holdOf(): { hold: Promise<void>; release: () => void } {
  let release: () => void = () => {}
  const hold = new Promise<void>((resolve) => (release = resolve))
  return { hold, release }
}

const replies = (messages: ReadonlyArray<StoredMessage>) =>
  messages.filter((message) => message.role === 'assistant')

const results = (events: ReadonlyArray<AgentEvent>) =>
  events.flatMap((e) => (e.type === 'tool-result' ? [e] : []))

/** The file at `at` as the window reads it, and as `git show` does. */
async function bothReads(file: string, at: string) {
  const read = await call('memory:read', { path: `/memories/${file}`, at })
  return { window: read.text, git: git('show', `${at}:${file}`) }
}

describe('what Claude saw, while another program saves memory', () => {
  it('records the commit a view read at when the file was saved outside Cairn before it', async () => {
    await call('memory:write', { path: '/memories/a.md', content: 'The user likes tea.\n' })
    const { hold, release } = holdOf()
    cairn.fake.script(
      reply.toolUse({ input: { command: 'view', path: '/memories/a.md' } }, { hold }),
      reply.text('Coffee, then.'),
    )
    const { conversationId, turnId } = await cairn.send(null, 'What do I drink?')
    await cairn.until(() =>
      cairn.events.some((e) => e.turnId === turnId && e.type === 'turn-started'),
    )
    saveOutside('a.md', 'The user likes coffee now.\n')
    release()
    const events = await cairn.finished(turnId)
    const [view] = results(events)
    expect(view?.isError).toBe(false)
    expect(view?.content).toContain('The user likes coffee now.')

    const stored = replies((await call('conversations:get', { id: conversationId })).messages)
    expect(stored).toHaveLength(2)
    for (const message of stored) {
      expect(message.viewed).toEqual(['/memories/a.md'])
      const at = message.memoryAt as string
      // What the view returned is the version there, for the window and for git alike.
      expect(await bothReads('a.md', at)).toEqual({
        window: 'The user likes coffee now.\n',
        git: 'The user likes coffee now.\n',
      })
      // Saved as made outside Cairn, on its own, never as Claude's.
      expect(git('log', '-1', '--format=%an|%s', at).trim()).toBe(
        'Cairn|Changes made outside Cairn',
      )
    }
  })

  it('gives each reply the commit its own view read at when the file changed between two views', async () => {
    await call('memory:write', { path: '/memories/a.md', content: 'The user likes tea.\n' })
    const { hold, release } = holdOf()
    cairn.fake.script(
      reply.toolUse({ input: { command: 'view', path: '/memories/a.md' } }),
      reply.toolUse({ input: { command: 'view', path: '/memories/a.md' } }, { hold }),
      reply.text('It changed.'),
    )
    const { conversationId, turnId } = await cairn.send(null, 'Look twice.')
    // The second reply is held until the first view has answered: the save falls between.
    await cairn.until(() => results(cairn.events.filter((e) => e.turnId === turnId)).length === 1)
    saveOutside('a.md', 'The user likes coffee now.\n')
    release()
    const events = await cairn.finished(turnId)
    const [first, second] = results(events)
    expect(first?.content).toContain('The user likes tea.')
    expect(second?.content).toContain('The user likes coffee now.')

    const stored = replies((await call('conversations:get', { id: conversationId })).messages)
    expect(stored).toHaveLength(3)
    const [one, two, last] = stored.map((message) => message.memoryAt as string)
    expect(await bothReads('a.md', one!)).toEqual({
      window: 'The user likes tea.\n',
      git: 'The user likes tea.\n',
    })
    for (const at of [two!, last!]) {
      expect(await bothReads('a.md', at)).toEqual({
        window: 'The user likes coffee now.\n',
        git: 'The user likes coffee now.\n',
      })
    }
    // The window's "Memory at this reply" is the turn's last reply's: the latest read.
    expect(last).toBe(two)
  })

  it('holds the file a str_replace read when it was saved outside Cairn during the turn', async () => {
    await call('memory:write', {
      path: '/memories/a.md',
      content: 'The user likes tea.\nLives in Leeds.\n',
    })
    const { hold, release } = holdOf()
    cairn.fake.script(
      reply.toolUse(
        {
          input: {
            command: 'str_replace',
            path: '/memories/a.md',
            old_str: 'coffee',
            new_str: 'cocoa',
          },
        },
        { hold },
      ),
      reply.text('Cocoa it is.'),
    )
    const { conversationId, turnId } = await cairn.send(null, 'Not coffee: cocoa.')
    await cairn.until(() =>
      cairn.events.some((e) => e.turnId === turnId && e.type === 'turn-started'),
    )
    saveOutside('a.md', 'The user likes coffee now.\nLives in Leeds.\n')
    release()
    const events = await cairn.finished(turnId)
    const [edit] = results(events)
    expect(edit?.isError).toBe(false)
    expect(edit?.content).toContain('The user likes cocoa now.')

    const stored = replies((await call('conversations:get', { id: conversationId })).messages)
    // The reply's memory is the file the edit found and read (the old text matched there),
    // just before Claude's own commit, which "Compare with now" then shows as a change.
    const at = stored.at(-1)?.memoryAt as string
    expect(git('rev-parse', `${edit!.commitOid}^`).trim()).toBe(at)
    expect(await bothReads('a.md', at)).toEqual({
      window: 'The user likes coffee now.\nLives in Leeds.\n',
      git: 'The user likes coffee now.\nLives in Leeds.\n',
    })
    // Every numbered line the edit's answer quoted is its commit's line.
    const lines = git('show', `${edit!.commitOid}:a.md`).split('\n')
    const quoted = [...edit!.content.matchAll(/^\s*(\d+)\t(.*)$/gm)]
    expect(quoted.length).toBeGreaterThan(0)
    for (const [, number, text] of quoted) expect(lines[Number(number) - 1]).toBe(text)
  })

  it('commits nothing more for a view when nothing was saved outside Cairn', async () => {
    await call('memory:write', { path: '/memories/a.md', content: 'The user likes tea.\n' })
    const before = git('rev-parse', 'main').trim()
    cairn.fake.script(
      reply.toolUses([
        { input: { command: 'view', path: '/memories/a.md' } },
        { input: { command: 'view', path: '/memories' } },
      ]),
      reply.text('Tea.'),
    )
    const { conversationId } = await cairn.turn(null, 'What do I drink?')
    expect(git('rev-parse', 'main').trim()).toBe(before)
    const stored = replies((await call('conversations:get', { id: conversationId })).messages)
    expect(stored.map((message) => message.memoryAt)).toEqual([before, before])
  })
})
