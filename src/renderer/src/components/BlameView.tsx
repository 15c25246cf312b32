import { useState } from 'react'
import type { BlameLine, CommitSummary } from '../../../shared/types'
import { useBlame } from '../lib/use-blame'
import { Banner } from './Banner'
import { Loading } from './Feedback'
import { Revealed } from './Revealed'
import { madeElsewhere, sentence, whoLabel, whoOf } from '../lib/commit-words'
import { clockTime, dayKey, exactTime, shortDateTime, visibleName } from '../lib/format'
import { useThisMachine } from '../lib/this-machine'
import { MoreRows } from './MoreRows'
import './blame.css'

/** Lines drawn at first (and added per "Show more"): each is a row of several elements. */
export const BLAME_ROWS_SHOWN = 2_000

/** What the blame gutter can lead to: the commit, and for Claude the reply that wrote it. */
export interface BlameActions {
  openCommit(commit: CommitSummary): void
  openReply(conversationId: string, toolUseId: string): void
  conversationTitle(id: string): string
  /** True when the conversation is known to be deleted: the gutter says so, with no link. */
  conversationDeleted(id: string): boolean
}

/**
 * A file with, beside each run of lines, who last changed them (Claude, You, outside Cairn,
 * Cairn), when, a link to that change and, for Claude, to the reply that wrote them.
 * `compact` fits the side pane: who and when only, the links as small buttons.
 */
export function BlameView(props: {
  readonly path: string
  readonly lines: ReadonlyArray<BlameLine>
  readonly now: number
  readonly actions: BlameActions
  readonly compact?: boolean
  /** The commit being looked at (its lines are marked). */
  readonly current?: string | null
}) {
  const { actions, now, compact = false } = props
  const [limit, setLimit] = useState(BLAME_ROWS_SHOWN)
  const all = props.lines
  const lines = all.length > limit ? all.slice(0, limit) : all
  if (lines.length === 0) return <p className="hint view-note">This file is empty.</p>
  const cut = all.filter((line) => line.damagedBefore).length
  return (
    <>
      {cut > 0 && (
        <p className="hint view-note blame-damaged" role="note">
          An older version of this file is damaged in the history, so tracing stopped there:{' '}
          {cut === 1 ? 'one line' : `${cut.toLocaleString()} lines`} may be older than the change
          shown beside {cut === 1 ? 'it' : 'them'}.
        </p>
      )}
      <div
        className={`blame${compact ? ' blame-compact' : ''}`}
        role="table"
        aria-label={`Line history of ${visibleName(props.path)}`}
      >
        {lines.map((line, index) => {
          const { commit } = line
          const first = index === 0 || lines[index - 1]?.commit.oid !== commit.oid
          const last = lines[index + 1]?.commit.oid !== commit.oid
          const who = whoOf(commit)
          return (
            <div
              role="row"
              key={line.line}
              className={`blame-row${first ? ' blame-first' : ''}${last ? ' blame-last' : ''}${
                commit.oid === props.current ? ' blame-current' : ''
              }`}
            >
              <span role="cell" className={`blame-gutter blame-who-${who}`}>
                {first && (
                  <BlameGutter commit={commit} now={now} actions={actions} compact={compact} />
                )}
              </span>
              <span className="blame-no" aria-hidden="true">
                {line.line}
              </span>
              <span role="cell" className="blame-text">
                {line.text === '' ? '\u200b' : <Revealed text={line.text} />}
              </span>
            </div>
          )
        })}
      </div>
      <MoreRows
        shown={limit}
        all={all.length}
        step={BLAME_ROWS_SHOWN}
        onMore={() => setLimit((n) => n + BLAME_ROWS_SHOWN)}
      />
    </>
  )
}

