import type { ReactNode } from 'react'
import type { CommitSummary } from '../../../../shared/types'
import { knownSummary } from '../../lib/commit-summaries'
import { madeElsewhere, sentence, whoLabel, whoOf } from '../../lib/commit-words'
import { clockTime, dateTimeAttr, exactTime, visibleName } from '../../lib/format'
import { useThisMachine } from '../../lib/this-machine'
import { ConversationLink } from '../../components/ConversationLink'
import { CommitBadges, FlagReason } from './CommitBadges'

/**
 * One change in the timeline: who made it (a coloured mark), what it did in a sentence, its
 * time of day (the exact moment on hover) and the conversation it came from, or the machine
 * when another one made it. `badges` is where a row gets its markers (an overwrite, a flag);
 * `heading` opens a new day.
 */
export function TimelineRow(props: {
  readonly commit: CommitSummary
  readonly now: number
  readonly heading: string | null
  readonly conversationTitle: (id: string) => string
  readonly conversationDeleted: (id: string) => boolean
  readonly onOpenConversation: (id: string) => void
  readonly badges?: ReactNode
}) {
  const { commit } = props
  const who = whoOf(commit)
  const thisMachine = useThisMachine()
  const machine = madeElsewhere(commit, thisMachine)
  // A conversation held on another machine cannot be opened here.
  const conversationId = machine ? null : commit.conversationId
  return (
    <div role="gridcell" className="hist-cell-wrap">
      {props.heading && (
        <div role="heading" aria-level={3} className="hist-day">
          {props.heading}
        </div>
      )}
      <div className="hist-cell">
        <span className={`hist-who hist-who-${who}`} title={whoLabel(commit)} aria-hidden="true" />
        <div className="hist-cell-main">
          <div className="hist-line">
            <span className="hist-sentence" title={commit.paths.map(visibleName).join('\n')}>
              {sentence(commit, knownSummary(commit.restoredFrom), props.now, {
                thisMachine,
                joined: knownSummary(commit.otherParents?.[0]),
              })}
            </span>
            {commit.overwrite && <span className="hist-badge hist-badge-overwrite">Overwrite</span>}
            <CommitBadges commit={commit} />
            {props.badges}
          </div>
          <div className="hist-line hist-sub">
            <time dateTime={dateTimeAttr(commit.time)} title={exactTime(commit.time)}>
              {clockTime(commit.time)}
            </time>
            {machine && (
              <span className="hist-badge hist-badge-machine" title={`Made on ${machine}`}>
                {machine}
              </span>
            )}
            <FlagReason commit={commit} />
            {conversationId && (
              <ConversationLink
                title={props.conversationTitle(conversationId)}
                deleted={props.conversationDeleted(conversationId)}
                tabIndex={-1}
                onOpen={() => props.onOpenConversation(conversationId)}
              />
            )}
          </div>
        </div>
      </div>
    </div>
  )
}
