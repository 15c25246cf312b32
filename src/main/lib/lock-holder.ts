/**
 * Whether the process a lock file names still holds it. A process id alone proves little: after
 * a crash or a power cut the id is often reused (at once on Windows, or by anything started
 * after a reboot), and "Cairn is already open" would then block every start for good. So a
 * lock also records what tells its process apart from a later one with the same id: the
 * boot it was written in, the process's start time, its process namespace and its machine
 * (Linux), checked here. A process id names a process only in its own namespace: a Cairn in
 * another one (a Flatpak Cairn beside a native one, `unshare -p`) is invisible in this `/proc`,
 * or its id names an unrelated process here, so its lock is held until it is from an earlier
 * boot.
 *
 * An earlier boot is told from another machine (cloned containers and VM images share a machine
 * id, and older locks record none) only where no other machine can have written the lock: a
 * lock written after this boot began is another machine's (its boot id is not this one's, yet
 * this system was running), and one written before is this machine's only on a file system no
 * other system mounts (ext4, btrfs, tmpfs: `LOCAL_FILE_SYSTEMS`); on a shared one (NFS, SMB,
 * 9p, virtiofs, any FUSE) it is held, and a person removes it.
 */
import os from 'node:os'
import path from 'node:path'
import { disk, diskInUse, type Disk } from './disk'

/** What a lock records besides its process id, where the system tells it (Linux). */
export interface HolderIdentity {
  /** `/proc/sys/kernel/random/boot_id`: a new value at every boot. */
  readonly boot?: string
  /** Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot. */
  readonly started?: string
  /** `/proc/self/ns/pid` (`pid:[4026531836]`): the process namespace its id is counted in. */
  readonly pidns?: string
  /** `/etc/machine-id` (32 hex digits): the system it runs on (clones may share one). */
  readonly machine?: string
}

/** A lock's holder as its file names it (older lock files have no identity fields). */
export interface LockHolder extends HolderIdentity {
  readonly pid: number
  /** When the lock was written (ISO 8601). */
  readonly since: string
}

// A lock without a boot id written this long before the boot time computed from the uptime is
// from an earlier boot: the margin covers the uptime's rounding and small clock corrections.
const BOOT_MARGIN_MS = 60_000

/** This process's identity, to record in its lock. */
export function ownIdentity(): HolderIdentity {
  const boot = bootId()
  const started = once('started', () => startTime(process.pid))
  const pidns = ownPidNamespace()
  const machine = machineId()
  return {
    ...(boot ? { boot } : {}),
    ...(started ? { started } : {}),
    ...(pidns ? { pidns } : {}),
    ...(machine ? { machine } : {}),
  }
}

/**
 * True while the holder's process still runs: its id is alive and, where the lock says which
 * process it was, it is that one. A lock written before the last boot is never held; one of
 * another machine (by its machine id) always is. `lockFile`: where the lock is, whose file
 * system tells whether another system may have written it (see the top of this file).
 */
export function holderStillRunning(holder: LockHolder, lockFile: string): boolean {
  // Another system's, by its machine id: nothing here tells whether its process runs.
  if (holder.machine !== undefined && holder.machine !== machineId()) return true
  // Another boot's: an earlier one of this system holds nothing; a clone's (the same machine id,
  // or none recorded) may run now, and its process id says nothing of the processes here.
  const boot = bootId()
  if (holder.boot && boot && holder.boot !== boot) return !writtenBeforeThisBoot(holder, lockFile)
  // Written in another process namespace (or ours cannot be read): its id says nothing of the
  // processes listed here. Held while it may be from this boot, as a lock with no way to check.
  if (!inOwnNamespace(holder)) return !writtenBeforeThisBoot(holder, lockFile)
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
  if (writtenBeforeThisBoot(holder, lockFile)) return false
  // Same boot: the id names the holder only if that process started when the holder did.
  const started = holder.started && fromThisBoot(holder) ? startTime(holder.pid) : null
  return !(started && started !== holder.started)
}

