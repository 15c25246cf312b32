/**
 * Issue #14's chain budget against a genuine history: a note grown over 300 commits and packed
 * by the real `git gc --aggressive` (chains over 100 deep) syncs whole, its chains under the budget.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PACK_CHAIN_BUDGET, PACK_OBJECT_CAP } from './git-fs'
import { packSizeProblem } from './pack-sizes'
import { expectSound, otherClient, useSyncServer } from './test-support'

const sync = useSyncServer()

describe('a remote whose history git packed in deep chains', () => {
  it('syncs whole: its chains, over 100 deep, pass the budget', async () => {
    const { repo, laptop } = await sync.alone('deep-chains')
    const remote = sync.server.gitdir(repo)
    const tip = otherClient(remote, null, 'rev-parse', 'main')
    // 300 commits, each adding a line of about 1 KB to notes.md and rewriting an earlier one:
    // git then deltas each version against the next (a file that only grew is the newest's
    // prefix, every older version one delta from it).
    const lines: string[] = []
    let note = ''
    const commands: string[] = []
    for (let n = 0; n < 300; n++) {
      lines.push(`${n}: ${'a note grown a line at a time '.repeat(34)}`)
      lines[(n * 7) % lines.length] = `${n} rewrote this line: ${'and said it again '.repeat(50)}`
      note = `${lines.join('\n')}\n`
      const message = `line ${n}`
      commands.push(
        'commit refs/heads/main',
        `committer Other <other@example.com> ${1_700_000_000 + n} +0000`,
        `data ${message.length}`,
        message,
        ...(n === 0 ? [`from ${tip}`] : []),
        'M 100644 inline notes.md',
        `data ${Buffer.byteLength(note)}`,
        note,
      )
    }
    otherClient(remote, `${commands.join('\n')}\n`, 'fast-import', '--quiet')
    otherClient(remote, null, '-c', 'gc.aggressiveDepth=250', 'gc', '--aggressive', '--quiet')
    const packs = path.join(remote, 'objects', 'pack')
    const [packed] = readdirSync(packs).filter((name) => name.endsWith('.idx'))
    const chains = otherClient(remote, null, 'verify-pack', '-v', path.join(packs, packed!))
    const deepest = Math.max(
      ...[...chains.matchAll(/^chain length = (\d+):/gm)].map((match) => Number(match[1])),
    )
    expect(deepest).toBeGreaterThanOrEqual(100)
    const pack = readFileSync(path.join(packs, packed!.replace(/\.idx$/, '.pack')))
    expect(packSizeProblem(pack, PACK_OBJECT_CAP, PACK_CHAIN_BUDGET)).toBeNull()
    const status = await laptop.sync()
    expect(status.state).toBe('idle')
    expect((await laptop.files()).get('notes.md')).toBe(note)
    expect(laptop.git('rev-parse', 'main').trim()).toBe(
      otherClient(remote, null, 'rev-parse', 'main'),
    )
    await expectSound(sync.server, repo, [laptop])
  }, 120_000)
})
