import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { UnlinkWorker } from './unlink-worker'

let dir: string
let worker: UnlinkWorker

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'cairn-unlink-'))
  worker = new UnlinkWorker()
})
afterEach(async () => {
  await worker.close()
  rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
})

function files(count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const file = path.join(dir, `f-${i}`)
    writeFileSync(file, `${i}\n`)
    return file
  })
}

describe('UnlinkWorker', () => {
  it('unlinks a batch in order on its own thread, and the next batch on the same one', async () => {
    const first = files(300)
    expect(await worker.unlink(first)).toEqual({ done: 300, failed: [] })
    expect(first.filter((file) => existsSync(file))).toEqual([])
    const second = [path.join(dir, 'g-1'), path.join(dir, 'g-2')]
    for (const file of second) writeFileSync(file, '')
    expect(await worker.unlink(second)).toEqual({ done: 2, failed: [] })
    expect(second.some((file) => existsSync(file))).toBe(false)
  })

  it('lists what it could not unlink and goes on with the rest', async () => {
    const [a, b] = files(2)
    // A folder with something in it cannot be unlinked; a missing file is not there to.
    const folder = path.join(dir, 'folder')
    mkdirSync(folder)
    writeFileSync(path.join(folder, 'inside'), '')
    const missing = path.join(dir, 'missing')
    const batch = await worker.unlink([folder, a!, missing, b!])
    expect(batch).toEqual({ done: 4, failed: [0, 2] })
    expect(existsSync(a!)).toBe(false)
    expect(existsSync(b!)).toBe(false)
    expect(existsSync(path.join(folder, 'inside'))).toBe(true)
  })

  it('halted, stops before the files it has not reached; the next batch runs whole', async () => {
    const all = files(2000)
    const batch = worker.unlink(all)
    // Halted as the batch is sent: the thread is still starting, so it reaches none of them.
    worker.halt()
    const { done, failed } = await batch
    expect(failed).toEqual([])
    expect(done).toBeLessThan(all.length)
    expect(all.filter((file) => existsSync(file))).toEqual(all.slice(done))
    expect(await worker.unlink(all.slice(done))).toEqual({ done: all.length - done, failed: [] })
    expect(all.some((file) => existsSync(file))).toBe(false)
  })

  it('closed during a batch: the batch answers with how far it got, and the worker takes no more', async () => {
    const all = files(2000)
    const batch = worker.unlink(all)
    await worker.close()
    const { done } = await batch
    expect(done).toBeLessThan(all.length)
    expect(all.filter((file) => existsSync(file))).toEqual(all.slice(done))
    await expect(worker.unlink(all)).rejects.toThrow('closed')
    expect(existsSync(all.at(-1)!)).toBe(true)
  })

  it('one batch at a time', async () => {
    const all = files(10)
    const first = worker.unlink(all)
    await expect(worker.unlink(all)).rejects.toThrow('busy')
    expect((await first).done).toBe(10)
  })
})
