import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openVersionedMemory } from './index'
import { gitCli, tempDataDir } from './test-helpers'

// A kill during one of Claude's commands, then a person's edit while Cairn is down: the next
// open must not credit Claude with the person's text (review13-tool R1). What the open cannot
// tell apart is saved as Cairn's `recovery`, as it was before the note of the command in flight.

let dataDir: string
let cleanup: () => Promise<void>
beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
})
afterEach(() => cleanup())

const INDEX = JSON.stringify(path.resolve('src/main/history/index.ts'))
const DISK = JSON.stringify(path.resolve('src/main/lib/disk.ts'))
const HOOKS = JSON.stringify(path.resolve('src/main/lib/disk-hooks.ts'))

async function child(body: string, mayFinish = false): Promise<void> {
  const script = `
    const { openVersionedMemory } = await import(${INDEX})
    const { nodeDisk, setDisk } = await import(${DISK})
    const { hookDisk } = await import(${HOOKS})
    const memory = await openVersionedMemory({ dataDir: ${JSON.stringify(dataDir)}, watch: false, maintenance: false })
    ${body}
  `
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  let stdout = ''
  proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const signal = await new Promise((resolve) => proc.once('exit', (_code, sig) => resolve(sig)))
  if (mayFinish && signal === null && stdout === 'finished\n') return
  expect(signal, stderr).toBe('SIGKILL')
}

// Killed at the first disk call after the note of the command in flight was written, or, with
// no note, at the first call that writes anything once the command runs (ahead of any change
// to the folder): the folder is unchanged. A command that writes nothing (refused) finishes.
const KILL_BEFORE_CHANGE = `
  let opened = false, armed = false
  globalThis.running = false
  setDisk(hookDisk(nodeDisk, (call) => {
    if (armed) process.kill(process.pid, 'SIGKILL')
    if (!globalThis.running) return
    if (call.name === 'openSync' && String(call.args[0]).endsWith('cairn-command')) opened = true
    else if (opened && call.name === 'closeSync') armed = true
    else if (!opened && /^(renameSync|unlinkSync|mkdirSync|writeSync|writeFileSync|openat)$/.test(call.name)) process.kill(process.pid, 'SIGKILL')
    else if (!opened && call.name === 'openSync' && (Number(call.args[1] ?? 0) & 0o103) !== 0) process.kill(process.pid, 'SIGKILL')
  }).disk)
  globalThis.running = true
`

// Killed at the first call after the rename that moves keep.md (before its commit).
const KILL_AFTER_MOVE = `
  let moved = false
  setDisk(hookDisk(nodeDisk, (call) => {
    if (moved) process.kill(process.pid, 'SIGKILL')
    if (call.name === 'renameSync' && String(call.args[0]).endsWith('keep.md')) moved = true
  }).disk)
`

async function seed(): Promise<void> {
  const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  await memory.execute(
    { command: 'create', path: '/memories/keep.md', file_text: 'one\n' },
    { actor: 'claude', conversationId: 'c', toolUseId: 'toolu_seed' },
  )
  await memory.close()
}

async function reopen(): Promise<string> {
  const memory = await openVersionedMemory({ dataDir, watch: false, maintenance: false })
  await memory.close()
  return gitCli(
    dataDir,
    'log',
    '-1',
    '-p',
    '--format=%an|%s|%(trailers:key=Tool-Use-Id,valueonly,separator=)',
  )
}

const folder = (): string => path.join(dataDir, 'memories')

describe('a person edit after a kill of one of Claude commands', () => {
  it.each([
    [
      'str_replace',
      `{ command: 'str_replace', path: '/memories/keep.md', old_str: 'one', new_str: 'ONE' }`,
    ],
    [
      'str_replace the tool refuses',
      `{ command: 'str_replace', path: '/memories/keep.md', old_str: 'zzz', new_str: 'ONE' }`,
    ],
    ['rename', `{ command: 'rename', old_path: '/memories/keep.md', new_path: '/memories/k2.md' }`],
    ['delete', `{ command: 'delete', path: '/memories/keep.md' }`],
  ])(
    'is not credited to Claude when the %s had not changed the folder',
    async (_name, command) => {
      await seed()
      await child(
        `${KILL_BEFORE_CHANGE}
        await memory.execute(${command}, { actor: 'claude', conversationId: 'c_kill', toolUseId: 'toolu_killed' })
        process.stdout.write('finished\\n')`,
        command.includes('zzz'),
      )
      expect(fs.readFileSync(path.join(folder(), 'keep.md'), 'utf8')).toBe('one\n')
      fs.writeFileSync(path.join(folder(), 'keep.md'), 'one\nMY NOTE by the person\n')
      const last = await reopen()
      expect(last).not.toContain('toolu_killed')
      expect(last).toContain('MY NOTE by the person')
      expect(last).toContain('Save changes found at start-up')
    },
    120_000,
  )

  it('is not credited to Claude when made to the file a rename had just moved', async () => {
    await seed()
    await child(`${KILL_AFTER_MOVE}
      await memory.execute({ command: 'rename', old_path: '/memories/keep.md', new_path: '/memories/k2.md' }, { actor: 'claude', conversationId: 'c_kill', toolUseId: 'toolu_killed' })
      process.stdout.write('finished\\n')`)
    fs.writeFileSync(path.join(folder(), 'k2.md'), 'one\nMY NOTE by the person\n')
    const last = await reopen()
    expect(last).not.toContain('toolu_killed')
    expect(last).toContain('MY NOTE by the person')
    expect(last).toContain('Save changes found at start-up')
  }, 120_000)

  it('does not outlive the open that read it', async () => {
    await seed()
    await child(`${KILL_BEFORE_CHANGE}
      await memory.execute({ command: 'rename', old_path: '/memories/keep.md', new_path: '/memories/k2.md' }, { actor: 'claude', conversationId: 'c_kill', toolUseId: 'toolu_killed' })
      process.stdout.write('finished\\n')`)
    // An open that finds the folder unchanged commits nothing; the person then makes the same
    // rename themselves while Cairn is closed: it is theirs.
    await reopen()
    fs.renameSync(path.join(folder(), 'keep.md'), path.join(folder(), 'k2.md'))
    const last = await reopen()
    expect(last).not.toContain('toolu_killed')
  }, 120_000)
})
