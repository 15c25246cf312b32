import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CairnError } from '../lib/errors'
import { describeStartupFailure, StartupError, startupFailureDialog } from './startup-failure'

describe('describeStartupFailure', () => {
  it('keeps the message of errors meant for people', () => {
    const refused = new CairnError('read-only', 'The memory folder is on a read-only disk.')
    expect(describeStartupFailure(refused)).toBe('The memory folder is on a read-only disk.')
    expect(describeStartupFailure(new StartupError('The window could not load.'))).toBe(
      'The window could not load.',
    )
  })

  it('names system errors by what they mean, without their raw text or the path', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-startup-'))
    try {
      // A file where the data folder needs a folder, as the real createCore meets it.
      await writeFile(path.join(dir, 'memories'), 'a file')
      const error = await mkdir(path.join(dir, 'memories', 'notes'), { recursive: true }).catch(
        (caught: unknown) => caught,
      )
      const reason = describeStartupFailure(error)
      expect(reason).toContain('Something that is not a folder stands where Cairn keeps its data')
      expect(reason).not.toContain(dir)
      expect(reason).not.toMatch(/ENOTDIR|EEXIST|mkdir/)
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 10 })
    }
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), {
      code: 'ENOSPC',
    })
    expect(describeStartupFailure(full)).toBe(
      'The disk that holds Cairn’s data folder is full. Free some space, then start Cairn again.',
    )
  })

  it('calls anything else unexpected, with its code and never its message or stack', () => {
    const odd = Object.assign(new Error('secret /home/me/path exploded'), { code: 'ERR_ODD' })
    expect(describeStartupFailure(odd)).toBe(
      'Something unexpected went wrong while Cairn was starting (ERR_ODD).',
    )
    expect(describeStartupFailure(new TypeError('x is undefined'))).toBe(
      'Something unexpected went wrong while Cairn was starting.',
    )
    expect(describeStartupFailure('a string')).toBe(
      'Something unexpected went wrong while Cairn was starting.',
    )
  })
})

describe('startupFailureDialog', () => {
  it('is an error box with the reason, the data folder, and Open data folder / Quit', () => {
    expect(startupFailureDialog('The disk is full.', '/home/ada/.config/Cairn')).toEqual({
      type: 'error',
      title: 'Cairn could not start',
      message: 'Cairn could not start',
      detail: 'The disk is full.\n\nYour data folder: /home/ada/.config/Cairn',
      buttons: ['Open data folder', 'Quit'],
      defaultId: 1,
      cancelId: 1,
      noLink: true,
    })
  })
})
