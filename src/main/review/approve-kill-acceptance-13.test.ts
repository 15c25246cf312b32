/**
 * Killed between the person's Approve and its commit. A child process runs the real core
 * against the fake Messages API with every change held; Claude's create waits, the child
 * approves it and is killed (SIGKILL) at a different point each time: before the approval is
 * sent, as it runs, and after it landed. After the restart, whatever the point: the file is there exactly when History holds
 * Claude's reviewed commit for the call, no other commit (a recovery at start) claims it, and
 * Claude is told the truth, that it ran or that it did not.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  invalidMessages,
  reply,
  startFakeAnthropic,
  type FakeAnthropic,
} from '../../../test/fixtures/fake-anthropic'
import { callCore, killChatChild } from '../core-test-support'
import { createCore, type Core } from '../core'
import { createRecordingLogger } from '../lib/logger'

const NOT_RUN =
  'This command was not run: Cairn closed while it waited for the user to review it. Nothing was changed.'

let dataDir: string
let fake: FakeAnthropic
let core: Core | null = null

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'probe33d-approve-kill-'))
  fake = await startFakeAnthropic()
})

afterEach(async () => {
  await core?.close()
  core = null
  await fake.close()
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
})

function git(...args: string[]): string {
  return execFileSync('git', [`--git-dir=${path.join(dataDir, 'history.git')}`, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: dataDir },
  })
}

/** Every commit on main: its Tool-Use-Id and Reviewed-by trailers and the files it touched. */
function commits(): Array<{ toolUse: string; reviewed: string; files: string[] }> {
  let out: string
  try {
    out = git(
      'log',
      '--format=@@%(trailers:key=Tool-Use-Id,valueonly,separator=%x2C)|%(trailers:key=Reviewed-by,valueonly,separator=%x2C)',
      '--name-only',
      'main',
    )
  } catch {
    return []
  }
  return out
    .split('@@')
    .slice(1)
    .map((block) => {
      const [head, ...files] = block.split('\n')
      const [toolUse, reviewed] = head!.split('|')
      return { toolUse: toolUse!.trim(), reviewed: reviewed!.trim(), files: files.filter(Boolean) }
    })
}

describe('a kill between Approve and its commit', () => {
  it.each([-40, -5, -1, 0, 2, 10, 400])(
    'killed %i ms from Approve: the file is there exactly when its reviewed commit is, and Claude is told so',
    async (ms) => {
      fake.script(
        reply.toolUse({
          id: 'toolu_held',
          input: { command: 'create', path: '/memories/plan.md', file_text: 'step 1\n' },
        }),
        reply.text('Done.'),
      )
      const conversationId = await killChatChild(
        [dataDir, fake.url, 'Plan it', `approve:${ms}`],
        (said) => /^approving$/m.test(said),
      )

      core = await createCore({
        dataDir,
        env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: fake.url },
        anthropicMaxRetries: 0,
        logger: createRecordingLogger(),
      })
      expect(await callCore(core, 'review:list', undefined)).toEqual([])
      const file = await readFile(path.join(dataDir, 'memories', 'plan.md'), 'utf8').catch(
        () => null,
      )
      const all = commits()
      const own = all.filter((c) => c.toolUse === 'toolu_held')
      expect(own.length).toBeLessThanOrEqual(1)
      // No commit but the call's own claims the file (a recovery at start would be a lie to
      // both: the person sees Cairn's change, Claude is told it did not run).
      expect(all.filter((c) => c.files.includes('plan.md') && c.toolUse !== 'toolu_held')).toEqual(
        [],
      )
      if (own.length === 1) {
        expect(file).toBe('step 1\n')
        expect(own[0]!.reviewed).toBe('You')
      } else {
        expect(file).toBeNull()
      }

      fake.script(reply.text('Understood.'))
      const finished = new Promise<void>((resolve) =>
        core!.events.on((name, data) => {
          if (name === 'agent:event' && (data as { type: string }).type === 'turn-finished')
            resolve()
        }),
      )
      await callCore(core, 'chat:send', { conversationId, text: 'Go on', clientId: 'c-go-on' })
      await finished
      const sent = fake.messageRequests().at(-1)!.body!.messages!
      expect(invalidMessages(sent)).toBeNull()
      const result = sent
        .flatMap((m) =>
          Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : [],
        )
        .find((b) => b.type === 'tool_result' && b.tool_use_id === 'toolu_held')
      if (own.length === 1) {
        expect(result).toMatchObject({ tool_use_id: 'toolu_held' })
        expect(result!.is_error ?? false).toBe(false)
      } else {
        expect(result).toEqual({
          type: 'tool_result',
          tool_use_id: 'toolu_held',
          content: NOT_RUN,
          is_error: true,
        })
      }
      git('fsck', '--strict', '--no-dangling')
    },
    120_000,
  )
})
