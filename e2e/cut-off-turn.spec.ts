/**
 * A reply cut off when Cairn closed: a child process runs the real core, sends a message, and is
 * killed (SIGKILL) while half the reply has streamed. A new core on the same folder (a restart)
 * behind the window: the conversation says the reply was cut off, Retry sends the message again,
 * and Dismiss forgets it for good (a reload does not bring it back).
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Page } from '@playwright/test'
import { reply, sse, type FakeAnthropic } from '../test/fixtures/fake-anthropic'
import { createCore, type Core } from '../src/main/core'
import { createRecordingLogger } from '../src/main/lib/logger'
import { attachCore, expect, test, watchCsp } from './fixtures/harness'
import { shootBoth } from './fixtures/screens'
import { ChatPage } from './pages/chat.page'

const CHILD = path.resolve('test/fixtures/chat-child.ts')

/** Sends `text` from a child core on `dataDir`, and kills it once the API was asked. */
async function killMidReply(dataDir: string, anthropic: FakeAnthropic, text: string) {
  anthropic.script(reply.raw(sse.messageStart() + sse.text(0, 'Half a rep'), { ending: 'hang' }))
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, anthropic.url, text], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let said = ''
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const told = new Promise<void>((resolve) =>
    child.stdout.on('data', (chunk: Buffer) => {
      said += chunk.toString()
      if (/^turn \S+$/m.test(said)) resolve()
    }),
  )
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('close', (_code, signal) => resolve(signal)),
  )
  await Promise.race([
    Promise.all([anthropic.waitForMessageRequests(1), told]),
    exited.then(() => {
      throw new Error(`the child ended early: ${stderr}`)
    }),
  ])
  child.kill('SIGKILL')
  expect(await exited).toBe('SIGKILL')
}

let dataDir = ''
let core: Core | null = null
test.afterEach(async () => {
  await core?.close()
  core = null
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

async function restart(page: Page, anthropic: FakeAnthropic, url: string, csp: string[]) {
  core = await createCore({
    appVersion: '0.1.0-e2e',
    dataDir,
    env: { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: anthropic.url },
    anthropicMaxRetries: 0,
    logger: createRecordingLogger(),
  })
  await watchCsp(page, csp)
  await attachCore(page, core)
  await page.goto(url)
}

test('a reply a kill cut off says so after the restart; Retry sends it again', async ({
  page,
  anthropic,
  rendererServer,
}) => {
  test.setTimeout(120_000)
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-cut-'))
  await killMidReply(dataDir, anthropic, 'Plan my week')
  const csp: string[] = []
  await restart(page, anthropic, rendererServer.url, csp)

  const chat = new ChatPage(page)
  await chat.openConversation('Plan my week')
  await expect(chat.userMessages()).toHaveText(['Plan my week'])
  const banner = chat.transcript.getByRole('status', { name: 'Reply cut off' })
  await expect(banner).toContainText('This reply was cut off when Cairn closed.')
  await mkdir('e2e/artifacts', { recursive: true })
  await shootBoth(page, { dataDir }, 'cut-off-turn')

  anthropic.script(reply.text('Monday: rest.'))
  await banner.getByRole('button', { name: 'Retry' }).click()
  await expect(chat.lastReply()).toContainText('Monday: rest.')
  await expect(chat.userMessages()).toHaveText(['Plan my week'])
  await expect(banner).toHaveCount(0)
  await page.reload()
  await chat.openConversation('Plan my week')
  await expect(chat.lastReply()).toContainText('Monday: rest.')
  await expect(chat.userMessages()).toHaveText(['Plan my week'])
  await expect(banner).toHaveCount(0)
  expect(csp).toEqual([])
})

test('a cut-off reply dismissed stays away after a reload', async ({
  page,
  anthropic,
  rendererServer,
}) => {
  test.setTimeout(120_000)
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-e2e-cut-'))
  await killMidReply(dataDir, anthropic, 'Plan my week')
  const csp: string[] = []
  await restart(page, anthropic, rendererServer.url, csp)

  const chat = new ChatPage(page)
  await chat.openConversation('Plan my week')
  const banner = chat.transcript.getByRole('status', { name: 'Reply cut off' })
  await expect(banner).toBeVisible()
  await banner.getByRole('button', { name: 'Dismiss' }).click()
  await expect(banner).toHaveCount(0)
  await page.reload()
  await chat.openConversation('Plan my week')
  await expect(chat.userMessages()).toHaveText(['Plan my week'])
  await expect(banner).toHaveCount(0)
  expect(csp).toEqual([])
})
