/**
 * Blame at a commit the side index does not hold: a person's `git reset --hard` moved `main`
 * back past it, and its objects are still on disk. The index's blame (`blame.ts`) walks
 * positions in the index, which such a commit has none of; here its first parents are walked
 * back to the newest commit the index holds, that commit's blame is taken as it is, and each
 * commit after it, oldest first, hands on the lines it kept and owns the lines it wrote, as
 * `git blame --first-parent` gives them. The file is followed at its one path: a rename among
 * those commits starts its lines afresh there.
 */
import type { BlameLine } from '../../shared/types'
import { CairnError } from '../lib/errors'
import { isLineText, lineText, notTextError, requireTraceableSize } from './blame-lines'
import { readingVersion } from './damage'
import { diffLines, splitLines } from './line-diff'
import type { Lookup } from './lookup'
import { segmentsOf, toRelative } from './paths'
import { toSummary } from './queries'
import { requireVersion, type RepoView } from './read'
import { entryFromCommit } from './side-index'

/** A line's commit, and whether its trace stopped short there (`BlameLine.damagedBefore`). */
type Owner = Pick<BlameLine, 'commit' | 'damagedBefore'>

/** Commits outside the index walked back at most before the trace is refused. */
export const BEYOND_INDEX_LIMIT = 1_000

/**
 * The lines of `virtual` at `oid` (a commit the index lacks), each with the commit that wrote
 * it; `indexed` is the index's own blame, asked for at the newest indexed first-parent
 * ancestor. Errors as `requireVersion`'s when the commit is gone ("rewritten outside Cairn").
 */
export async function blameBeyondIndex(
  repo: RepoView,
  lookup: Lookup,
  indexed: (path: string, at: string) => Promise<ReadonlyArray<BlameLine>>,
  virtual: string,
  oid: string,
): Promise<ReadonlyArray<BlameLine>> {
  await requireVersion(repo, oid)
  const segments = segmentsOf(toRelative(virtual))
  // Newest first: the commits the index lacks, back to the one it holds (or the root).
  const beyond: string[] = []
  let base: string | null = oid
  while (base !== null && !repo.entry(base)) {
    if (beyond.length >= BEYOND_INDEX_LIMIT) {
      throw new CairnError(
        'too-large',
        `Cannot trace the lines of ${virtual} in that version: it lies more than ${BEYOND_INDEX_LIMIT.toLocaleString('en-US')} changes away from the history Cairn keeps.`,
      )
    }
    beyond.push(base)
    const at: string = base
    base = (await readingVersion(at, () => repo.store.readCommit(at))).parent
  }
  const bytesAt = (commit: string): Promise<Uint8Array | null> =>
    readingVersion(commit, async () => {
      const blob = await lookup.blobAt(commit, segments)
      return blob === null ? null : repo.store.readBlob(blob)
    })

  const last = await bytesAt(oid)
  if (!last) throw new CairnError('not-found', `${virtual} is not a file in that version.`)
  if (!isLineText(last)) throw notTextError(virtual)
  const lastLines = splitLines(last)
  requireTraceableSize(virtual, last.length, lastLines.count)

  // The owner of each line of the version before the first commit the index lacks, with the
  // index's mark when the trace there stopped short (damage met, or a version it cannot see
  // past): a kept line keeps the mark, as it would in the index's own blame.
  let owners: Owner[] = []
  let before: Uint8Array = new Uint8Array(0)
  const baseBytes = base === null ? null : await bytesAt(base)
  if (base !== null && baseBytes) {
    before = baseBytes
    try {
      owners = (await indexed(virtual, base)).map(({ commit, damagedBefore }) =>
        damagedBefore ? { commit, damagedBefore } : { commit },
      )
    } catch (error) {
      // Not text or too large there: its lines are taken as that version's own, marked as
      // possibly older, since nothing before it was traced.
      if (!(error instanceof CairnError) || error.code === 'history-damaged') throw error
      const owner: Owner = { commit: toSummary(repo.entry(base)!), damagedBefore: true }
      owners = Array.from({ length: splitLines(baseBytes).count }, () => owner)
    }
  }
  for (const commit of beyond.reverse()) {
    const after = commit === oid ? last : ((await bytesAt(commit)) ?? new Uint8Array(0))
    const summary = toSummary(
      await readingVersion(commit, () => entryFromCommit(repo.store, commit)),
    )
    const written: Owner = { commit: summary }
    const next: Owner[] = []
    let kept = 0
    for (const hunk of diffLines(before, after)) {
      while (kept < hunk.oldStart) next.push(owners[kept++]!)
      for (let i = 0; i < hunk.newCount; i++) next.push(written)
      kept = hunk.oldStart + hunk.oldCount
    }
    while (kept < owners.length) next.push(owners[kept++]!)
    owners = next
    before = after
  }

  const text = Buffer.from(last.buffer, last.byteOffset, last.length)
  return owners.map(({ commit, damagedBefore }, i) => ({
    line: i + 1,
    text: lineText(text, lastLines.starts, i),
    commit,
    ...(damagedBefore ? { damagedBefore } : {}),
  }))
}
