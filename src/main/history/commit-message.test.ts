import { describe, expect, it } from 'vitest'
import { formatCommitMessage, parseCommitMessage, type CommitMeta } from './commit-message'

const base: CommitMeta = {
  actor: 'claude',
  command: 'str_replace',
  subject: 'str_replace /memories/notes.md',
  paths: ['/memories/notes.md'],
  conversationId: 'conv-1',
  toolUseId: 'toolu_01',
  overwrite: false,
  restoredFrom: null,
}

describe('commit messages', () => {
  it('puts the subject first and the facts in trailers', () => {
    expect(formatCommitMessage(base)).toBe(
      'str_replace /memories/notes.md\n\n' +
        'Command: str_replace\nPath: /memories/notes.md\n' +
        'Conversation-Id: conv-1\nTool-Use-Id: toolu_01\n',
    )
  })

  it('round-trips every fact through the author name and trailers', () => {
    const meta: CommitMeta = {
      ...base,
      actor: 'user',
      command: 'rename',
      subject: 'rename /memories/a.md -> /memories/b.md',
      paths: ['/memories/a.md', '/memories/b.md'],
      conversationId: null,
      toolUseId: null,
      overwrite: true,
      restoredFrom: 'a'.repeat(40),
    }
    expect(parseCommitMessage('You', formatCommitMessage(meta))).toEqual(meta)
    expect(parseCommitMessage('Claude', formatCommitMessage(base))).toEqual(base)
  })

  it('keeps paths with newlines, percent signs and line separators on one line', () => {
    const odd = '/memories/a\nb%41\u2028c%u2028.md'
    const meta: CommitMeta = { ...base, actor: 'system', subject: `recovery ${odd}`, paths: [odd] }
    const message = formatCommitMessage(meta)
    expect(message.split('\n')).toHaveLength(7)
    expect(parseCommitMessage('Cairn', message)).toEqual(meta)
  })

  it('reads commits made outside Cairn as system recovery commits', () => {
    const meta = parseCommitMessage('Someone', 'fixed things by hand\n')
    expect(meta).toMatchObject({
      actor: 'system',
      command: 'recovery',
      subject: 'fixed things by hand',
    })
    expect(meta.paths).toEqual([])
  })

  it('ignores unknown commands and malformed restore ids', () => {
    const meta = parseCommitMessage('Claude', 'x\n\nCommand: format-disk\nRestored-From: nope\n')
    expect(meta.command).toBe('recovery')
    expect(meta.restoredFrom).toBeNull()
  })

  it('records a review and its flags as trailers, and reads them back', () => {
    const meta: CommitMeta = {
      ...base,
      review: 'edited',
      flags: [
        {
          rule: 'instructions',
          path: '/memories/notes.md',
          line: 3,
          message: 'Reads as instructions to a future assistant (a mode switch): “developer mode”',
        },
        {
          rule: 'person-edited',
          path: '/memories/notes.md',
          line: null,
          message: 'You edited\nit',
        },
      ],
    }
    const message = formatCommitMessage(meta)
    expect(message).toContain('\nReviewed-by: You\nEdited-by: You\nFlag: {"rule":"instructions",')
    // Every trailer stays on its own line.
    expect(message.trimEnd().split('\n')).toHaveLength(10)
    expect(parseCommitMessage('Claude', message)).toEqual(meta)
    const approved = { ...base, review: 'approved' as const }
    expect(formatCommitMessage(approved)).not.toContain('Edited-by')
    expect(parseCommitMessage('Claude', formatCommitMessage(approved))).toEqual(approved)
  })

  it('leaves out flags it cannot read, and has no review facts on an ordinary commit', () => {
    const meta = parseCommitMessage(
      'Claude',
      'x\n\nCommand: create\nFlag: not json\nFlag: {"rule":"format-disk","path":"/","line":1,"message":"m"}\nFlag: {"rule":"deletes-most","path":"/memories/a","line":-4,"message":"m"}\n',
    )
    expect(meta.flags).toEqual([
      { rule: 'deletes-most', path: '/memories/a', line: null, message: 'm' },
    ])
    const plain = parseCommitMessage('Claude', formatCommitMessage(base))
    expect(plain).not.toHaveProperty('flags')
    expect(plain).not.toHaveProperty('review')
  })
})
