/**
 * Test support for the disk seam: a wrapper that counts every call and can act before any
 * one of them (fail it with an errno, or change the folder first). Used by the fault
 * injection, race and fuzz tests; never by the app.
 */

import type { Stats } from 'node:fs'
import { nodeDisk, type Disk } from './disk'

/** One call about to be made through the seam. */
export interface DiskCall {
  /** 1-based position among all calls since the wrapper was made. */
  readonly n: number
  /** `openSync`, `promises.readFile`, … */
  readonly name: string
  readonly args: ReadonlyArray<unknown>
}

/**
 * What to do before a call: nothing (undefined), or an error to fail it with (thrown for a
 * synchronous call, a rejection for an asynchronous one).
 */
export type BeforeCall = (call: DiskCall) => Error | undefined | void

/** `inner` with `before` run ahead of every call. `calls()` tells how many were made. */
export function hookDisk(
  inner: Disk,
  before: BeforeCall,
): { readonly disk: Disk; calls(): number } {
  let n = 0
  const out: Record<string, unknown> = {}
  const promises: Record<string, unknown> = {}
  for (const [name, fn] of Object.entries(inner)) {
    if (name === 'promises') continue
    const sync = name !== 'fsync' && name !== 'write' && name !== 'ftruncate'
    out[name] = (...args: unknown[]) => {
      const error = before({ n: ++n, name, args })
      if (error) {
        if (sync) throw error
        return Promise.reject(error)
      }
      return (fn as (...a: unknown[]) => unknown)(...args)
    }
  }
  for (const [name, fn] of Object.entries(inner.promises)) {
    promises[name] = (...args: unknown[]) => {
      const error = before({ n: ++n, name: `promises.${name}`, args })
      if (error) return Promise.reject(error)
      return (fn as (...a: unknown[]) => unknown)(...args)
    }
  }
  out.promises = promises
  return { disk: out as unknown as Disk, calls: () => n }
}

/**
 * An errno error as node makes them: `code`, `syscall`, and the path in the message (so a
 * test sees it if the message ever reaches Claude or the window).
 */
export function errnoError(call: DiskCall, code: string): NodeJS.ErrnoException {
  const target = call.args.find((arg) => typeof arg === 'string')
  const where = typeof target === 'string' ? ` '${target}'` : ''
  return Object.assign(new Error(`${code}: injected fault, ${call.name}${where}`), {
    code,
    syscall: call.name,
    path: target,
    errno: -1,
  })
}

/**
 * `before` with `access` answered as the account the process looks like. The tests run as
 * root, who may read everything, and fake another account (`process.getuid` made to return
 * 4242); `mayNotRead` asks the kernel (`access`) where the permission bits say no, and the
 * kernel, asked by root, says yes. Through this, an `accessSync` the permission bits refuse
 * that account (owner, then group, then others; no ACLs) fails with EACCES, as the kernel
 * would answer it. With the real uid (root) every call passes untouched.
 */
export function asTheAccount(before: BeforeCall): BeforeCall {
  return (call) => accessAsTheAccount(call) ?? before(call)
}

function accessAsTheAccount(call: DiskCall): Error | undefined {
  if (call.name !== 'accessSync') return undefined
  const uid = process.getuid?.()
  if (uid === undefined || uid === 0) return undefined
  let stats: Stats
  try {
    stats = nodeDisk.statSync(String(call.args[0]))
  } catch {
    return undefined // The call itself fails as it should (ENOENT, ...).
  }
  const wanted = Number(call.args[1]) & 0o7
  const groups = process.getgroups?.() ?? []
  const shift =
    stats.uid === uid ? 6 : stats.gid === process.getgid?.() || groups.includes(stats.gid) ? 3 : 0
  return ((stats.mode >> shift) & wanted) === wanted ? undefined : errnoError(call, 'EACCES')
}

/**
 * `inner` (the real file system unless told), keeping the descriptors `openSync` hands out for
 * a file `targets` picks: `opened` holds those still open as far as it knows (a number the
 * kernel gives again to a file not picked is dropped), for a hook to tell the calls made on
 * them. A caller that also sees the closes may delete from it.
 */
export function openedOn(
  targets: (file: string) => boolean,
  inner: Disk = nodeDisk,
): {
  readonly disk: Disk
  readonly opened: Set<number>
} {
  const opened = new Set<number>()
  const disk: Disk = {
    ...inner,
    openSync(file, flags, mode) {
      const fd = inner.openSync(file, flags, mode)
      if (targets(file)) opened.add(fd)
      else opened.delete(fd)
      return fd
    },
  }
  return { disk, opened }
}

/**
 * The real file system with the close of every descriptor opened on a path `targets` picks
 * failing with `code`, once each, after the descriptor was released (as Linux does with a
 * close that fails: EIO from a write-back, an NFS server gone). Every other call, and every
 * other close, goes through untouched. `failed()` tells how many closes were failed so far.
 */
export function closesFailing(
  targets: (file: string) => boolean,
  code = 'EIO',
): { readonly disk: Disk; failed(): number } {
  const { disk: recording, opened: picked } = openedOn(targets)
  let failed = 0
  const hooked = hookDisk(recording, (call) => {
    if (call.name !== 'closeSync') return undefined
    const fd = call.args[0] as number
    if (!picked.delete(fd)) return undefined
    nodeDisk.closeSync(fd)
    failed++
    return errnoError(call, code)
  })
  return { disk: hooked.disk, failed: () => failed }
}
