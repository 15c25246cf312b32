/**
 * The git CLI run in a process of its own, for the git timings taken between Cairn's samples.
 *
 * Spawning git from the benchmark's own process forks that process, and a fork write-protects
 * every page the process has: the command timed next takes a page fault on each page it
 * writes. Measured here, one command after a `spawnSync('true')` in the same process took
 * 0.6 ms more at p50 than after an idle wait of the same length, or after the same spawn run
 * by another process. The app never forks between two commands, so Cairn's samples must not
 * pay for git's; the history benchmark still reports what a fork costs, in its notes.
 *
 * The parent sends one commit at a time; the child writes the file, runs `git add` and
 * `git commit`, and answers with the time that took, measured where it ran.
 */
import { fork, spawnSync, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

interface CommitRequest {
  readonly kind?: 'commit'
  readonly clone: string
  readonly file: string
  readonly content: string
  readonly subject: string
  readonly options: ReadonlyArray<string>
}

/** A bare spawn, for the benchmark's note on what a fork costs. */
interface SpawnRequest {
  readonly kind: 'spawn'
  readonly command: string
}

type Request = CommitRequest | SpawnRequest

type Answer = { readonly ms: number } | { readonly error: string }

/** A git CLI process for commits in work trees; `close` when done. */
export interface GitProcess {
  /** Writes `file` in `clone`, then `git add` and `git commit`; resolves with the time taken. */
  commit(request: CommitRequest): Promise<number>
  /** Runs `command` (no arguments) from the child; resolves with the time taken. */
  spawn(command: string): Promise<number>
  close(): void
}

/** Starts the child, which runs git with `env` (the benchmark's HOME and identity). */
export function startGitProcess(env: NodeJS.ProcessEnv): GitProcess {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['child'], {
    env,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  let waiting: { resolve: (ms: number) => void; reject: (error: Error) => void } | null = null
  child.on('message', (answer: Answer) => {
    const pending = waiting
    waiting = null
    if (!pending) return
    if ('error' in answer) pending.reject(new Error(answer.error))
    else pending.resolve(answer.ms)
  })
  child.on('exit', (code) => {
    waiting?.reject(new Error(`the git process exited (${code})`))
    waiting = null
  })
  const ask = (request: Request) => {
    if (waiting) return Promise.reject(new Error('one request at a time'))
    return new Promise<number>((resolve, reject) => {
      waiting = { resolve, reject }
      child.send(request)
    })
  }
  return {
    commit: (request) => ask({ ...request, kind: 'commit' }),
    spawn: (command) => ask({ kind: 'spawn', command }),
    close() {
      child.kill()
    },
  }
}

function runCommit({ clone, file, content, subject, options }: CommitRequest): Answer {
  const start = performance.now()
  writeFileSync(path.join(clone, file), content)
  for (const args of [
    [...options, 'add', '--', file],
    [...options, 'commit', '-q', '-m', subject],
  ]) {
    const result = spawnSync('git', args, { cwd: clone, encoding: 'utf8' })
    if (result.status !== 0) return { error: `git ${args.join(' ')} failed: ${result.stderr}` }
  }
  return { ms: performance.now() - start }
}

function run(request: Request): Answer {
  if (request.kind !== 'spawn') return runCommit(request)
  const start = performance.now()
  const result = spawnSync(request.command)
  if (result.status !== 0) return { error: `${request.command} failed` }
  return { ms: performance.now() - start }
}

if (process.argv[2] === 'child' && process.send) {
  process.on('message', (request: Request) => {
    let answer: Answer
    try {
      answer = run(request)
    } catch (error) {
      answer = { error: error instanceof Error ? error.message : String(error) }
    }
    process.send?.(answer)
  })
}
