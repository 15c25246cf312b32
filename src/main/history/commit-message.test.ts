import { describe, expect, it } from 'vitest'
import type { CairnActor } from '../../shared/types'
import {
  AUTHORS,
  formatCommitMessage,
  isCairnCommit,
  parseCommitMessage,
  type CommitMeta,
  type CommitPeople,
} from './commit-message'

/** A commit as Cairn writes it: one of its identities as author and committer. */
const by = (actor: CairnActor): CommitPeople => ({
  author: AUTHORS[actor],
  committer: AUTHORS[actor],
})

/** A commit someone made with git. */
const ann: CommitPeople = {
  author: { name: 'Ann Smith', email: 'ann@example.com' },
  committer: { name: 'Ann Smith', email: 'ann@example.com' },
}

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
    expect(parseCommitMessage(by('user'), formatCommitMessage(meta))).toEqual(meta)
    expect(parseCommitMessage(by('claude'), formatCommitMessage(base))).toEqual(base)
  })

  it('keeps paths with newlines, percent signs and line separators on one line', () => {
    const odd = '/memories/a\nb%41\u2028c%u2028.md'
    const meta: CommitMeta = { ...base, actor: 'system', subject: `recovery ${odd}`, paths: [odd] }
    const message = formatCommitMessage(meta)
    expect(message.split('\n')).toHaveLength(7)
    expect(parseCommitMessage(by('system'), message)).toEqual(meta)
  })

  it('reads a commit made with git as made outside Cairn, by its author', () => {
    const meta = parseCommitMessage(ann, 'fixed things by hand\n')
    expect(meta).toEqual({
      actor: 'outside',
      author: 'Ann Smith',
      command: 'outside',
      subject: 'fixed things by hand',
      paths: [],
      conversationId: null,
      toolUseId: null,
      overwrite: false,
      restoredFrom: null,
    })
    expect(isCairnCommit(ann)).toBe(false)
  })

  it("still reads Cairn's own commits without a command as its recovery", () => {
    // Every Cairn version wrote a Command trailer; one without is read as before.
    expect(parseCommitMessage(by('system'), 'Save changes found at start-up\n')).toMatchObject({
      actor: 'system',
      command: 'recovery',
    })
    const recovery = formatCommitMessage({
      ...base,
      actor: 'system',
      command: 'recovery',
      subject: 'Save changes found at start-up',
      conversationId: null,
      toolUseId: null,
    })
    expect(parseCommitMessage(by('system'), recovery)).toMatchObject({
      actor: 'system',
      command: 'recovery',
    })
    expect(isCairnCommit(by('system'))).toBe(true)
  })

  it("does not take a forged Command trailer or Cairn's names from a commit made with git", () => {
    const forged = formatCommitMessage({
      ...base,
      command: 'restore-file',
      restoredFrom: 'a'.repeat(40),
      review: 'approved',
      machine: 'laptop',
    })
    // Named Claude, but not Claude's email: nobody vouches for the trailers.
    const claudeByName: CommitPeople = {
      author: { name: 'Claude', email: 'claude@example.com' },
      committer: { name: 'Claude', email: 'claude@example.com' },
    }
    expect(parseCommitMessage(claudeByName, forged)).toEqual({
      actor: 'outside',
      author: 'Claude',
      command: 'outside',
      subject: base.subject,
      paths: [],
      conversationId: null,
      toolUseId: null,
      overwrite: false,
      restoredFrom: null,
    })
    expect(parseCommitMessage(ann, forged)).toMatchObject({ actor: 'outside', author: 'Ann Smith' })
    // Cairn's name with another email, or another name with Cairn's email: not Cairn's.
    for (const people of [
      { author: { name: 'Cairn', email: 'x@example.com' }, committer: AUTHORS.system },
      { author: { name: 'Ann', email: AUTHORS.system.email }, committer: AUTHORS.system },
    ]) {
      expect(parseCommitMessage(people, forged).actor).toBe('outside')
    }
  })

  it("names the committer of Cairn's commit amended or cherry-picked with git", () => {
    const amended: CommitPeople = { author: AUTHORS.claude, committer: ann.committer }
    expect(parseCommitMessage(amended, formatCommitMessage(base))).toMatchObject({
      actor: 'outside',
      author: 'Ann Smith',
      command: 'outside',
      conversationId: null,
    })
  })

  it('keeps an author name to one line of a bounded length, shows the email for an empty one, and leaves out a wholly empty one', () => {
    const odd: CommitPeople = {
      author: { name: `A\u0007nn\u2028${'x'.repeat(300)}`, email: 'a@example.com' },
      committer: { name: 'A', email: 'a@example.com' },
    }
    const author = parseCommitMessage(odd, 'x\n').author ?? ''
    expect(author.startsWith('A nn x')).toBe(true)
    expect([...author]).toHaveLength(100)
    // No name: the email stands for it, as git's own `%an <%ae>` would show only that.
    const nameless = { author: { name: ' ', email: 'a@b' }, committer: { name: '', email: '' } }
    expect(parseCommitMessage(nameless, 'x\n').author).toBe('a@b')
    expect(parseCommitMessage(nameless, 'x\n').actor).toBe('outside')
    const nobody = { author: { name: ' ', email: '' }, committer: { name: '', email: '' } }
    expect(parseCommitMessage(nobody, 'x\n')).not.toHaveProperty('author')
  })

  it('ignores unknown commands and malformed restore ids', () => {
    const meta = parseCommitMessage(
      by('claude'),
      'x\n\nCommand: format-disk\nRestored-From: nope\n',
    )
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
    expect(parseCommitMessage(by('claude'), message)).toEqual(meta)
    const approved = { ...base, review: 'approved' as const }
    expect(formatCommitMessage(approved)).not.toContain('Edited-by')
    expect(parseCommitMessage(by('claude'), formatCommitMessage(approved))).toEqual(approved)
  })

  it('leaves out flags it cannot read, and has no review facts on an ordinary commit', () => {
    const meta = parseCommitMessage(
      by('claude'),
      'x\n\nCommand: create\nFlag: not json\nFlag: {"rule":"format-disk","path":"/","line":1,"message":"m"}\nFlag: {"rule":"deletes-most","path":"/memories/a","line":-4,"message":"m"}\n',
    )
    expect(meta.flags).toEqual([
      { rule: 'deletes-most', path: '/memories/a', line: null, message: 'm' },
    ])
    const plain = parseCommitMessage(by('claude'), formatCommitMessage(base))
    expect(plain).not.toHaveProperty('flags')
    expect(plain).not.toHaveProperty('review')
  })
})
