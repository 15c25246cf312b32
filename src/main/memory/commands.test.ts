import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeSandbox, snapshot, text, type Sandbox } from './test-support'
import { legalImages, TINY_JPEG, TINY_PNG } from '../../../test/fixtures/images'

let box: Sandbox
beforeEach(async () => {
  box = await makeSandbox()
})
afterEach(async () => {
  await box.cleanup()
})

const HEADER = (p: string) =>
  `Here're the files and directories up to 2 levels deep in ${p}, excluding hidden items and node_modules:`

describe('view of a directory', () => {
  it('shows an empty /memories as the header and the root line, not an error', async () => {
    const result = await box.run({ command: 'view', path: '/memories' })
    expect(result.isError).toBe(false)
    expect(result.content).toMatch(
      new RegExp(`^${escape(HEADER('/memories'))}\\n[0-9.]+[BKM]\\t/memories$`),
    )
  })

  it('creates the root before the first command when it is missing', async () => {
    await fs.rm(box.root, { recursive: true })
    const result = await box.run({ command: 'view', path: '/memories' })
    expect(result.isError).toBe(false)
    expect((await fs.stat(box.root)).isDirectory()).toBe(true)
  })

  it('lists two levels deep, sorted, directories marked, hidden and node_modules excluded', async () => {
    await box.write('b.md', 'x'.repeat(1536))
    await box.write('a/one.md', '1')
    await box.write('a/deep/two.md', '22')
    await box.write('a/deep/deeper/three.md', '333')
    await box.write('.hidden/x.md', 'x')
    await box.write('.dot.md', 'x')
    await box.write('node_modules/x.md', 'x')
    const out = text(await box.run({ command: 'view', path: '/memories' }))
    const lines = out.split('\n')
    expect(lines[0]).toBe(HEADER('/memories'))
    expect(lines.slice(1).map((l) => l.split('\t')[1])).toEqual([
      '/memories',
      '/memories/a/',
      '/memories/a/deep/',
      '/memories/a/one.md',
      '/memories/b.md',
    ])
    expect(lines.find((l) => l.endsWith('/memories/b.md'))).toBe('1.5K\t/memories/b.md')
    expect(lines.find((l) => l.endsWith('/memories/a/one.md'))).toBe('1B\t/memories/a/one.md')
  })

  it('lists a subdirectory with its own path first', async () => {
    await box.write('a/one.md', '1')
    const out = text(await box.run({ command: 'view', path: '/memories/a' }))
    expect(
      out
        .split('\n')
        .slice(1)
        .map((l) => l.split('\t')[1]),
    ).toEqual(['/memories/a', '/memories/a/one.md'])
  })

  it('formats whole kilobytes with one decimal, as the docs show (4.0K)', async () => {
    await box.write('four.md', 'x'.repeat(4096))
    expect(text(await box.run({ command: 'view', path: '/memories' }))).toContain(
      '4.0K\t/memories/four.md',
    )
  })

  it('shows changes made outside the tool at once (listings are never cached)', async () => {
    await box.write('kept.md', 'k')
    await box.write('gone.md', 'g')
    expect(text(await box.run({ command: 'view', path: '/memories' }))).toContain(
      '/memories/gone.md',
    )
    await fs.rm(path.join(box.root, 'gone.md'))
    await box.write('added/new.md', 'n')
    box.tool.invalidateUsage()
    const listing = text(await box.run({ command: 'view', path: '/memories' }))
    expect(listing).not.toContain('/memories/gone.md')
    expect(listing).toContain('/memories/added/new.md')
    expect(listing).toContain('/memories/kept.md')
  })

  it('answers the official message for a missing path', async () => {
    const result = await box.run({ command: 'view', path: '/memories/nope' })
    expect(result).toEqual({
      content: 'The path /memories/nope does not exist. Please provide a valid path.',
      isError: true,
      mutation: null,
      errorCode: 'not-found',
    })
  })

  it('cuts a long listing at a line boundary under 16,000 characters with a note', async () => {
    await Promise.all(
      Array.from({ length: 800 }, (_, i) =>
        box.write(`file-${String(i).padStart(4, '0')}.md`, 'x'),
      ),
    )
    const out = text(await box.run({ command: 'view', path: '/memories' }))
    expect(out.length).toBeLessThanOrEqual(16_000)
    expect(out).toMatch(
      /\n\[Listing cut to stay under 16,000 characters: entries 1 to \d+ of 800 shown \(numbered with every first-level entry first, then each folder's contents\)\. To continue, view \/memories with view_range: \[\d+, -1\]\]$/,
    )
    const body = out.split('\n').slice(1, -1)
    expect(body.every((l) => /^\S+\t\/memories/.test(l))).toBe(true)
  })
})

describe('view of a file', () => {
  it('numbers lines right-aligned in 6 characters, 1-based', async () => {
    await box.write('n.md', 'alpha\nbeta\n')
    expect(text(await box.run({ command: 'view', path: '/memories/n.md' }))).toBe(
      "Here's the content of /memories/n.md with line numbers:\n     1\talpha\n     2\tbeta",
    )
  })

  it('shows a view_range [start, end] and [start, -1]', async () => {
    await box.write('n.md', 'a\nb\nc\nd\n')
    const mid = text(await box.run({ command: 'view', path: '/memories/n.md', view_range: [2, 3] }))
    expect(mid.split('\n').slice(1)).toEqual(['     2\tb', '     3\tc'])
    const tail = text(
      await box.run({ command: 'view', path: '/memories/n.md', view_range: [3, -1] }),
    )
    expect(tail.split('\n').slice(1)).toEqual(['     3\tc', '     4\td'])
  })

  it('clamps an end past the last line', async () => {
    await box.write('n.md', 'a\nb\n')
    const out = text(
      await box.run({ command: 'view', path: '/memories/n.md', view_range: [2, 99] }),
    )
    expect(out.split('\n').slice(1)).toEqual(['     2\tb'])
  })

  it.each([
    [[0, 2], 'first element `0`'],
    [[5, 6], 'first element `5`'],
    [[3, 2], 'second element `2`'],
    [[1, -2], 'second element `-2`'],
  ])('refuses the malformed view_range %j clearly', async (range, phrase) => {
    await box.write('n.md', 'a\nb\nc\n')
    const result = await box.run({ command: 'view', path: '/memories/n.md', view_range: range })
    expect(result.isError).toBe(true)
    expect(text(result)).toContain('Invalid `view_range`')
    expect(text(result)).toContain(phrase)
  })

  it.each([[[1]], [[1, 2, 3]], [['1', '2']], [[1.5, 2]], ['1-2']])(
    'refuses a view_range that is not two integers: %j',
    async (range) => {
      await box.write('n.md', 'a\n')
      const result = await box.run({ command: 'view', path: '/memories/n.md', view_range: range })
      expect(result.isError).toBe(true)
      expect(text(result)).toContain('list of two integers')
    },
  )

  it('refuses a file over 999,999 lines with the official message', async () => {
    await box.write('big.md', '\n'.repeat(1_000_000))
    const result = await box.run({ command: 'view', path: '/memories/big.md' })
    expect(result).toMatchObject({
      content: 'File /memories/big.md exceeds maximum line limit of 999,999 lines.',
      isError: true,
    })
  })

  it('cuts a long file at a line boundary and names the view_range to continue with', async () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `line number ${i + 1} of the file`)
    await box.write('long.md', lines.join('\n') + '\n')
    const out = text(await box.run({ command: 'view', path: '/memories/long.md' }))
    expect(out.length).toBeLessThanOrEqual(16_000)
    const next = Number(/view_range: \[(\d+), -1\]\]$/.exec(out)?.[1])
    const shown = out.split('\n').slice(1, -1)
    expect(shown.at(-1)).toBe(
      `${String(next - 1).padStart(6)}\tline number ${next - 1} of the file`,
    )
    const rest = text(
      await box.run({ command: 'view', path: '/memories/long.md', view_range: [next, -1] }),
    )
    expect(rest.split('\n')[1]).toBe(`${String(next).padStart(6)}\tline number ${next} of the file`)
  })

  it('returns a .png as an image block and refuses one over the size cap', async () => {
    const png = TINY_PNG
    await box.write('pic.png', png)
    const result = await box.run({ command: 'view', path: '/memories/pic.png' })
    expect(result.isError).toBe(false)
    expect(result.content).toEqual([
      { type: 'text', text: "Here's the image /memories/pic.png:" },
      {
        type: 'image',
        source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') },
      },
    ])
    const small = await makeSandbox({ limits: { maxImageBytes: 50 } })
    try {
      await small.write('pic.png', png)
      const refused = await small.run({ command: 'view', path: '/memories/pic.png' })
      expect(refused.isError).toBe(true)
      expect(text(refused)).toContain('images up to 50 bytes')
    } finally {
      await small.cleanup()
    }
  })

  it('returns a .jpg as a JPEG image and refuses a file that is not really an image', async () => {
    await box.write('photo.JPG', TINY_JPEG)
    const ok = await box.run({ command: 'view', path: '/memories/photo.JPG' })
    expect(ok.content).toMatchObject([{}, { source: { media_type: 'image/jpeg' } }])
    await box.write('fake.jpeg', Buffer.from([0xff, 0xd8, 0x00, 0xff]))
    const bad = await box.run({ command: 'view', path: '/memories/fake.jpeg' })
    expect(bad).toMatchObject({
      isError: true,
      content: 'Error: /memories/fake.jpeg is not a valid JPEG image.',
    })
  })

  // Left by stop 28: the signature alone made a file an image, so a file that starts like a
  // PNG or JPEG and holds junk after went to the API as one (which refuses the whole request).
  it('sends as an image only what is one past its signature', async () => {
    const signature = TINY_PNG.subarray(0, 8)
    const header = (patch: (bytes: Buffer) => void): Buffer => {
      const bytes = Buffer.from(TINY_PNG)
      patch(bytes)
      return bytes
    }
    const notPng = {
      'junk.png': Buffer.concat([signature, Buffer.from('not a chunk at all, just words')]),
      'wide.png': header((b) => b.writeUInt32BE(0, 16)),
      'deep.png': header((b) => (b[24] = 3)),
      'late.png': header((b) => b.write('tEXt', 12, 'latin1')),
      'short.png': TINY_PNG.subarray(0, 30),
    }
    for (const [name, bytes] of Object.entries(notPng)) {
      await box.write(name, bytes)
      expect(await box.run({ command: 'view', path: `/memories/${name}` })).toMatchObject({
        isError: true,
        content: `Error: /memories/${name} is not a valid PNG image.`,
      })
    }
    const notJpeg = {
      'junk.jpg': Buffer.concat([TINY_JPEG.subarray(0, 3), Buffer.from('\xe0 junk after')]),
      'cut.jpg': TINY_JPEG.subarray(0, 100),
      'noframe.jpg': Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02, 1, 2, 0xff, 0xd9]),
    }
    for (const [name, bytes] of Object.entries(notJpeg)) {
      await box.write(name, bytes)
      expect(await box.run({ command: 'view', path: `/memories/${name}` })).toMatchObject({
        isError: true,
        content: `Error: /memories/${name} is not a valid JPEG image.`,
      })
    }
  })

  it('sends every legal kind of PNG and JPEG as the image it is', async () => {
    for (const { name, bytes, type } of legalImages()) {
      await box.write(name, bytes)
      expect(await box.run({ command: 'view', path: `/memories/${name}` }), name).toMatchObject({
        isError: false,
        content: [{}, { source: { media_type: type, data: bytes.toString('base64') } }],
      })
    }
  })

  // The API refuses an image over 8,000 pixels a side, and the whole request with it: the
  // turn would end in an error over one view. Made with ImageMagick (`convert -size 8001x2
  // xc:white`), a few hundred bytes each.
  it('refuses an image over 8,000 pixels a side in words, and sends one of 8,000', async () => {
    const folder = path.join(
      path.dirname(fileURLToPath(import.meta.url)),
      '../../../test/fixtures/images-large',
    )
    for (const [name, size] of [
      ['wide.png', '8,001×2'],
      ['tall.jpg', '2×8,001'],
    ]) {
      await box.write(name, await fs.readFile(path.join(folder, name)))
      expect(await box.run({ command: 'view', path: `/memories/${name}` })).toMatchObject({
        isError: true,
        content: `Error: The image /memories/${name} is ${size} pixels; images up to 8,000 pixels a side can be viewed.`,
      })
    }
    await box.write('edge.png', await fs.readFile(path.join(folder, 'edge.png')))
    expect(await box.run({ command: 'view', path: '/memories/edge.png' })).toMatchObject({
      isError: false,
      content: [{}, { source: { media_type: 'image/png' } }],
    })
  })

  it('never sends a hostile image as one, and answers at once', async () => {
    const png = Buffer.from(TINY_PNG)
    png.writeUInt32BE(2 ** 31, 16)
    const runsPast = Buffer.from(TINY_JPEG.subarray(0, 40))
    runsPast.writeUInt16BE(60_000, 4)
    const zero = Buffer.from(TINY_JPEG)
    zero.writeUInt16BE(0, 4)
    // Markers with no length, over and over: restart markers, and fill bytes that never end.
    const restarts = Buffer.alloc(2_000_000, 0xff)
    for (let i = 3; i < restarts.length; i += 2) restarts[i] = 0xd0
    const hostile: Record<string, Buffer> = {
      'wide.png': png,
      'cut-header.png': TINY_PNG.subarray(0, 20),
      'past-end.jpg': runsPast,
      'zero.jpg': zero,
      'restarts.jpg': Buffer.concat([TINY_JPEG.subarray(0, 2), restarts]),
      'fill.jpg': Buffer.concat([TINY_JPEG.subarray(0, 2), Buffer.alloc(2_000_000, 0xff)]),
    }
    for (const [name, bytes] of Object.entries(hostile)) {
      await box.write(name, bytes)
      const result = await box.run({ command: 'view', path: `/memories/${name}` })
      expect(result, name).toMatchObject({
        isError: true,
        content: expect.stringMatching(/^Error: /),
      })
    }
  })

  it('shows a text file named .png that is larger than an image may be as its text', async () => {
    const small = await makeSandbox({ limits: { maxImageBytes: 50 } })
    try {
      const notes = Array.from({ length: 20 }, (_, i) => `line ${i + 1} of the outline`).join('\n')
      await small.write('outline.png', Buffer.from(notes))
      const shown = await small.run({
        command: 'view',
        path: '/memories/outline.png',
        view_range: [20, -1],
      })
      expect(shown).toMatchObject({
        isError: false,
        content:
          "Here's the content of /memories/outline.png with line numbers:\n    20\tline 20 of the outline",
      })
    } finally {
      await small.cleanup()
    }
  })

  // Left by the last acceptance probe: Claude may create `outline.png` as text (and edit it),
  // but its view answered "not a valid PNG image": it is shown as the text it is.
  it('shows a text file named like an image as its text', async () => {
    const created = await box.run({
      command: 'create',
      path: '/memories/outline.png',
      file_text: 'Not a picture.\nSecond line.\n',
    })
    expect(created.isError).toBe(false)
    const shown = await box.run({
      command: 'view',
      path: '/memories/outline.png',
      view_range: [2, -1],
    })
    expect(shown).toMatchObject({
      isError: false,
      content:
        "Here's the content of /memories/outline.png with line numbers:\n     2\tSecond line.",
    })
  })

  // Left by the review of handler28: an image counted as one only under its own extension, so
  // a photo saved as `photo.jpg` that is really a PNG (as phones and editors do) was "not a
  // valid JPEG image", and the other way round. It is sent as the image its bytes say it is
  // (the API refuses an image whose declared type its bytes contradict).
  it('shows a PNG named .jpg, and a JPEG named .png, as the image each is', async () => {
    const png = TINY_PNG
    const jpeg = TINY_JPEG
    await box.write('photo.jpg', png)
    await box.write('scan.png', jpeg)
    expect(await box.run({ command: 'view', path: '/memories/photo.jpg' })).toMatchObject({
      isError: false,
      content: [
        { type: 'text', text: "Here's the image /memories/photo.jpg:" },
        { type: 'image', source: { media_type: 'image/png', data: png.toString('base64') } },
      ],
    })
    expect(await box.run({ command: 'view', path: '/memories/scan.png' })).toMatchObject({
      isError: false,
      content: [{}, { source: { media_type: 'image/jpeg', data: jpeg.toString('base64') } }],
    })
  })

  it('refuses to show a binary file as text', async () => {
    await box.write('bin.md', Buffer.from([0xff, 0xfe, 0x00, 0xc3]))
    const result = await box.run({ command: 'view', path: '/memories/bin.md' })
    expect(result.isError).toBe(true)
    expect(text(result)).toContain('is not UTF-8 text')
  })
})

