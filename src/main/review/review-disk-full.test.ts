/**
 * An approval whose write fails (a full disk) changes nothing and can be tried again: the
 * change stays pending and approvable. Needs to mount a small tmpfs (root, with the right to
 * mount); reported as skipped where that is not allowed.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { openVersionedMemory } from '../history'
import { createRecordingLogger } from '../lib/logger'
import { createReviewService } from './review-service'

/** True when this process may mount a tmpfs (root outside an unprivileged container). */
function canMount(): boolean {
  if (process.getuid?.() !== 0) return false
  const probe = mkdtempSync(path.join(os.tmpdir(), 'cairn-mount-probe-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' })
    execFileSync('umount', [probe], { stdio: 'ignore' })
    return true
  } catch {
    return false
  } finally {
    rmSync(probe, { recursive: true, force: true, maxRetries: 10 })
  }
}

/** Fills the disk at `mount` with `filler`, leaving less than 4 KiB. */
async function fill(filler: string): Promise<void> {
  let chunk = Buffer.alloc(64 * 1024, 1)
  const parts: Buffer[] = []
  for (;;) {
    try {
      parts.push(chunk)
      await writeFile(filler, Buffer.concat(parts))
    } catch {
      parts.pop()
      if (chunk.length <= 4096) break
      chunk = Buffer.alloc(chunk.length / 2, 1)
    }
  }
}

describe('an approval on a full disk', () => {
  it.runIf(canMount())(
    'fails with disk-full, keeps the change pending, and lands once there is room',
    async () => {
      const mount = await mkdtemp(path.join(os.tmpdir(), 'cairn-full-'))
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mount])
      const logger = createRecordingLogger()
      const memory = await openVersionedMemory({ dataDir: mount, watch: false, logger })
      const review = createReviewService({ memory, mode: 'all', logger })
      try {
        const text = 'x'.repeat(300_000)
        const waiting = review.execute(
          { command: 'create', path: '/memories/big.md', file_text: text },
          { actor: 'claude', conversationId: 'c', toolUseId: 'toolu_full' },
        )
        await expect.poll(() => review.list().length).toBe(1)
        const [change] = review.list()

        // Fill the disk, leaving less room than the file needs.
        const filler = path.join(mount, 'filler')
        const { size } = await stat(mount)
        expect(size).toBeGreaterThan(0)
        await fill(filler)
        await expect(review.decide({ id: change!.id, decision: 'approve' })).rejects.toMatchObject({
          code: 'disk-full',
        })
        expect(review.list()).toMatchObject([{ id: change!.id, problem: null }])
        await expect(stat(path.join(mount, 'memories', 'big.md'))).rejects.toThrow()

        await rm(filler)
        const approved = await review.decide({ id: change!.id, decision: 'approve' })
        expect(approved.commit).toMatchObject({ review: 'approved', toolUseId: 'toolu_full' })
        expect((await waiting).isError).toBe(false)
        expect((await stat(path.join(mount, 'memories', 'big.md'))).size).toBe(text.length)
      } finally {
        review.close()
        await memory.close()
        execFileSync('umount', [mount])
        await rm(mount, { recursive: true, force: true, maxRetries: 10 })
      }
    },
  )

  it.runIf(canMount())(
    'an outside edit that cannot be committed for want of room leaves the change approvable',
    async () => {
      const mount = await mkdtemp(path.join(os.tmpdir(), 'cairn-full-'))
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mount])
      const logger = createRecordingLogger()
      const memory = await openVersionedMemory({ dataDir: mount, watch: false, logger })
      const review = createReviewService({ memory, mode: 'all', logger })
      const file = path.join(mount, 'memories', 'a.md')
      try {
        const padding = 'x'.repeat(20_000)
        await memory.execute(
          { command: 'create', path: '/memories/a.md', file_text: `I like tea.\n${padding}\n` },
          { actor: 'user' },
        )
        const waiting = review.execute(
          { command: 'str_replace', path: '/memories/a.md', old_str: 'tea', new_str: 'coffee' },
          { actor: 'claude', conversationId: 'c', toolUseId: 'toolu_outside' },
        )
        await expect.poll(() => review.list().length).toBe(1)
        const [change] = review.list()
        // Another editor adds a line elsewhere; the approval must commit it first, and the
        // disk is full.
        await appendFile(file, `Outside: my dog is Rex.\n${'y'.repeat(20_000)}\n`)
        const filler = path.join(mount, 'filler')
        await fill(filler)
        const first = review.decide({ id: change!.id, decision: 'approve' })
        await expect(first).rejects.toMatchObject({ code: 'disk-full' })
        expect(review.list()).toMatchObject([{ id: change!.id, problem: null }])

        await rm(filler)
        // With room again the outside edit is committed, and the person sees the new diff.
        await expect(review.decide({ id: change!.id, decision: 'approve' })).rejects.toMatchObject({
          code: 'review-outdated',
        })
        expect(review.list()).toMatchObject([{ id: change!.id, problem: null }])
        expect(review.list()[0]!.before).toContain('Outside: my dog is Rex.')
        const approved = await review.decide({ id: change!.id, decision: 'approve' })
        expect(approved.commit).toMatchObject({ review: 'approved', toolUseId: 'toolu_outside' })
        expect((await waiting).isError).toBe(false)
        const text = await readFile(file, 'utf8')
        expect(text.startsWith('I like coffee.\n')).toBe(true)
        expect(text).toContain('Outside: my dog is Rex.')
      } finally {
        review.close()
        await memory.close()
        execFileSync('umount', [mount])
        await rm(mount, { recursive: true, force: true, maxRetries: 10 })
      }
    },
  )
})
