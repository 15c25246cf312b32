/**
 * A disk that fails once during a sync: the sync says so in plain words (never "internal",
 * never "damaged"), changes nothing it cannot finish, and the next sync completes. Real data
 * folders and a real git server on loopback; the disk seam fails the chosen call.
 */
import { describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { errnoError, hookDisk, type DiskCall } from '../lib/disk-hooks'
import { divergedMachines, expectSound, useSyncServer } from './test-support'

const sync = useSyncServer()

/** Runs `task` with the first call `matches` accepts failing with `code`; true if one did. */
async function failingOnce<T>(
  code: string,
  matches: (call: DiskCall) => boolean,
  task: () => Promise<T>,
): Promise<{ readonly result: T; readonly failed: boolean }> {
  let failed = false
  const undo = setDisk(
    hookDisk(nodeDisk, (call) => {
      if (failed || !matches(call)) return undefined
      failed = true
      return errnoError(call, code)
    }).disk,
  )
  try {
    return { result: await task(), failed }
  } finally {
    undo()
  }
}

const diverged = () => divergedMachines(sync, 'faults')

const fetchedPack = (call: DiskCall) =>
  typeof call.args[0] === 'string' && /[\\/]pack-[0-9a-f]+\.(pack|idx)$/.test(call.args[0])

/** The failures that used to surface as "internal": where they strike, and what is said. */
const plainCases: ReadonlyArray<{
  readonly what: string
  readonly code: string
  readonly expected: string
  readonly matches: (call: DiskCall) => boolean
}> = [
  {
    what: 'listing the remote-tracking refs',
    code: 'EIO',
    expected: 'io-error',
    matches: (call) =>
      call.name === 'readdirSync' && /refs[\\/]remotes[\\/]cairn-sync$/.test(String(call.args[0])),
  },
  {
    what: 'reading the lock file before the push',
    code: 'EIO',
    expected: 'io-error',
    matches: (call) => call.name === 'openSync' && /cairn\.lock$/.test(String(call.args[0])),
  },
  {
    what: 'saving the sync state after the push',
    code: 'ENOSPC',
    expected: 'disk-full',
    matches: (call) =>
      (call.name === 'writeFileSync' || call.name === 'promises.writeFile') &&
      String(call.args[1]).includes('"lastSyncedAt"'),
  },
]

describe('a sync on a disk that fails once', () => {
  for (const { what, code, expected, matches } of plainCases) {
    it(`says ${code} ${what} in plain words, and the next sync completes`, async () => {
      const { repo, laptop, desktop } = await diverged()
      const { result: first, failed } = await failingOnce(code, matches, () => desktop.sync())
      expect(failed).toBe(true)
      expect(first.state).toBe('error')
      expect(first.error?.code).toBe(expected)
      expect(first.error?.message).toMatch(/^The sync did not finish because the disk/)
      expect(first.error?.message).not.toContain(desktop.dir)

      const next = await desktop.sync()
      expect(next.error).toBeUndefined()
      expect(next.state).toBe('idle')
      await laptop.sync()
      expect((await laptop.files()).get('prefs.md')).toBe('Editor: Zed\n\nkeep\n\nTheme: dark\n')
      await expectSound(sync.server, repo, [laptop, desktop])
    })
  }

  for (const name of ['openSync', 'fstatSync'] as const) {
    it(`reports an I/O error opening a fetched pack (${name}), and the next sync completes`, async () => {
      const { repo, laptop, desktop } = await diverged()
      let opening = false
      const { result: first, failed } = await failingOnce(
        'EIO',
        (call) => {
          // fstatSync gets a descriptor: fail the one right after a pack file was opened.
          if (call.name === 'openSync') opening = fetchedPack(call)
          return call.name === name && (name === 'openSync' ? fetchedPack(call) : opening)
        },
        () => desktop.sync(),
      )
      expect(failed).toBe(true)
      expect(first.state).toBe('error')
      expect(first.error?.code).toBe('io-error')

      const next = await desktop.sync()
      expect(next.error).toBeUndefined()
      expect(next.state).toBe('idle')
      expect((await desktop.files()).get('prefs.md')).toBe('Editor: Zed\n\nkeep\n\nTheme: dark\n')
      await laptop.sync()
      await expectSound(sync.server, repo, [laptop, desktop])
    })
  }
})