describe('create', () => {
  it('creates the file and its parent folders', async () => {
    const result = await box.run({
      command: 'create',
      path: '/memories/a/b/c.md',
      file_text: 'hi\n',
    })
    expect(result).toEqual({
      content: 'File created successfully at: /memories/a/b/c.md',
      isError: false,
      mutation: { command: 'create', paths: ['/memories/a/b/c.md'], overwrite: false },
      errorCode: null,
    })
    expect(await box.read('a/b/c.md')).toBe('hi\n')
  })

  it('writes files 0600 and folders 0700, leaving no temp file', async () => {
    await box.run({ command: 'create', path: '/memories/dir/f.md', file_text: 'x' })
    expect((await fs.stat(path.join(box.root, 'dir'))).mode & 0o777).toBe(0o700)
    expect((await fs.stat(path.join(box.root, 'dir/f.md'))).mode & 0o777).toBe(0o600)
    expect(await fs.readdir(path.join(box.root, 'dir'))).toEqual(['f.md'])
  })

  it('overwrites by default and says the file existed and was replaced', async () => {
    await box.run({ command: 'create', path: '/memories/f.md', file_text: 'old' })
    const result = await box.run({ command: 'create', path: '/memories/f.md', file_text: 'new' })
    expect(result.isError).toBe(false)
    expect(text(result)).toBe(
      'File created successfully at: /memories/f.md. The file already existed; its previous content was replaced.',
    )
    expect(result.mutation).toEqual({
      command: 'create',
      paths: ['/memories/f.md'],
      overwrite: true,
    })
    expect(await box.read('f.md')).toBe('new')
  })

  it("refuses an existing file with createExisting: 'error' (tool option, per call, or configured)", async () => {
    await box.write('f.md', 'old')
    const strict = await makeSandbox({ createExisting: 'error' })
    try {
      await strict.write('f.md', 'old')
      expect(
        await strict.run({ command: 'create', path: '/memories/f.md', file_text: 'new' }),
      ).toEqual({
        content: 'Error: File /memories/f.md already exists',
        isError: true,
        mutation: null,
        errorCode: 'exists',
      })
    } finally {
      await strict.cleanup()
    }
    const perCall = await box.tool.execute(
      { command: 'create', path: '/memories/f.md', file_text: 'new' },
      { createExisting: 'error' },
    )
    expect(perCall.isError).toBe(true)
    box.tool.configure({ createExisting: 'error' })
    expect(box.tool.policy().createExisting).toBe('error')
    expect(
      (await box.run({ command: 'create', path: '/memories/f.md', file_text: 'new' })).isError,
    ).toBe(true)
    expect(await box.read('f.md')).toBe('old')
  })

  it('refuses to create over a directory, under a file, or at the root', async () => {
    await box.write('dir/x.md', 'x')
    await box.write('file.md', 'x')
    const before = await snapshot(box.base)
    for (const p of ['/memories/dir', '/memories/file.md/inner.md', '/memories']) {
      const result = await box.run({ command: 'create', path: p, file_text: 'y' })
      expect(result.isError).toBe(true)
      expect(text(result)).toMatch(/^Error: /)
    }
    expect(await snapshot(box.base)).toBe(before)
  })
})

