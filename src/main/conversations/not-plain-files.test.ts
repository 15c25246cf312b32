import { execFileSync, spawn } from 'node:child_process'
import { lstatSync, readdirSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createRecordingLogger } from '../lib/logger'
import { createConversationStore, DAMAGED_FOLDER } from './conversation-store'

// disk29: the conversations' own files the way history.git's are read. A link at
// conversations/cairn-damaged (to a folder outside) took what a delete kept aside out of the
// data folder; a fifo at a conversation's file held its reads forever (a thread of the pool
// blocked, the list never answered). The fifo's case runs in a child process, so a hang on
// the code before ends as a failed test (the child killed), not as a run that never ends.

let dataDir = ''
let outside = ''
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-conversations-'))
  outside = await mkdtemp(path.join(os.tmpdir(), 'cairn-outside-'))
})
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true, maxRetries: 10 })
  await rm(outside, { recursive: true, force: true, maxRetries: 10 })
})

const open = () =>
  createConversationStore({ dataDir, now: () => Date.now(), logger: createRecordingLogger() })
const folder = () => path.join(dataDir, 'conversations')

describe("the conversations' cairn-damaged folder is never followed", () => {
  it('a link there to a folder outside: the damaged file is kept inside, nothing moved out', async () => {
    const store = open()
    const { id } = await store.create('hello')
    await writeFile(path.join(folder(), `${id}.json`), 'garbage')
    await symlink(outside, path.join(folder(), DAMAGED_FOLDER))

    await open().delete(id)

    expect(await readdir(outside)).toEqual([])
    expect(lstatSync(path.join(folder(), DAMAGED_FOLDER)).isSymbolicLink()).toBe(true)
    const kept = path.join(folder(), `${DAMAGED_FOLDER}-2`, `${id}.json`)
    expect(lstatSync(kept).isFile()).toBe(true)
    expect(await open().list()).toEqual([])
  })
})

/** Runs `body` (with `store` and `id` in scope) in a child process; its output and exit code. */
async function inChild(id: string, body: string): Promise<{ code: number | null; out: string }> {
  const script = `
    const { createConversationStore } = await import(${JSON.stringify(path.resolve('src/main/conversations/conversation-store.ts'))})
    const store = createConversationStore({ dataDir: ${JSON.stringify(dataDir)}, now: () => Date.now() })
    const id = ${JSON.stringify(id)}
    ${body}
  `
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()))
  // Not a timing assert: the guard only ends a child that would otherwise never end.
  const guard = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  clearTimeout(guard)
  return { code, out }
}

describe('a conversation file that is not a plain file is damage, never waited on', () => {
  it('a fifo: listed as unreadable, refused as damaged, kept aside on delete', async () => {
    const { id } = await open().create('hello')
    const file = path.join(folder(), `${id}.json`)
    await rm(file)
    execFileSync('mkfifo', [file])
    const { code, out } = await inChild(
      id,
      `
      const listed = await store.list()
      process.stdout.write('LISTED ' + JSON.stringify(listed.map((hit) => hit.conversation.unreadable === true)) + '\\n')
      const got = await store.get(id).then(() => 'read', (error) => error.code)
      process.stdout.write('GET ' + got + '\\n')
      await store.delete(id)
      process.stdout.write('DELETED\\n')
    `,
    )
    expect(out).toContain('LISTED [true]')
    expect(out).toContain('GET conversation-corrupt')
    expect(out).toContain('DELETED')
    expect(code).toBe(0)
    const kept = readdirSync(path.join(folder(), DAMAGED_FOLDER))
    expect(kept).toEqual([`${id}.json`])
    expect(lstatSync(path.join(folder(), DAMAGED_FOLDER, `${id}.json`)).isFIFO()).toBe(true)
  }, 90_000)

  it('a link to a file outside: never read through; kept aside (the link) on delete', async () => {
    const { id } = await open().create('hello')
    const file = path.join(folder(), `${id}.json`)
    const target = path.join(outside, 'other.json')
    await writeFile(target, await readFile(file, 'utf8'))
    await rm(file)
    await symlink(target, file)
    const store = open()
    await expect(store.get(id)).rejects.toMatchObject({ code: 'conversation-corrupt' })
    await store.delete(id)
    expect(await readdir(outside)).toEqual(['other.json'])
    const kept = path.join(folder(), DAMAGED_FOLDER, `${id}.json`)
    expect(lstatSync(kept).isSymbolicLink()).toBe(true)
  })
})
