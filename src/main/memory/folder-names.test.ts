import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { nodeDisk, setDisk } from '../lib/disk'
import { Folder } from '../lib/folders'
import { FolderNames } from './folder-names'

let dir: string
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-folder-names-'))
})
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
})

// Stop 33: a write looked at its folder's times (an fstat) to follow kept names even when none
// were kept, as after an open or in a folder no create checked.
it("a write where no folder's names are kept never looks at the folder's times", () => {
  const folder = Folder.openRoot(dir)
  let stats = 0
  const restore = setDisk({
    ...nodeDisk,
    fstatSync: (fd) => {
      stats++
      return nodeDisk.fstatSync(fd)
    },
  })
  let renamed = false
  try {
    const write = new FolderNames((name) => name.toLowerCase()).writing(folder)
    write.tempMade()
    write.aroundRename(() => {
      renamed = true
    })
    write.wrote('new.md')
  } finally {
    restore()
    folder.close()
  }
  expect(renamed).toBe(true)
  expect(stats).toBe(0)
})