describe('str_replace', () => {
  beforeEach(async () => {
    await box.write('f.md', 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n')
  })

  it('replaces a unique string and shows a numbered snippet around it', async () => {
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: 'four',
      new_str: 'FOUR',
    })
    expect(result).toEqual({
      content:
        'The memory file has been edited. Here is the snippet showing the change (with line numbers):\n' +
        '     2\ttwo\n     3\tthree\n     4\tFOUR\n     5\tfive\n     6\tsix',
      isError: false,
      mutation: { command: 'str_replace', paths: ['/memories/f.md'], overwrite: false },
      errorCode: null,
    })
    expect(await box.read('f.md')).toBe('one\ntwo\nthree\nFOUR\nfive\nsix\nseven\n')
  })

  it('matches a multi-line old_str over the whole file', async () => {
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: 'two\nthree',
      new_str: '2\n3\n3.5',
    })
    expect(result.isError).toBe(false)
    expect(await box.read('f.md')).toBe('one\n2\n3\n3.5\nfour\nfive\nsix\nseven\n')
    expect(text(result).split('\n').slice(1)).toEqual([
      '     1\tone',
      '     2\t2',
      '     3\t3',
      '     4\t3.5',
      '     5\tfour',
      '     6\tfive',
    ])
  })

  it('counts two occurrences on one line as two and reports their lines', async () => {
    await box.write('g.md', 'a cat\nthe cat and the cat\n')
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/g.md',
      old_str: 'cat',
      new_str: 'dog',
    })
    expect(result).toMatchObject({
      content:
        'No replacement was performed. Multiple occurrences of old_str `cat` in lines: 1, 2, 2. Please ensure it is unique',
      isError: true,
    })
    await box.write('h.md', 'the cat and the cat\n')
    const same = await box.run({
      command: 'str_replace',
      path: '/memories/h.md',
      old_str: 'cat',
      new_str: 'dog',
    })
    expect(same.isError).toBe(true)
    expect(await box.read('h.md')).toBe('the cat and the cat\n')
  })

  it('answers the official message when old_str is absent', async () => {
    expect(
      await box.run({
        command: 'str_replace',
        path: '/memories/f.md',
        old_str: 'ten',
        new_str: 'x',
      }),
    ).toEqual({
      content:
        'No replacement was performed, old_str `ten` did not appear verbatim in /memories/f.md.',
      isError: true,
      mutation: null,
      errorCode: 'no-match',
    })
  })

  it('inserts new_str literally ($& and $$ stay as typed)', async () => {
    await box.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: 'two',
      new_str: '$& and $$ and $1',
    })
    expect(await box.read('f.md')).toContain('\n$& and $$ and $1\n')
  })

  it('treats an omitted new_str as deletion', async () => {
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: 'two\n',
    })
    expect(result.isError).toBe(false)
    expect(await box.read('f.md')).toBe('one\nthree\nfour\nfive\nsix\nseven\n')
  })

  it('rejects an empty old_str', async () => {
    const result = await box.run({
      command: 'str_replace',
      path: '/memories/f.md',
      old_str: '',
      new_str: 'x',
    })
    expect(result.isError).toBe(true)
    expect(text(result)).toContain('`old_str` must not be empty')
  })

  it('answers the official message for a missing file or a directory', async () => {
    await box.write('dir/x.md', 'x')
    for (const p of ['/memories/missing.md', '/memories/dir']) {
      expect(
        await box.run({ command: 'str_replace', path: p, old_str: 'a', new_str: 'b' }),
      ).toEqual({
        content: `Error: The path ${p} does not exist. Please provide a valid path.`,
        isError: true,
        mutation: null,
        errorCode: 'not-found',
      })
    }
  })
})

