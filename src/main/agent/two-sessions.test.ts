/**
 * End to end through the real composition root: createCore + dispatch, the real SDK against
 * the fake Messages API, the real versioned memory (git) and the real conversation store.
 */
import { execFileSync } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { reply, type RecordedRequest } from '../../../test/fixtures/fake-anthropic'
import type { AgentEvent } from '../../shared/types'
import { coreThroughFakeApi } from '../core-test-support'
import { TINY_JPEG, TINY_PNG } from '../../../test/fixtures/images'

const cairn = coreThroughFakeApi({ prefix: 'cairn-e2e-agent-' })
const { call, send } = cairn

/** Sends a message and waits for its turn to finish (events come from the core's bus). */
async function chat(conversationId: string | null, text: string) {
  const { conversationId: id, events } = await cairn.turn(conversationId, text)
  return { id, events }
}

function git(...args: string[]): string {
  return execFileSync('git', [`--git-dir=${path.join(cairn.dataDir, 'history.git')}`, ...args], {
    encoding: 'utf8',
  })
}

function toolResults(request: RecordedRequest) {
  return (request.body?.messages ?? []).flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as Array<Record<string, unknown>>).filter((b) => b.type === 'tool_result')
      : [],
  )
}

const DIRECTORY_HEADER =
  "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:"

describe('memory across two sessions', () => {
  it('remembers in conversation 1 and recalls in a fresh conversation 2', async () => {
    cairn.fake.script(
      reply.toolUse({ id: 'toolu_c1_view', input: { command: 'view', path: '/memories' } }),
      reply.toolUse({
        id: 'toolu_c1_create',
        input: {
          command: 'create',
          path: '/memories/notes.md',
          file_text: '# Notes\n- Favourite language: Python\n',
        },
      }),
      reply.text("Got it — I'll remember that Python is your favourite language."),
    )
    const first = await chat(null, 'My favourite language is Python — remember it')
    expect(first.events.at(-1)).toMatchObject({ type: 'turn-finished', stopped: false })
    expect(first.events.some((e) => e.type === 'error')).toBe(false)

    cairn.fake.script(
      reply.toolUse({ id: 'toolu_c2_view', input: { command: 'view', path: '/memories' } }),
      reply.toolUse({
        id: 'toolu_c2_notes',
        input: { command: 'view', path: '/memories/notes.md' },
      }),
      reply.text('Your favourite language is Python.'),
    )
    const second = await chat(null, 'What is my favourite language?')
    expect(second.id).not.toBe(first.id)
    expect(second.events.at(-1)).toMatchObject({ type: 'turn-finished', stopped: false })

    const requests = cairn.fake.messageRequests()
    expect(requests).toHaveLength(6)
    // Every request declared the memory tool, exactly as the API defines it.
    for (const request of requests) {
      expect(request.body?.tools).toEqual([{ type: 'memory_20250818', name: 'memory' }])
    }

    // Each tool_result carried the handler's official text and the right error flag.
    const [c1View] = toolResults(requests[1]!)
    expect(c1View).toMatchObject({ tool_use_id: 'toolu_c1_view' })
    expect(String(c1View?.content).startsWith(DIRECTORY_HEADER)).toBe(true)
    expect(c1View).not.toHaveProperty('is_error')
    expect(toolResults(requests[2]!)[1]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_c1_create',
      content: 'File created successfully at: /memories/notes.md',
    })
    const [c2View] = toolResults(requests[4]!)
    expect(String(c2View?.content)).toContain('/memories/notes.md')
    expect(toolResults(requests[5]!)[1]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_c2_notes',
      content:
        "Here's the content of /memories/notes.md with line numbers:\n" +
        '     1\t# Notes\n     2\t- Favourite language: Python',
    })

    // The create is one commit carrying conversation 1's id and the tool_use id.
    const created = first.events.find(
      (e) => e.type === 'tool-result' && e.toolUseId === 'toolu_c1_create',
    )
    const oid = created?.type === 'tool-result' ? created.commitOid : null
    expect(oid).toMatch(/^[0-9a-f]{40}$/)
    const log = await call('history:log', { offset: 0, limit: 50, conversationId: first.id })
    expect(log.entries).toHaveLength(1)
    expect(log.entries[0]).toMatchObject({
      oid,
      actor: 'claude',
      command: 'create',
      conversationId: first.id,
      toolUseId: 'toolu_c1_create',
      paths: ['/memories/notes.md'],
    })
    const message = git('log', '-1', '--format=%B', oid!)
    expect(message).toContain(`Conversation-Id: ${first.id}`)
    expect(message).toContain('Tool-Use-Id: toolu_c1_create')
    expect(git('show', `${oid}:notes.md`)).toBe('# Notes\n- Favourite language: Python\n')
    expect((await call('conversations:get', { id: first.id })).toolCommits).toEqual({
      toolu_c1_create: oid,
    })
    // Conversation 2's reads made no commit.
    expect(
      (await call('history:log', { offset: 0, limit: 50, conversationId: second.id })).total,
    ).toBe(0)

    // Conversation 2 started from an empty context: none of conversation 1's messages.
    const firstOfSecond = requests[3]!.body!.messages!
    expect(firstOfSecond).toHaveLength(1)
    for (const request of requests.slice(3)) {
      const sent = JSON.stringify(request.body?.messages)
      expect(sent).not.toContain('remember it')
      expect(sent).not.toContain('toolu_c1_')
      expect(sent).not.toContain("I'll remember")
    }
  })

  it('passes a failing command back to Claude verbatim with is_error, committing nothing', async () => {
    cairn.fake.script(
      reply.toolUse({ id: 'toolu_missing', input: { command: 'view', path: '/memories/nope.md' } }),
      reply.text('Nothing there.'),
    )
    const turn = await chat(null, 'Look for nope')
    const [result] = toolResults(cairn.fake.messageRequests()[1]!)
    expect(result).toMatchObject({ tool_use_id: 'toolu_missing', is_error: true })
    expect(String(result?.content)).toMatch(/^The path \/memories\/nope\.md does not exist/)
    expect(turn.events.find((e) => e.type === 'tool-result')).toMatchObject({
      isError: true,
      commitOid: null,
    })
    expect(git('rev-list', '--all').trim().split('\n').filter(Boolean).length).toBeLessThanOrEqual(
      1,
    )
  })
})