/** Loads the provenance of `path` at commit `at` (null: now) and shows it, or why not. */
export function LoadedBlame(props: {
  readonly path: string
  readonly at: string | null
  readonly now: number
  readonly actions: BlameActions
  readonly compact?: boolean
}) {
  const blame = useBlame(props.path, props.at)
  // A file too large to trace is a fact about the file, not a failure to try again.
  const refused = blame.errorCode === 'too-large' || blame.errorCode === 'not-text'
  return (
    <>
      {blame.error && refused && <p className="hint view-note">{blame.error}</p>}
      {blame.error && !refused && (
        <Banner tone="error" compact onRetry={blame.reload}>
          {blame.error}
        </Banner>
      )}
      <Loading active={blame.loading && !blame.value} label="Tracing lines…" />
      {blame.value && (
        <BlameView
          path={props.path}
          lines={blame.value}
          now={props.now}
          actions={props.actions}
          compact={props.compact}
          current={props.at}
        />
      )}
    </>
  )
}

function BlameGutter(props: {
  readonly commit: CommitSummary
  readonly now: number
  readonly actions: BlameActions
  readonly compact: boolean
}) {
  const { commit, actions, now } = props
  const who = whoOf(commit)
  const thisMachine = useThisMachine()
  const machine = madeElsewhere(commit, thisMachine)
  // A conversation held on another machine cannot be opened here.
  const conversationId = machine ? null : commit.conversationId
  const { toolUseId } = commit
  const said = sentence(commit, null, now, { thisMachine })
  // Claude's line leads to the reply that wrote it; once its conversation is deleted, the
  // gutter says so instead of offering a link that leads nowhere.
  const reply =
    who !== 'claude' || !conversationId || !toolUseId
      ? null
      : actions.conversationDeleted(conversationId)
        ? 'gone'
        : 'link'
  return (
    <span className="blame-info">
      <button
        type="button"
        className="blame-commit"
        title={`${said} — ${exactTime(commit.time)}. Open this change.`}
        aria-label={`${whoLabel(commit)}, ${shortDateTime(commit.time, now)}: ${said}. Open this change`}
        onClick={() => actions.openCommit(commit)}
      >
        <span className={`blame-mark blame-mark-${who}`} aria-hidden="true" />
        <span className="blame-who">{whoLabel(commit)}</span>
        {machine && (
          <span className="blame-machine" title={`Made on ${machine}`}>
            {machine}
          </span>
        )}
        <span className="blame-when">
          {props.compact ? (
            briefTime(commit.time, now)
          ) : (
            <Narrowed long={shortDateTime(commit.time, now)} short={briefTime(commit.time, now)} />
          )}
        </span>
      </button>
      {reply === 'gone' && (
        <span
          className="blame-reply blame-reply-gone"
          title="The conversation Claude wrote this in has been deleted"
        >
          {props.compact ? (
            'Chat deleted'
          ) : (
            <Narrowed long="Conversation deleted" short="Chat deleted" />
          )}
        </span>
      )}
      {reply === 'link' && conversationId && toolUseId && (
        <button
          type="button"
          className="conversation-link blame-reply"
          aria-label={`Open the reply that wrote this, in “${actions.conversationTitle(conversationId)}”`}
          title={`Open the reply that wrote this, in “${actions.conversationTitle(conversationId)}”`}
          onClick={() => actions.openReply(conversationId, toolUseId)}
        >
          {props.compact ? (
            'Reply'
          ) : (
            <Narrowed long={actions.conversationTitle(conversationId)} short="Reply" />
          )}
        </button>
      )}
    </span>
  )
}

/**
 * Words the wide gutter writes in full and a narrow one briefly (blame.css picks one by the
 * blame's own width); the button's name and tooltip say it all either way.
 */
function Narrowed(props: { readonly long: string; readonly short: string }) {
  return (
    <>
      {/* Its own direction: a right-to-left title reads, and is cut, from its start. */}
      <span className="blame-long" dir="auto">
        {props.long}
      </span>
      <span className="blame-short">{props.short}</span>
    </>
  )
}

/** When, as briefly as the narrow gutter allows: the time today, else the day. */
function briefTime(time: number, now: number): string {
  if (dayKey(time) === dayKey(now)) return clockTime(time)
  const sameYear = new Date(time).getFullYear() === new Date(now).getFullYear()
  return new Date(time).toLocaleDateString(undefined, {
    day: 'numeric',
    month: 'short',
    ...(sameYear ? {} : { year: 'numeric' }),
  })
}