describe('insert', () => {
  it('inserts after line N: a 3-line file with insert_line 2 gets the text on line 3', async () => {
    await box.write('f.md', 'a\nb\nc\n')
    const result = await box.run({
      command: 'insert',
      path: '/memories/f.md',
      insert_line: 2,
      insert_text: 'X\n',
    })
    expect(result).toEqual({
      content: 'The file /memories/f.md has been edited.',
      isError: false,
      mutation: { command: 'insert', paths: ['/memories/f.md'], overwrite: false },
      errorCode: null,
    })
    expect(await box.read('f.md')).toBe('a\nb\nX\nc\n')
  })

  it('inserts at the top with 0 and at the end with the line count', async () => {
    await box.write('f.md', 'a\nb\n')
    await box.run({ command: 'insert', path: '/memories/f.md', insert_line: 0, insert_text: 'top' })
    await box.run({ command: 'insert', path: '/memories/f.md', insert_line: 3, insert_text: 'end' })
    expect(await box.read('f.md')).toBe('top\na\nb\nend\n')
  })

  it('inserts several lines from a multi-line text, without an extra empty line', async () => {
    await box.write('f.md', 'a\nb\n')
    await box.run({
      command: 'insert',
      path: '/memories/f.md',
      insert_line: 1,
      insert_text: 'x\ny\n',
    })
    expect(await box.read('f.md')).toBe('a\nx\ny\nb\n')
  })

  it('keeps a file without a final newline without one', async () => {
    await box.write('f.md', 'a\nb')
    await box.run({ command: 'insert', path: '/memories/f.md', insert_line: 2, insert_text: 'c' })
    expect(await box.read('f.md')).toBe('a\nb\nc')
  })

  it('inserts into an empty file', async () => {
    await box.write('f.md', '')
    await box.run({
      command: 'insert',
      path: '/memories/f.md',
      insert_line: 0,
      insert_text: 'first\n',
    })
    expect(await box.read('f.md')).toBe('first\n')
  })

  it.each([-1, 4])('refuses insert_line %i with the official message', async (line) => {
    await box.write('f.md', 'a\nb\nc\n')
    expect(
      await box.run({
        command: 'insert',
        path: '/memories/f.md',
        insert_line: line,
        insert_text: 'x',
      }),
    ).toEqual({
      content: `Error: Invalid \`insert_line\` parameter: ${line}. It should be within the range of lines of the file: [0, 3]`,
      isError: true,
      mutation: null,
      errorCode: 'invalid-range',
    })
  })

  it('answers the official message for a missing file or a directory', async () => {
    await box.write('dir/x.md', 'x')
    for (const p of ['/memories/nope.md', '/memories/dir']) {
      expect(
        await box.run({ command: 'insert', path: p, insert_line: 0, insert_text: 'x' }),
      ).toMatchObject({
        content: `Error: The path ${p} does not exist`,
        isError: true,
      })
    }
  })
})