describe('images in memory', () => {
  // A real 1×1 PNG and a real small JPEG (the handler checks their structure).
  const png = TINY_PNG
  const jpeg = TINY_JPEG

  it('hands Claude the image blocks of a viewed picture and stores only a placeholder', async () => {
    await mkdir(path.join(cairn.dataDir, 'memories', 'pics'), { recursive: true })
    await writeFile(path.join(cairn.dataDir, 'memories', 'pics', 'dot.png'), png)
    await writeFile(path.join(cairn.dataDir, 'memories', 'pics', 'photo.jpg'), jpeg)
    cairn.fake.script(
      reply.toolUse({
        id: 'toolu_png',
        input: { command: 'view', path: '/memories/pics/dot.png' },
      }),
      reply.toolUse({
        id: 'toolu_jpg',
        input: { command: 'view', path: '/memories/pics/photo.jpg' },
      }),
      reply.text('A red dot and a photo.'),
    )
    const turn = await chat(null, 'What pictures do you keep?')
    expect(turn.events.some((e) => e.type === 'error')).toBe(false)

    const requests = cairn.fake.messageRequests()
    expect(requests).toHaveLength(3)
    const [pngResult] = toolResults(requests[1]!)
    expect(pngResult).toMatchObject({ tool_use_id: 'toolu_png' })
    expect(pngResult?.is_error).toBeFalsy()
    expect(pngResult?.content).toEqual([
      { type: 'text', text: "Here's the image /memories/pics/dot.png:" },
      {
        type: 'image',
        source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') },
      },
    ])
    const jpegResult = toolResults(requests[2]!).find((b) => b.tool_use_id === 'toolu_jpg')
    expect(jpegResult?.content).toContainEqual({
      type: 'image',
      source: { type: 'base64', media_type: 'image/jpeg', data: jpeg.toString('base64') },
    })

    // The transcript and the conversation file keep text: no image bytes on disk twice.
    const shown = turn.events.filter((e) => e.type === 'tool-result')
    expect(shown.map((e) => e.type === 'tool-result' && e.content)).toEqual([
      "Here's the image /memories/pics/dot.png:\n[image]",
      "Here's the image /memories/pics/photo.jpg:\n[image]",
    ])
    const stored = await readFile(
      path.join(cairn.dataDir, 'conversations', `${turn.id}.json`),
      'utf8',
    )
    expect(stored).toContain('[image]')
    expect(stored).not.toContain(png.toString('base64'))
  })
})

