import fs from 'node:fs'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { hookDisk } from '../lib/disk-hooks'
import { createObjectStore, initRepository, type ObjectStore } from './object-store'
import { gitCli, tempDataDir } from './test-helpers'

// A loose object's folder (objects/xx) is made once, by the first write into it: the folders
// already there are listed once, not asked for one by one with a `mkdir` answering EEXIST
// (stop 15). One removed meanwhile is made again.

let dataDir: string
let gitdir: string
let cleanup: () => Promise<void>
let store: ObjectStore | null = null
let restore: (() => void) | null = null

beforeEach(async () => {
  ;({ dir: dataDir, cleanup } = await tempDataDir())
  gitdir = path.join(dataDir, 'history.git')
  await initRepository(gitdir)
})
afterEach(async () => {
  restore?.()
  restore = null
  store?.close()
  store = null
  await cleanup()
})

function counting(): string[] {
  const calls: string[] = []
  restore = setDisk(
    hookDisk(nodeDisk, ({ name, args }) => {
      const at = path.relative(gitdir, String(args[0]))
      // The pack folder is listed by every store as it opens: not what this counts.
      if (name === 'mkdirSync' || (name === 'readdirSync' && at !== 'objects/pack')) {
        calls.push(`${name} ${at}`)
      }
    }).disk,
  )
  return calls
}

const blobs = (n: number) => Array.from({ length: n }, (_, i) => Buffer.from(`blob ${i}\n`))

describe('object folders', () => {
  it('are listed once at the first write, and only missing ones are made', async () => {
    // Folders left by an earlier process: every one of the 40 blobs goes into one of them.
    const ids = blobs(40).map((content) => createObjectStore(gitdir).hash('blob', content))
    for (const id of ids)
      fs.mkdirSync(path.join(gitdir, 'objects', id.slice(0, 2)), { recursive: true })
    const calls = counting()
    store = createObjectStore(gitdir)
    for (const content of blobs(40)) await store.write('blob', content)
    await store.flush()
    expect(calls).toEqual(['readdirSync objects'])
    // A new folder is made once; one removed since it was listed is made again.
    const fresh = Buffer.from('not in any folder yet\n')
    const freshId = store.hash('blob', fresh)
    fs.rmSync(path.join(gitdir, 'objects', freshId.slice(0, 2)), {
      recursive: true,
      force: true,
      maxRetries: 10,
    })
    const again = blobs(1)[0]!
    const againDir = path.join(gitdir, 'objects', ids[0]!.slice(0, 2))
    if (ids[0]!.slice(0, 2) !== freshId.slice(0, 2)) fs.rmSync(againDir, { recursive: true })
    calls.length = 0
    await store.write('blob', fresh)
    await store.write('blob', fresh)
    await store.write('blob', again)
    await store.flush()
    const made = [`mkdirSync objects/${freshId.slice(0, 2)}`]
    if (ids[0]!.slice(0, 2) !== freshId.slice(0, 2))
      made.push(`mkdirSync objects/${ids[0]!.slice(0, 2)}`)
    expect(calls).toEqual(made)
    restore?.()
    restore = null
    for (const id of [ids[0]!, ids[39]!, freshId]) {
      expect(gitCli(dataDir, 'cat-file', '-t', id).trim()).toBe('blob')
    }
  })
})
