/**
 * Git bundles (git's `bundle-format`, v2): a header naming the refs, then a pack holding
 * every object they need. `git bundle verify` and `git clone <file>` read what this writes.
 *
 *   # v2 git bundle
 *   3f1c…e9 refs/heads/main
 *   3f1c…e9 HEAD
 *
 *   PACK…
 */
import { createHash } from 'node:crypto'
import { deflateSync } from 'node:zlib'
import { wholeEntryHeader, type HistoryGit, type ObjectType } from '../history'

const SIGNATURE_V2 = '# v2 git bundle'
const SIGNATURE_V3 = '# v3 git bundle'

/** What a bundle holds: its refs, the commits it needs but lacks, and the pack. */
export interface ParsedBundle {
  readonly refs: ReadonlyArray<{ readonly oid: string; readonly name: string }>
  readonly prerequisites: ReadonlyArray<string>
  readonly pack: Uint8Array
}

/** Why a file is not a bundle Cairn can read. */
export class BundleError extends Error {}

/** Every object of `main`'s history, as a bundle whose `main` and `HEAD` are `head`. */
export async function writeBundle(history: HistoryGit, head: string): Promise<Buffer> {
  const objects = await reachableObjects(history, head)
  const header = Buffer.from(`${SIGNATURE_V2}\n${head} refs/heads/main\n${head} HEAD\n\n`)
  return Buffer.concat([header, await writePack(history, objects)])
}

/** Reads a bundle's header; the pack after it is returned as is. */
export function parseBundle(bytes: Uint8Array): ParsedBundle {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const end = buf.indexOf('\n\n')
  const first = buf.subarray(0, Math.min(buf.length, 20)).toString('latin1')
  if (
    end < 0 ||
    !(first.startsWith(`${SIGNATURE_V2}\n`) || first.startsWith(`${SIGNATURE_V3}\n`))
  ) {
    throw new BundleError('the file is not a git bundle')
  }
  const lines = buf.subarray(0, end).toString('utf8').split('\n').slice(1)
  const refs: Array<{ oid: string; name: string }> = []
  const prerequisites: string[] = []
  for (const line of lines) {
    if (line.startsWith('@')) {
      // v3 capabilities: only SHA-1 histories are readable here.
      if (line.startsWith('@object-format=') && line !== '@object-format=sha1') {
        throw new BundleError('the bundle uses an object format Cairn cannot read')
      }
      continue
    }
    const prerequisite = /^-([0-9a-f]{40})(?: .*)?$/.exec(line)
    if (prerequisite) {
      prerequisites.push(prerequisite[1] as string)
      continue
    }
    const ref = /^([0-9a-f]{40}) (\S+)$/.exec(line)
    if (!ref) throw new BundleError('the bundle’s header is damaged')
    refs.push({ oid: ref[1] as string, name: ref[2] as string })
  }
  const pack = buf.subarray(end + 2)
  if (pack.subarray(0, 4).toString('latin1') !== 'PACK') {
    throw new BundleError('the bundle holds no pack of objects')
  }
  return { refs, prerequisites, pack }
}

/** The commit a bundle's history ends in: `main`, else `HEAD`, else its only ref. */
export function bundleTip(bundle: ParsedBundle): string | null {
  const byName = (name: string) => bundle.refs.find((ref) => ref.name === name)?.oid
  return (
    byName('refs/heads/main') ??
    byName('HEAD') ??
    byName('refs/heads/master') ??
    (bundle.refs.length === 1 ? (bundle.refs[0]?.oid ?? null) : null)
  )
}

/** Every object reachable from `head`: commits, trees and blobs, each once. */
async function reachableObjects(
  history: HistoryGit,
  head: string,
): Promise<Array<{ oid: string; type: ObjectType }>> {
  const found: Array<{ oid: string; type: ObjectType }> = []
  const seen = new Set<string>()
  const trees: string[] = []
  const commits = [head]
  while (commits.length > 0) {
    const oid = commits.pop() as string
    if (seen.has(oid)) continue
    seen.add(oid)
    found.push({ oid, type: 'commit' })
    const commit = await history.objects.readCommit(oid)
    trees.push(commit.tree)
    commits.push(...commit.parents)
  }
  while (trees.length > 0) {
    const oid = trees.pop() as string
    if (seen.has(oid)) continue
    seen.add(oid)
    found.push({ oid, type: 'tree' })
    for (const entry of await history.objects.readTree(oid)) {
      if (entry.kind === 'tree') trees.push(entry.oid)
      else if (!seen.has(entry.oid)) {
        seen.add(entry.oid)
        found.push({ oid: entry.oid, type: 'blob' })
      }
    }
  }
  return found
}

/** A version 2 pack of whole (undeltified) objects, checksummed as git expects. */
async function writePack(
  history: HistoryGit,
  objects: ReadonlyArray<{ oid: string; type: ObjectType }>,
): Promise<Buffer> {
  const parts: Buffer[] = []
  const header = Buffer.alloc(12)
  header.write('PACK', 0, 'latin1')
  header.writeUInt32BE(2, 4)
  header.writeUInt32BE(objects.length, 8)
  parts.push(header)
  for (const { oid, type } of objects) {
    const content = await rawContent(history, oid, type)
    parts.push(wholeEntryHeader(type, content.length), deflateSync(content))
  }
  const body = Buffer.concat(parts)
  return Buffer.concat([body, createHash('sha1').update(body).digest()])
}

// The object's bytes as stored (what its id hashes), rebuilt from the parsed forms.
async function rawContent(history: HistoryGit, oid: string, type: ObjectType): Promise<Buffer> {
  const bytes = await history.objects.readRaw(oid, type)
  if (history.objects.hash(type, bytes) !== oid) throw new Error(`object ${oid} does not hash back`)
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
