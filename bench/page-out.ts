import fs from 'node:fs'
import path from 'node:path'

/** Where Linux's DAMON keeps its sysfs interface. */
export const DAMON_ADMIN = '/sys/kernel/mm/damon/admin'
/** DAMON_RECLAIM, the kernel's own page-out module, when built in. */
export const DAMON_RECLAIM = '/sys/module/damon_reclaim/parameters'

const read = (file: string): string | null => {
  try {
    return fs.readFileSync(file, 'utf8').trim()
  } catch {
    return null
  }
}

const entries = (dir: string): string[] => {
  try {
    return fs
      .readdirSync(dir)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(a) - Number(b))
  } catch {
    return []
  }
}

/**
 * Whether the kernel drops idle pages from memory on its own, in words for the bench's notes,
 * or null where it does not (no DAMON, or no running kdamond with a `pageout` scheme).
 *
 * Some virtual machines run DAMON with a `pageout` scheme on physical memory whatever the free
 * memory: file pages not read for a minute or more leave the page cache, so an object folder's
 * directory blocks or a loose object untouched that long is read from the disk again: the
 * pass at 100,000 commits reads back what it dropped (docs/performance.md, stop 26). A
 * desktop distribution does not run it by default. Reads only; changes nothing.
 *
 * The files read, one value each (`admin` is `/sys/kernel/mm/damon/admin` by default, and
 * `reclaim` the module's parameters, `enabled` Y or N and `min_age` in µs):
 *
 *   kdamonds/0/state                                          on
 *   kdamonds/0/contexts/0/monitoring_attrs/intervals/aggr_us  5000000
 *   kdamonds/0/contexts/0/schemes/0/action                    pageout
 *   kdamonds/0/contexts/0/schemes/0/access_pattern/age/min    12
 *   kdamonds/0/contexts/0/schemes/0/quotas/bytes              134217728
 */
export function pageOutNote(admin = DAMON_ADMIN, reclaim = DAMON_RECLAIM): string | null {
  const found: string[] = []
  if (read(path.join(reclaim, 'enabled')) === 'Y') {
    const minAgeUs = Number(read(path.join(reclaim, 'min_age')))
    found.push(
      `DAMON_RECLAIM: pages idle ${minAgeUs > 0 ? `~${Math.round(minAgeUs / 1e6)} s` : 'a while'} or more dropped`,
    )
  }
  const kdamonds = path.join(admin, 'kdamonds')
  for (const k of entries(kdamonds)) {
    const kdamond = path.join(kdamonds, k)
    if (read(path.join(kdamond, 'state')) !== 'on') continue
    for (const c of entries(path.join(kdamond, 'contexts'))) {
      const context = path.join(kdamond, 'contexts', c)
      const aggrUs = Number(read(path.join(context, 'monitoring_attrs/intervals/aggr_us')))
      for (const s of entries(path.join(context, 'schemes'))) {
        const scheme = path.join(context, 'schemes', s)
        if (read(path.join(scheme, 'action')) !== 'pageout') continue
        const minAge = Number(read(path.join(scheme, 'access_pattern/age/min')))
        const idleS = Number.isFinite(aggrUs * minAge) ? Math.round((aggrUs * minAge) / 1e6) : null
        const quota = Number(read(path.join(scheme, 'quotas/bytes')))
        found.push(
          `kdamond ${k}: pages idle ${idleS === null ? 'a while' : `~${idleS} s`} or more dropped` +
            (quota > 0 ? `, up to ${Math.round(quota / 1024 / 1024)} MiB/s` : ''),
        )
      }
    }
  }
  if (found.length === 0) return null
  return `machine: DAMON page-out on (${found.join('; ')}), whatever the free memory: an object folder's blocks or a loose object untouched that long may have to be read from the disk again, as the first pack at 100,000 commits does (docs/performance.md, stop 26)`
}
