import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { useSyncServer, type Machine } from './test-support'

const sync = useSyncServer()
const { machine } = sync

// hunt13-followups D2: the side copy's name search never ended when the path left room for
// one character and the short names were taken; the sync hung the main process for good.
describe('a binary conflict on a one-character name at the 512-character limit', () => {
  it(
    'syncs, keeping the other machine’s file under a free name the rules accept',
    { timeout: 180_000 },
    async () => {
      const repo = sync.newRepo('no-room')
      const laptop = await machine('laptop')
      const desktop = await machine('desktop')
      const dir = `${['a', 'b', 'c', 'd'].map((c) => c.repeat(120)).join('/')}/${'e'.repeat(16)}`
      expect(`/memories/${dir}/a`).toHaveLength(512)
      const bin = (tag: string) => Buffer.from([0x00, 0xff, 0x00, ...Buffer.from(tag)])
      const put = async (m: Machine, name: string, tag: string) => {
        await mkdir(path.join(m.dir, 'memories', dir), { recursive: true })
        await writeFile(path.join(m.dir, 'memories', dir, name), bin(tag))
      }
      await put(desktop, 'a', 'v0')
      // The folder's other one-character names: 1-9 and b-z.
      for (let n = 1; n < 36; n++) if (n !== 10) await put(desktop, n.toString(36), `n${n}`)
      await desktop.connect(sync.server, repo)
      await desktop.sync()
      await laptop.connect(sync.server, repo)
      await laptop.sync()
      await put(desktop, 'a', 'desktop')
      await desktop.sync()
      await put(laptop, 'a', 'laptop')

      const status = await laptop.sync()
      expect(status.conflicts).toHaveLength(1)
      const other = status.conflicts[0]?.otherPath as string
      expect(other).toBe(`/memories/${dir}/0`)
      const read = (name: string) => readFile(path.join(laptop.dir, 'memories', dir, name))
      expect(await read('a')).toEqual(bin('laptop'))
      expect(await read('0')).toEqual(bin('desktop'))
      expect(await read('1')).toEqual(bin('n1'))
    },
  )
})
