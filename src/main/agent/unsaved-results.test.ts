/**
 * Calls whose results Cairn did not save (issue #5: a conversation reopened after a restart
 * continues). A kill between running a reply's memory calls and saving their results leaves the
 * calls unanswered in the conversation file; history may hold their commits (`Tool-Use-Id` and
 * `Conversation-Id` trailers). The next message answers each call with what its commit says it
 * did, and "may or may not have run" only when history holds no commit of that conversation for
 * it. Through the real core, the real SDK against the fake Messages API, `git` as the second
 * opinion. The state a kill leaves is made by cutting the saved results out of the file while
 * Cairn is closed (killed-mid-turn.test kills a real child, where the timing decides whether the
 * results were saved first).
 */
import { execFileSync } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { expect, it } from 'vitest'
import { invalidMessages, reply } from '../../../test/fixtures/fake-anthropic'
import { coreThroughFakeApi } from '../core-test-support'
import { RESULT_NOT_RECORDED } from './messages'

let pending = 0
const t = coreThroughFakeApi({
  prefix: 'cairn-unsaved-results-',
  quiet: true,
  onEvent: (name, data) => {
    if (name === 'review:pending') pending = (data as ReadonlyArray<unknown>).length
  },
})

function git(...args: string[]): string {
  return execFileSync('git', [`--git-dir=${path.join(t.dataDir, 'history.git')}`, ...args], {
    encoding: 'utf8',
  })
}

/** Tool use id -> commit, as `git log` reads the trailers. */
function commitsByToolUse(): Record<string, string> {
  const lines = git('log', '--format=%H %(trailers:key=Tool-Use-Id,valueonly,separator=)')
  return Object.fromEntries(
    lines
      .split('\n')
      .map((line) => line.trim().split(' '))
      .filter((parts) => parts.length === 2)
      .map(([oid, id]) => [id!, oid!]),
  )
}

/** What a kill after the calls ran and before their results were saved leaves on disk. */
async function cutSavedResults(conversationId: string, keep: number): Promise<void> {
  const file = t.fileOf(conversationId)
  const stored = JSON.parse(await readFile(file, 'utf8')) as {
    messages: unknown[]
    toolCommits: Record<string, string>
  }
  stored.messages = stored.messages.slice(0, keep)
  stored.toolCommits = {}
  await writeFile(file, JSON.stringify(stored))
}

type Sent = Array<{ role: string; content: Array<Record<string, unknown>> }>

