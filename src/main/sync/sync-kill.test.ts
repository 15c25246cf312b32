/**
 * A machine killed (SIGKILL) at arbitrary points of its syncs — mid-fetch, mid-merge, mid-move
 * of `main`, mid-push — while another machine keeps changing the remote. Every time, its
 * history and folder must open valid, and in the end one sync completes with no line lost.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { startGitServer, type GitServer } from '../../../test/fixtures/git-server'
import { folderFiles, headFiles } from '../history/test-helpers'
import { expectSound, linesOfHistory, startMachine } from './test-support'

const child = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../test/fixtures/sync-child.ts',
)

let server: GitServer
beforeAll(async () => {
  server = await startGitServer()
})
afterAll(async () => {
  await server.close()
})

/** Runs the child until it has written `lines` lines, then `delayMs` more, then kills it. */
function runAndKill(
  dataDir: string,
  url: string,
  round: number,
  lines: number,
  delayMs: number,
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', child, dataDir, url, server.user, server.token, String(round)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    const written: string[] = []
    let errors = ''
    let buffered = ''
    let killing = false
    proc.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      let newline = buffered.indexOf('\n')
      while (newline >= 0) {
        const line = buffered.slice(0, newline)
        buffered = buffered.slice(newline + 1)
        if (line.startsWith('wrote ')) written.push(line.slice('wrote '.length))
        newline = buffered.indexOf('\n')
      }
      if (!killing && written.length >= lines) {
        killing = true
        setTimeout(() => proc.kill('SIGKILL'), delayMs)
      }
    })
    proc.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()))
    proc.on('error', reject)
    proc.on('exit', (_code, signal) => {
      if (signal === 'SIGKILL') resolve(written)
      else reject(new Error(`the child stopped on its own: ${errors.slice(0, 2000)}`))
    })
  })
}

it('opens valid after every kill, and the next sync completes with nothing lost', async () => {
  const repo = 'killed'
  server.createRepo(repo)
  const laptopDir = await mkdtemp(path.join(os.tmpdir(), 'cairn-killed-'))
  const desktop = await startMachine('desktop')
  const written: string[] = []
  try {
    await desktop.write('desktop/seed.md', 'desktop seed\n')
    await desktop.connect(server, repo)
    await desktop.sync()
    // The laptop starts from the remote's memory, so its later syncs merge, never ask.
    const first = await startMachine('laptop', { dataDir: laptopDir })
    await first.connect(server, repo)
    expect((await first.sync()).state).toBe('idle')
    await first.close()
    // Kill points spread over the sync: right after a write, during fetch, merge and push.
    const delays = [0, 3, 9, 17, 30, 55, 90, 140]
    for (const [round, delay] of delays.entries()) {
      written.push(
        ...(await runAndKill(laptopDir, server.url(repo), round, 1 + (round % 3), delay)),
      )
      // Whatever the kill interrupted, the folder opens equal to HEAD and the repository sound.
      const laptop = await startMachine('laptop', { dataDir: laptopDir })
      try {
        expect(headFiles(laptopDir)).toEqual(await folderFiles(laptopDir))
        laptop.git('fsck', '--strict', '--no-dangling')
      } finally {
        await laptop.close()
      }
      const line = `desktop round ${round}`
      written.push(line)
      await desktop.write(`desktop/r${round}.md`, `${line}\n`)
      await desktop.sync()
    }
    const laptop = await startMachine('laptop', { dataDir: laptopDir })
    try {
      const final = await laptop.sync()
      expect(final.error ?? null).toBeNull()
      expect(final.state).toMatch(/^(idle|conflicts)$/)
      await desktop.sync()
      expect(await desktop.files()).toEqual(await laptop.files())
      const remote = await expectSound(server, repo, [laptop, desktop])
      const union = linesOfHistory(remote)
      expect(written.filter((line) => !union.has(line))).toEqual([])
    } finally {
      await laptop.close()
    }
  } finally {
    await desktop.close()
    await rm(laptopDir, { recursive: true, force: true, maxRetries: 10 })
  }
}, 180_000)