describe('delete', () => {
  it('deletes a file', async () => {
    await box.write('f.md', 'x')
    expect(await box.run({ command: 'delete', path: '/memories/f.md' })).toEqual({
      content: 'Successfully deleted /memories/f.md',
      isError: false,
      mutation: { command: 'delete', paths: ['/memories/f.md'], overwrite: false },
      errorCode: null,
    })
    expect(await fs.readdir(box.root)).toEqual([])
  })

  it('deletes a directory recursively and reports the directory path, leaving no temp folder', async () => {
    await box.write('d/a.md', 'x')
    await box.write('d/e/b.md', 'y')
    const result = await box.run({ command: 'delete', path: '/memories/d' })
    expect(result.mutation?.paths).toEqual(['/memories/d'])
    expect(await fs.readdir(box.root)).toEqual([])
  })

  it('answers the official message for a missing path', async () => {
    expect(await box.run({ command: 'delete', path: '/memories/none' })).toEqual({
      content: 'Error: The path /memories/none does not exist',
      isError: true,
      mutation: null,
      errorCode: 'not-found',
    })
  })

  it('refuses the /memories root itself', async () => {
    await box.write('f.md', 'x')
    for (const p of ['/memories', '/memories/']) {
      const result = await box.run({ command: 'delete', path: p })
      expect(result).toMatchObject({
        isError: true,
        content: 'Error: Cannot delete the /memories directory itself',
      })
    }
    expect(await box.read('f.md')).toBe('x')
  })
})