it('answers calls whose results were not saved with what history says they did', async () => {
  const calls = [
    { id: 'toolu_c', input: { command: 'create', path: '/memories/a.md', file_text: 'one\n' } },
    {
      id: 'toolu_s',
      input: { command: 'str_replace', path: '/memories/a.md', old_str: 'one', new_str: 'uno' },
    },
    {
      id: 'toolu_i',
      input: { command: 'insert', path: '/memories/a.md', insert_line: 1, insert_text: 'two\n' },
    },
    { id: 'toolu_v', input: { command: 'view', path: '/memories' } },
    {
      id: 'toolu_r',
      input: { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' },
    },
  ]
  t.fake.script(reply.toolUses(calls), reply.text('Done.'))
  const first = await t.turn(null, 'Keep a note')
  expect(first.events.some((e) => e.type === 'error')).toBe(false)
  const told = (t.fake.messageRequests()[1]!.body!.messages as Sent).at(-1)!.content
  const commits = commitsByToolUse()
  expect(Object.keys(commits).sort()).toEqual(['toolu_c', 'toolu_i', 'toolu_r', 'toolu_s'])

  // The prompt and the reply with its calls stay; their results and commit links are gone.
  await t.reopen(() => cutSavedResults(first.conversationId, 2))
  t.fake.script(reply.text('Carrying on.'))
  const next = await t.turn(first.conversationId, 'Go on')
  expect(next.events.some((e) => e.type === 'error')).toBe(false)
  const sent = t.fake.messageRequests().at(-1)!.body!.messages as Sent
  expect(invalidMessages(sent)).toBeNull()
  // The results come first in the message that also carries the new prompt.
  const answers = sent[2]!.content.slice(0, calls.length)
  expect(sent[2]!.content.at(-1)).toMatchObject({ type: 'text', text: 'Go on' })
  expect(answers.map((a) => a.tool_use_id)).toEqual(calls.map((c) => c.id))
  // In the Memory tool's own words, the very ones Claude got when the calls ran...
  for (const [i, id] of [
    [0, 'toolu_c'],
    [2, 'toolu_i'],
    [4, 'toolu_r'],
  ] as const) {
    expect(answers[i]).toEqual({ type: 'tool_result', tool_use_id: id, content: told[i]!.content })
  }
  expect(answers[0]!.content).toBe('File created successfully at: /memories/a.md')
  expect(answers[4]!.content).toBe('Successfully renamed /memories/a.md to /memories/b.md')
  // ...an edit plainly (its answer showed a snippet of the file as it was then)...
  expect(answers[1]).toEqual({
    type: 'tool_result',
    tool_use_id: 'toolu_s',
    content: 'This command ran: it changed /memories/a.md (saved in history).',
  })
  // ...and a view, which commits nothing, may or may not have run.
  expect(answers[3]).toEqual({
    type: 'tool_result',
    tool_use_id: 'toolu_v',
    content: RESULT_NOT_RECORDED,
    is_error: true,
  })

  // Stored, with the commits linked again (the tool cards' "View change"), and read back the same.
  const stored = await t.call('conversations:get', { id: first.conversationId })
  expect(stored.messages.map((m) => m.role)).toEqual([
    'user',
    'assistant',
    'user',
    'user',
    'assistant',
  ])
  expect(stored.messages[2]!.content.map((b) => b.type === 'tool_result' && b.content)).toEqual(
    answers.map((a) => a.content),
  )
  expect(stored.toolCommits).toEqual(commits)
  await t.reopen()
  expect(await t.call('conversations:get', { id: first.conversationId })).toMatchObject({
    messages: stored.messages,
    toolCommits: commits,
  })
})

it("says a call may or may not have run when only another conversation's commit has its id", async () => {
  t.fake.script(
    reply.toolUse({
      id: 'toolu_same',
      input: { command: 'create', path: '/memories/a.md', file_text: 'a\n' },
    }),
    reply.text('Saved.'),
  )
  await t.turn(null, 'Save a')
  expect(Object.keys(commitsByToolUse())).toEqual(['toolu_same'])
  // Another conversation's call with the same id, refused (nothing committed).
  t.fake.script(
    reply.toolUse({ id: 'toolu_same', input: { command: 'view', path: '/memories/none.md' } }),
    reply.text('Nothing there.'),
  )
  const other = await t.turn(null, 'Look')
  await t.reopen(() => cutSavedResults(other.conversationId, 2))
  t.fake.script(reply.text('Carrying on.'))
  await t.turn(other.conversationId, 'Go on')
  const sent = t.fake.messageRequests().at(-1)!.body!.messages as Sent
  expect(sent[2]!.content[0]).toEqual({
    type: 'tool_result',
    tool_use_id: 'toolu_same',
    content: RESULT_NOT_RECORDED,
    is_error: true,
  })
  const stored = await t.call('conversations:get', { id: other.conversationId })
  expect(stored.toolCommits).toEqual({})
})

it('tells a call the person edited before approving that the file holds their version', async () => {
  await t.call('settings:update', { reviewMode: 'all' })
  t.fake.script(
    reply.toolUse({
      id: 'toolu_ed',
      input: { command: 'create', path: '/memories/prefs.md', file_text: 'Editor: Vim\n' },
    }),
    reply.text('Noted.'),
  )
  const { conversationId, turnId } = await t.send(null, 'I use an editor')
  await t.until(() => pending === 1)
  const [change] = await t.call('review:list')
  await t.call('review:decide', {
    id: change!.id,
    decision: 'approve',
    editedText: 'Editor: Helix\n',
  })
  await t.finished(turnId)
  const told = (t.fake.messageRequests()[1]!.body!.messages as Sent).at(-1)!.content[0]!
  expect(String(told.content)).toContain('after editing it')
  expect(Object.keys(commitsByToolUse())).toEqual(['toolu_ed'])

  await t.reopen(() => cutSavedResults(conversationId, 2))
  t.fake.script(reply.text('Carrying on.'))
  await t.turn(conversationId, 'Go on')
  const sent = t.fake.messageRequests().at(-1)!.body!.messages as Sent
  // Not "File created successfully": Claude would take its own text for the file's.
  expect(sent[2]!.content[0]).toEqual({
    type: 'tool_result',
    tool_use_id: 'toolu_ed',
    content: told.content,
  })
})