describe('restart', () => {
  it('reopens a stored conversation after a core restart and continues it with its history', async () => {
    await call('settings:update', { model: 'claude-haiku-4-5' })
    cairn.fake.script(
      reply.toolUse({
        id: 'toolu_r1',
        input: { command: 'create', path: '/memories/todo.md', file_text: 'buy milk\n' },
      }),
      reply.text('Noted.'),
    )
    const first = await chat(null, 'Remember to buy milk')
    const beforeRestart = cairn.fake.messageRequests()[1]!.body!.messages!

    await cairn.reopen()

    const list = await call('conversations:list', {})
    expect(list.map((hit) => hit.conversation.id)).toEqual([first.id])
    expect(list[0]?.conversation.title).toBe('Remember to buy milk')
    const stored = await call('conversations:get', { id: first.id })
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])

    cairn.fake.script(reply.text('You wanted to buy milk.'))
    const next = await chat(first.id, 'What did I ask you to remember?')
    expect(next.id).toBe(first.id)
    const after = cairn.fake.messageRequests()[2]!.body!
    expect(after.model).toBe('claude-haiku-4-5')
    const messages = after.messages!
    expect(messages).toHaveLength(5)
    // The history is what the API saw before the restart, then the reply, then the new message.
    expect(stripCache(messages.slice(0, 3))).toEqual(stripCache(beforeRestart))
    expect(messages[3]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Noted.' }] })
    expect(JSON.stringify(messages[4])).toContain('What did I ask you to remember?')
    const file = await readFile(path.join(cairn.dataDir, 'memories', 'todo.md'), 'utf8')
    expect(file).toBe('buy milk\n')
  })

  it('renames, searches and deletes through the dispatcher, emitting conversations:changed', async () => {
    const changes: unknown[] = []
    cairn.core.events.on((name, data) => {
      if (name === 'conversations:changed') changes.push(data)
    })
    cairn.fake.script(reply.text('Sure.'))
    const { id } = await chat(null, 'Plan a trip to Lisbon')
    await call('conversations:rename', { id, title: 'Lisbon' })
    const hits = await call('conversations:list', { query: 'sure' })
    expect(hits.map((h) => [h.conversation.title, h.excerpt])).toEqual([['Lisbon', 'Sure.']])
    await call('conversations:delete', { id })
    expect(await call('conversations:list', {})).toEqual([])
    expect(changes).toContainEqual({ id, deleted: true })
    const gone = await cairn.core.dispatch('conversations:get', { id })
    expect(gone).toEqual({
      ok: false,
      error: { code: 'conversation-not-found', message: expect.any(String) },
    })
  })
})

describe('stop through the core', () => {
  it('stops a streaming turn with chat:stop and continues the conversation', async () => {
    let release!: () => void
    const hold = new Promise<void>((resolve) => (release = resolve))
    cairn.fake.script(reply.text('A long answer that is cut short by the person', { hold }))
    const { conversationId, turnId } = await send(null, 'Go')
    await cairn.until(() =>
      cairn.events.some((e) => e.turnId === turnId && e.type === 'text-delta'),
    )
    await call('chat:stop', { conversationId })
    await cairn.finished(turnId)
    release()
    expect(cairn.events.filter((e) => e.turnId === turnId).at(-1)).toMatchObject({
      type: 'turn-finished',
      stopped: true,
    })
    cairn.fake.script(reply.text('Continuing.'))
    const next = await chat(conversationId, 'Go on')
    expect(next.events.some((e) => e.type === 'error')).toBe(false)
    const stored = await call('conversations:get', { id: conversationId })
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
  })
})

describe('turn-finished', () => {
  it('accepts the next message of the conversation from inside its listener', async () => {
    cairn.fake.script(reply.text('First.'), reply.text('Second.'))
    const { conversationId, turnId } = await send(null, 'A')
    const followUp = new Promise<unknown>((resolve) => {
      const stop = cairn.core.events.on((name, data) => {
        const event = data as AgentEvent
        if (name !== 'agent:event' || event.turnId !== turnId || event.type !== 'turn-finished') {
          return
        }
        stop()
        resolve(
          cairn.core.dispatch('chat:send', { conversationId, text: 'B', clientId: 'client-b' }),
        )
      })
    })
    const result = (await followUp) as { ok: boolean; value: { turnId: string } }
    expect(result).toMatchObject({ ok: true, value: { conversationId } })
    await cairn.finished(result.value.turnId)
    const stored = await call('conversations:get', { id: conversationId })
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
  })
})