describe('rename', () => {
  it('renames a file, creating destination folders', async () => {
    await box.write('a.md', 'x')
    expect(
      await box.run({
        command: 'rename',
        old_path: '/memories/a.md',
        new_path: '/memories/n/b.md',
      }),
    ).toEqual({
      content: 'Successfully renamed /memories/a.md to /memories/n/b.md',
      isError: false,
      mutation: {
        command: 'rename',
        paths: ['/memories/a.md', '/memories/n/b.md'],
        overwrite: false,
      },
      errorCode: null,
    })
    expect(await box.read('n/b.md')).toBe('x')
  })

  it('renames a directory', async () => {
    await box.write('d/a.md', 'x')
    await box.run({ command: 'rename', old_path: '/memories/d', new_path: '/memories/e' })
    expect(await box.read('e/a.md')).toBe('x')
  })

  it('answers the official message for a missing source', async () => {
    expect(
      await box.run({ command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' }),
    ).toMatchObject({
      content: 'Error: The path /memories/a.md does not exist',
      isError: true,
    })
  })

  it('never overwrites: the official message for an existing destination', async () => {
    await box.write('a.md', 'a')
    await box.write('b.md', 'b')
    const result = await box.run({
      command: 'rename',
      old_path: '/memories/a.md',
      new_path: '/memories/b.md',
    })
    expect(result).toMatchObject({
      content: 'Error: The destination /memories/b.md already exists',
      isError: true,
    })
    expect(await box.read('b.md')).toBe('b')
    expect(await box.read('a.md')).toBe('a')
  })

  it('refuses moving the root, onto the root, or a directory into itself', async () => {
    await box.write('d/a.md', 'x')
    const before = await snapshot(box.base)
    const cases = [
      ['/memories', '/memories/x', 'Error: Cannot rename the /memories directory itself'],
      ['/memories/d', '/memories', 'Error: The destination /memories already exists'],
      [
        '/memories/d',
        '/memories/d/sub',
        'Error: Cannot move the directory /memories/d into itself (/memories/d/sub).',
      ],
    ]
    for (const [from, to, message] of cases) {
      expect(await box.run({ command: 'rename', old_path: from, new_path: to })).toMatchObject({
        content: message,
        isError: true,
      })
    }
    expect(await snapshot(box.base)).toBe(before)
  })

  it('does not leave destination folders behind when it fails', async () => {
    await box.write('b.md', 'b')
    const result = await box.run({
      command: 'rename',
      old_path: '/memories/nope.md',
      new_path: '/memories/new/dir/b.md',
    })
    expect(result.isError).toBe(true)
    expect(await fs.readdir(box.root)).toEqual(['b.md'])
  })
})

describe('atomic writes', () => {
  it('leaves no temp file and changes nothing when the write fails', async () => {
    await box.write('d/f.md', 'original')
    const dir = path.join(box.root, 'd')
    await lockFolder(dir, true)
    try {
      const before = await snapshot(box.base)
      const result = await box.run({
        command: 'str_replace',
        path: '/memories/d/f.md',
        old_str: 'original',
        new_str: 'changed',
      })
      expect(result).toEqual({
        content:
          'Error: The memory command failed because permission was denied by the operating system. Nothing was changed.',
        isError: true,
        mutation: null,
        errorCode: 'access-denied',
      })
      expect(await snapshot(box.base)).toBe(before)
    } finally {
      await lockFolder(dir, false)
    }
    expect(await fs.readdir(dir)).toEqual(['f.md'])
  })

  it('removes the temp file when the rename onto the target fails', async () => {
    // A non-empty folder at the target makes the final rename fail after the temp file exists.
    const { atomicWrite } = await import('../lib/atomic-write')
    await box.write('t/target/inner.md', 'x')
    await expect(atomicWrite(path.join(box.root, 't/target'), 'data')).rejects.toThrow()
    expect(await fs.readdir(path.join(box.root, 't'))).toEqual(['target'])
  })
})

describe('refusal codes', () => {
  // Each refusal carries its code beside the words Claude reads, so the app never parses them.
  it.each([
    ['invalid-input', { command: 'explode' }],
    ['invalid-input', { command: 'view' }],
    ['invalid-path', { command: 'view', path: '/etc/passwd' }],
    ['invalid-path', { command: 'delete', path: '/memories' }],
    ['not-found', { command: 'delete', path: '/memories/none.md' }],
    ['exists', { command: 'rename', old_path: '/memories/f.md', new_path: '/memories/g.md' }],
    ['not-a-file', { command: 'create', path: '/memories/d', file_text: 'x' }],
    ['no-match', { command: 'str_replace', path: '/memories/f.md', old_str: 'zz', new_str: '' }],
    ['ambiguous-match', { command: 'str_replace', path: '/memories/f.md', old_str: 'a' }],
    ['invalid-range', { command: 'view', path: '/memories/f.md', view_range: [9, 10] }],
    ['not-text', { command: 'view', path: '/memories/bin.dat' }],
    ['special-file', { command: 'view', path: '/memories/link.md' }],
  ])('%s for %j', async (code, input) => {
    await box.write('f.md', 'a\na\n')
    await box.write('g.md', 'g')
    await box.write('d/inner.md', 'x')
    await box.write('bin.dat', Buffer.from([0xff, 0xfe, 0x00]))
    await fs.symlink(path.join(box.sentinel, 'secret.txt'), path.join(box.root, 'link.md'))
    const result = await box.run(input)
    expect(result).toMatchObject({ isError: true, mutation: null, errorCode: code })
  })

  it('has none on success', async () => {
    const result = await box.run({ command: 'create', path: '/memories/ok.md', file_text: 'ok' })
    expect(result).toMatchObject({ isError: false, errorCode: null })
  })
})

// A folder no one may write into: read-only mode, or for root (who ignores modes) the immutable flag.
async function lockFolder(dir: string, locked: boolean): Promise<void> {
  if (process.getuid?.() === 0) execFileSync('chattr', [locked ? '+i' : '-i', dir])
  else await fs.chmod(dir, locked ? 0o500 : 0o700)
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