// True for a lock written in an earlier boot of this system: before it started (the boot id,
// where both sides have one, is another by now), where no other system can have written it. A
// lock written after this boot began with another boot id is another system's, running now.
// Where both boot ids are known and differ, the time only tells an earlier boot from a clone
// running now, so no margin: a Cairn started within a minute of a crash and a quick reboot (a
// VM reset, a panic that reboots) takes its own lock. A lock without a boot id keeps the margin.
function writtenBeforeThisBoot(holder: LockHolder, lockFile: string): boolean {
  if (fromThisBoot(holder)) return false
  const margin = holder.boot && bootId() ? 0 : BOOT_MARGIN_MS
  const since = Date.parse(holder.since)
  const bootedAt = Date.now() - os.uptime() * 1000
  const before = Number.isFinite(since) && since < bootedAt - margin
  return before && onlyThisSystemWrites(lockFile)
}

/**
 * File systems (`statfs(2)`'s `f_type`, Linux) that one system mounts at a time: a lock there
 * with another boot id was written by an earlier boot of this one, not by a clone running now.
 * ext2/3/4, XFS, Btrfs, tmpfs, F2FS, ZFS, overlayfs, FAT, exFAT, NTFS (both drivers), bcachefs.
 * Not listed, so never taken for this machine's: NFS, SMB, 9p, virtiofs and other FUSE.
 */
const LOCAL_FILE_SYSTEMS: ReadonlySet<number> = new Set([
  0xef53, 0x58465342, 0x9123683e, 0x01021994, 0xf2f52010, 0x2fc12fc1, 0x794c7630, 0x4d44,
  0x2011bab0, 0x5346544e, 0x7366746e, 0xca451a4e,
])

// True on Linux when the lock's folder is on a file system only this system mounts. Elsewhere
// (no boot id, no such types) a lock written before the system started is taken as its own, as
// before.
function onlyThisSystemWrites(lockFile: string): boolean {
  if (process.platform !== 'linux') return true
  try {
    return LOCAL_FILE_SYSTEMS.has(disk.statfsSync(path.dirname(lockFile)).type)
  } catch {
    return false
  }
}

/** True when the holder's id is counted in this process's namespace (one that is read). */
export function inOwnNamespace(holder: HolderIdentity): boolean {
  return holder.pidns === undefined || holder.pidns === ownPidNamespace()
}

/**
 * True when the lock says it was written in this boot (its boot id is this system's). False for
 * another boot, or where either side has no boot id to compare.
 */
export function fromThisBoot(holder: HolderIdentity): boolean {
  const boot = bootId()
  return boot !== null && holder.boot === boot
}

// What does not change while a process runs (its boot, machine, namespace, start time), read
// once per file system seam: the real one for the whole process, a test's for as long as it is
// in front (`setDisk`), so a test can make these reads fail.
const read = new WeakMap<Disk, Map<string, string | null>>()

function once(key: string, get: () => string | null): string | null {
  const seam = diskInUse()
  let known = read.get(seam)
  if (known === undefined) read.set(seam, (known = new Map()))
  if (!known.has(key)) known.set(key, get())
  return known.get(key) ?? null
}

function bootId(): string | null {
  return once('boot', () => readProc('/proc/sys/kernel/random/boot_id')?.trim() || null)
}

/** This system's machine id (`/etc/machine-id`, 32 hex digits), where it has one. */
export function machineId(): string | null {
  return once('machine', () => {
    const text = readProc('/etc/machine-id')?.trim() ?? ''
    return /^[0-9a-f]{32}$/.test(text) ? text : null
  })
}

function ownPidNamespace(): string | null {
  return once('pidns', () => {
    if (process.platform !== 'linux') return null
    try {
      return disk.readlinkSync('/proc/self/ns/pid')
    } catch {
      return null
    }
  })
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