describe('stop while a memory command runs', () => {
  it('lets the command finish and commit, runs nothing after it, and the chat continues', async () => {
    cairn.fake.script(
      reply.toolUse({
        id: 'toolu_stop',
        input: { command: 'create', path: '/memories/plan.md', file_text: 'step 1\n' },
      }),
    )
    // Stop lands right after the command started, while it writes and commits.
    cairn.core.events.on((name, data) => {
      const event = data as AgentEvent
      if (name === 'agent:event' && event.type === 'tool-call') {
        queueMicrotask(
          () => void cairn.core.dispatch('chat:stop', { conversationId: event.conversationId }),
        )
      }
    })
    const turn = await chat(null, 'Plan it')
    expect(turn.events.at(-1)).toMatchObject({ type: 'turn-finished', stopped: true })
    const result = turn.events.find((e) => e.type === 'tool-result')
    expect(result).toMatchObject({ toolUseId: 'toolu_stop', isError: false })
    const oid = result?.type === 'tool-result' ? result.commitOid : null
    expect(oid).toMatch(/^[0-9a-f]{40}$/)
    expect(git('show', `${oid}:plan.md`)).toBe('step 1\n')
    expect(git('log', '-1', '--format=%B', oid!)).toContain('Tool-Use-Id: toolu_stop')
    expect(cairn.fake.messageRequests()).toHaveLength(1)

    const stored = await call('conversations:get', { id: turn.id })
    expect(stored.toolCommits).toEqual({ toolu_stop: oid })
    expect(stored.messages.at(-1)?.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_stop',
        content: 'File created successfully at: /memories/plan.md',
        is_error: false,
      },
    ])

    cairn.fake.script(reply.text('Continuing.'))
    const next = await chat(turn.id, 'Go on')
    expect(next.events.some((e) => e.type === 'error')).toBe(false)
  })
})

describe('settings through the core', () => {
  it('never sends the key to the renderer and lists models from the API', async () => {
    const view = await call('settings:get')
    expect(view).toMatchObject({ hasApiKey: true, apiKeySource: 'env', dataDir: cairn.dataDir })
    expect(JSON.stringify(view)).not.toContain('sk-test')
    const models = await call('settings:models')
    expect(models.map((m) => m.id)).toContain('claude-haiku-4-5')
    expect(cairn.fake.requests.some((r) => r.path === '/v1/models')).toBe(true)
  })

  it('announces every settings change with settings:changed, never carrying the key', async () => {
    const changes: unknown[] = []
    cairn.core.events.on((name, data) => {
      if (name === 'settings:changed') changes.push(data)
    })
    const updated = await call('settings:update', { theme: 'dark', maxTokens: 1234 })
    const keyed = await call('settings:setApiKey', { key: 'sk-ant-stored-never-announced' })
    const cleared = await call('settings:clearApiKey')
    expect(changes).toEqual([updated, keyed, cleared])
    expect(changes[0]).toMatchObject({ theme: 'dark', maxTokens: 1234 })
    expect(JSON.stringify(changes)).not.toMatch(/sk-ant-stored|sk-test/)
  })

  it('pushes the create-overwrite policy to the versioned memory', async () => {
    await call('settings:update', { createExisting: 'error' })
    await call('memory:write', { path: '/memories/a.md', content: 'one' })
    cairn.fake.script(
      reply.toolUse({
        id: 'toolu_over',
        input: { command: 'create', path: '/memories/a.md', file_text: 'two' },
      }),
      reply.text('ok'),
    )
    await chat(null, 'overwrite a')
    const [result] = toolResults(cairn.fake.messageRequests()[1]!)
    expect(result).toMatchObject({ is_error: true })
    expect(await readFile(path.join(cairn.dataDir, 'memories', 'a.md'), 'utf8')).toBe('one')
  })
})

function stripCache(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replaceAll(',"cache_control":{"type":"ephemeral"}', ''))
}
