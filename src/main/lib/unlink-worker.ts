/**
 * Unlinks files on a thread of its own (`worker_threads`), a batch at a time: one message
 * there and one back per batch, where the thread pool takes a request per file — a wakeup of
 * a pool worker, a hand-back through libuv's `wq_mutex` and a promise on the main thread each.
 * Maintenance removes tens of thousands of loose files after a pass (docs/performance.md,
 * stop 21).
 *
 * The thread unlinks synchronously, in order, and looks at a shared flag before each file:
 * `halt()` (a command queued, the history closing) stops it after the unlink in progress, and
 * the batch resolves with how far it got. An unlink can wait for the disk to discard what it
 * frees; the main thread never does.
 *
 * Outside the `disk` seam, so no test's fault wrapper sees these calls: maintenance uses this
 * only while the seam is the real file system (`usesNodeDisk`), and the thread pool otherwise.
 */
import { Worker } from 'node:worker_threads'

// Plain CommonJS the thread evaluates: nothing to bundle, nothing of Electron's.
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const { unlinkSync } = require('node:fs')
const halted = new Int32Array(workerData.halted)
parentPort.on('message', (paths) => {
  const failed = []
  let done = 0
  while (done < paths.length && Atomics.load(halted, 0) === 0) {
    try {
      unlinkSync(paths[done])
    } catch {
      failed.push(done)
    }
    done++
  }
  parentPort.postMessage({ done, failed })
})
`

/** How far a batch got: its first `done` paths were tried; `failed` (indices) were not removed. */
export interface UnlinkBatch {
  readonly done: number
  readonly failed: ReadonlyArray<number>
}

export class UnlinkWorker {
  private readonly halted = new Int32Array(new SharedArrayBuffer(4))
  private worker: Worker | null = null
  private pending: {
    resolve: (batch: UnlinkBatch) => void
    reject: (error: Error) => void
  } | null = null
  private closed = false

  /**
   * Unlinks `paths` in order, until all were tried or `halt()` was called (then after the one
   * in progress). One batch at a time; a file that could not be unlinked (gone, or the disk
   * refused) is listed in `failed` and the batch goes on.
   */
  unlink(paths: ReadonlyArray<string>): Promise<UnlinkBatch> {
    if (this.closed) return Promise.reject(new Error('unlink worker closed'))
    if (this.pending) return Promise.reject(new Error('unlink worker busy'))
    const worker = this.start()
    Atomics.store(this.halted, 0, 0)
    return new Promise<UnlinkBatch>((resolve, reject) => {
      this.pending = { resolve, reject }
      worker.postMessage(paths)
    })
  }

  /** Ends the batch in progress after its current unlink (a command came). */
  halt(): void {
    Atomics.store(this.halted, 0, 1)
  }

  /** Halts the batch in progress, waits for its answer, and ends the thread. */
  async close(): Promise<void> {
    this.closed = true
    this.halt()
    const worker = this.worker
    if (!worker) return
    this.worker = null
    if (this.pending) {
      await new Promise<void>((resolve) => {
        const pending = this.pending
        if (!pending) return resolve()
        const { resolve: done, reject } = pending
        this.pending = {
          resolve: (batch) => {
            done(batch)
            resolve()
          },
          reject: (error) => {
            reject(error)
            resolve()
          },
        }
      })
    }
    await worker.terminate()
  }

  private start(): Worker {
    if (this.worker) return this.worker
    const worker = new Worker(SOURCE, { eval: true, workerData: { halted: this.halted.buffer } })
    // A pass in progress keeps its own promise alive; the thread must not keep the app's.
    worker.unref()
    worker.on('message', (batch: UnlinkBatch) => this.settle(null, batch))
    worker.on('error', (error) => this.fail(error))
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null
      this.fail(new Error(`unlink worker exited (${code})`))
    })
    this.worker = worker
    return worker
  }

  private fail(error: Error): void {
    this.settle(error, null)
  }

  private settle(error: Error | null, batch: UnlinkBatch | null): void {
    const pending = this.pending
    this.pending = null
    if (!pending) return
    if (error) pending.reject(error)
    else pending.resolve(batch as UnlinkBatch)
  }
}
