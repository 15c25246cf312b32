/**
 * Whether the process a lock file names still holds it. A process id alone proves little: after
 * a crash or a power cut the id is often reused (at once on Windows, or by anything started
 * after a reboot), and "Cairn is already open" would then block every start for good. So a
 * lock also records what tells its process apart from a later one with the same id: the
 * boot it was written in, the process's start time and its process namespace (Linux), checked
 * here. A process id names a process only in its own namespace: a Cairn in another one (a
 * Flatpak Cairn beside a native one, `unshare -p`) is invisible in this `/proc`, or its id names
 * an unrelated process here, so its lock is held until it is from an earlier boot.
 */
import os from 'node:os'
import { disk } from './disk'

/** What a lock records besides its process id, where the system tells it (Linux). */
export interface HolderIdentity {
  /** `/proc/sys/kernel/random/boot_id`: a new value at every boot. */
  readonly boot?: string
  /** Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot. */
  readonly started?: string
  /** `/proc/self/ns/pid` (`pid:[4026531836]`): the process namespace its id is counted in. */
  readonly pidns?: string
}

/** A lock's holder as its file names it (older lock files have no identity fields). */
export interface LockHolder extends HolderIdentity {
  readonly pid: number
  /** When the lock was written (ISO 8601). */
  readonly since: string
}

// A lock written this long before the boot time computed from the uptime is from an earlier
// boot: the margin covers the uptime's rounding and small clock corrections.
const BOOT_MARGIN_MS = 60_000

/** This process's identity, to record in its lock. */
export function ownIdentity(): HolderIdentity {
  const boot = bootId()
  const started = startTime(process.pid)
  const pidns = ownPidNamespace()
  return { ...(boot ? { boot } : {}), ...(started ? { started } : {}), ...(pidns ? { pidns } : {}) }
}

/**
 * True while the holder's process still runs: its id is alive and, where the lock says which
 * process it was, it is that one. A lock written before the last boot is never held.
 */
export function holderStillRunning(holder: LockHolder): boolean {
  // Written in another process namespace (or ours cannot be read): its id says nothing of the
  // processes listed here. Held while it may be from this boot, as a lock with no way to check.
  if (holder.pidns !== undefined && holder.pidns !== ownPidNamespace()) return mayBeThisBoot(holder)
  try {
    process.kill(holder.pid, 0)
  } catch (error) {
    // EPERM: a process of another user has the id; what follows tells whether it is the holder.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
  }
  // A process that exited but was not reaped yet (a zombie) still answers kill(pid, 0) and keeps
  // its start time; under a parent that never waits (a launcher, a container's PID 1) it stays
  // so for good, and the folder would stay locked until a reboot. It holds nothing any more.
  if (exited(holder.pid)) return false
  if (!mayBeThisBoot(holder)) return false
  // Same boot: the id names the holder only if that process started when the holder did.
  const started = holder.started && bootId() && holder.boot ? startTime(holder.pid) : null
  return !(started && started !== holder.started)
}

// False for a lock written in an earlier boot: by its boot id, or with none to compare (an older
// lock, a system without one) when written before the system started.
function mayBeThisBoot(holder: LockHolder): boolean {
  const boot = bootId()
  if (holder.boot && boot) return holder.boot === boot
  const since = Date.parse(holder.since)
  const bootedAt = Date.now() - os.uptime() * 1000
  return !(Number.isFinite(since) && since < bootedAt - BOOT_MARGIN_MS)
}

/**
 * True when the lock says it was written in this boot (its boot id is this system's). False for
 * another boot, or where either side has no boot id to compare.
 */
export function fromThisBoot(holder: HolderIdentity): boolean {
  const boot = bootId()
  return boot !== null && holder.boot === boot
}

function bootId(): string | null {
  return readProc('/proc/sys/kernel/random/boot_id')?.trim() || null
}

function ownPidNamespace(): string | null {
  if (process.platform !== 'linux') return null
  try {
    return disk.readlinkSync('/proc/self/ns/pid')
  } catch {
    return null
  }
}

function startTime(pid: number): string | null {
  const started = statField(pid, 22)
  return started && /^\d+$/.test(started) ? started : null
}

// Field 3 of `/proc/<pid>/stat`, the state: `Z` (zombie) or `X` (dead) once the process exited.
function exited(pid: number): boolean {
  const state = statField(pid, 3)
  return state === 'Z' || state === 'X'
}

// Sample: `4242 (Cairn Helper (Renderer)) S 1 4242 … 20 0 23 0 3141592 …`; the name may hold
// spaces and parentheses, so the fields are counted after its last `)`, from field 3 on.
function statField(pid: number, field: number): string | null {
  const stat = readProc(`/proc/${pid}/stat`)
  if (!stat) return null
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[field - 3] ?? null
}

/**
 * A `/proc` file's text; null where there is no `/proc` (not Linux) or the file cannot be read
 * (the process exited, or is another user's).
 */
export function readProc(file: string): string | null {
  if (process.platform !== 'linux') return null
  try {
    return disk.readFileSync(file).toString('utf8')
  } catch {
    return null
  }
}
