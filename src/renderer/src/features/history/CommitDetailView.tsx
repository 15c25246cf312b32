import type { ReactNode } from 'react'
import type { CommitDetail, CommitSummary } from '../../../../shared/types'
import { ConversationLink } from '../../components/ConversationLink'
import type { DiffMode } from '../../components/DiffView'
import { CommitBadges, FlagList } from './CommitBadges'
import { SplitIcon, UnifiedIcon } from '../../components/icons'
import type { BlameActions } from '../../components/BlameView'
import { useSummary } from '../../lib/commit-summaries'
import { madeElsewhere, sentence, whoLabel, whoOf } from '../../lib/commit-words'
import { dateTimeAttr, displayPath, exactTime, shortDateTime, visibleLines } from '../../lib/format'
import { useThisMachine } from '../../lib/this-machine'
import { usePinnedIfRoom } from '../../lib/use-pinned-if-room'
import { commandLabel } from './describe'
import { FileBlameView } from './FileBlameView'
import { FileChangeView } from './FileChangeView'
import { truncationNote } from './omitted-change'
import type { RestoreRequest } from './restore-request'

/** How the selected change's files are shown: as a diff, or whole with line provenance. */
export type DetailMode = DiffMode | 'blame'

const MODES: ReadonlyArray<{
  readonly value: DetailMode
  readonly label: string
  readonly title: string
  readonly Icon: () => ReactNode
}> = [
  { value: 'unified', label: 'Unified', title: 'Unified diff', Icon: UnifiedIcon },
  { value: 'split', label: 'Side by side', title: 'Side-by-side diff', Icon: SplitIcon },
  { value: 'blame', label: 'Blame', title: 'Each line with who last changed it', Icon: BlameIcon },
]

/**
 * The room (px, about three diff lines) the change's header must leave its pane to stay pinned
 * at its top; with less it scrolls away with the files, so its actions stay reachable.
 */
const ROOM_FOR_FILES = 60

/**
 * The selected change: what it did in a sentence, when, where it came from (a conversation,
 * another machine, the history a merge joined), the restore actions, its facts (command,
 * commit id, trailers) one click away, and each file as a diff or with the provenance of
 * every line.
 */
export function CommitDetailView(props: {
  readonly detail: CommitDetail
  readonly now: number
  readonly mode: DetailMode
  readonly onModeChange: (mode: DetailMode) => void
  readonly wrap: boolean
  readonly onWrapChange: (wrap: boolean) => void
  readonly conversationTitle: (id: string) => string
  readonly conversationDeleted: (id: string) => boolean
  readonly onOpenConversation: (id: string) => void
  readonly onSelectOid: (oid: string) => void
  readonly onRequest: (request: RestoreRequest) => void
  /** Saves the memory as it was at this change, as a ZIP. */
  readonly onExport: (oid: string) => void
  readonly blameActions: BlameActions
}) {
  const { detail, mode, now } = props
  const { commit } = detail
  const target = useSummary(commit.restoredFrom)
  const joinedOid = commit.otherParents?.[0] ?? null
  const joined = useSummary(joinedOid)
  const thisMachine = useThisMachine()
  const machine = madeElsewhere(commit, thisMachine)
  // A conversation held on another machine cannot be opened here.
  const conversationId = machine ? null : commit.conversationId
  const truncated = truncationNote(detail)
  const kept = conflictsKept(detail.message)
  const canRevert = commit.parent !== null && commit.command !== 'init'
  const who = whoOf(commit)
  const [headerRef, pinned] = usePinnedIfRoom<HTMLElement>(ROOM_FOR_FILES)
  return (
    <section className="hist-detail" aria-label="Change details">
      <header ref={headerRef} className="hist-detail-header" data-pinned={pinned ? '' : undefined}>
        <h2 className="hist-detail-title">
          <span
            className={`hist-who hist-who-${who}`}
            title={whoLabel(commit)}
            aria-hidden="true"
          />
          <span className="hist-detail-sentence">
            {sentence(commit, target, now, { thisMachine, joined })}
          </span>
          {commit.overwrite && <span className="hist-badge hist-badge-overwrite">Overwrite</span>}
          <CommitBadges commit={commit} />
        </h2>
        <p className="hist-detail-meta">
          <time dateTime={dateTimeAttr(commit.time)} title={exactTime(commit.time)}>
            {shortDateTime(commit.time, now)}
          </time>
          {machine && <span className="hist-badge hist-badge-machine">Made on {machine}</span>}
          {conversationId && (
            <ConversationLink
              prefix="From "
              title={`“${props.conversationTitle(conversationId)}”`}
              deleted={props.conversationDeleted(conversationId)}
              onOpen={() => props.onOpenConversation(conversationId)}
            />
          )}
          {commit.restoredFrom && (
            <TargetLink
              commit={commit}
              target={target}
              now={now}
              onSelect={() => props.onSelectOid(commit.restoredFrom!)}
            />
          )}
          {joinedOid && (
            <button
              type="button"
              className="hist-link"
              title="Open the last change of the history this merge joined"
              onClick={() => props.onSelectOid(joinedOid)}
            >
              Joined:{' '}
              {joined
                ? `${shortDateTime(joined.time, now)} — ${sentence(joined, null, now, { thisMachine })}`
                : 'another history'}
            </button>
          )}
        </p>
        {kept.length > 0 && (
          <p className="hist-conflict-note" role="note">
            Both versions of {kept.map(displayPath).join(', ')}{' '}
            {kept.length === 1 ? 'were' : 'were each'} kept, between conflict markers, until one is
            chosen.
          </p>
        )}
        {commit.overwrite && (
          <p className="hist-overwrite-note">
            Claude replaced an existing file with new content. Use “Restore this version” on the
            change before it to get the earlier content back.
          </p>
        )}
        <FlagList commit={commit} />
        <div className="hist-actions" role="toolbar" aria-label="Change actions">
          {canRevert && (
            <button
              type="button"
              className="button button-small"
              onClick={() => props.onRequest({ kind: 'revert', commit })}
            >
              Revert this change
            </button>
          )}
          <button
            type="button"
            className="button button-small"
            onClick={() => props.onRequest({ kind: 'all', commit })}
          >
            Restore all memory to this point
          </button>
          <button
            type="button"
            className="button button-small"
            onClick={() => props.onExport(commit.oid)}
          >
            Export this version (.zip)
          </button>
          <div className="hist-view-controls">
            {mode === 'split' && (
              <label className="hist-wrap">
                <input
                  type="checkbox"
                  checked={props.wrap}
                  onChange={(event) => props.onWrapChange(event.target.checked)}
                />
                Wrap lines
              </label>
            )}
            <div className="hist-mode" role="group" aria-label="Show the change as">
              {MODES.map(({ value, label, title, Icon }) => (
                <button
                  key={value}
                  type="button"
                  className="button button-small button-icon"
                  aria-label={label}
                  title={title}
                  aria-pressed={mode === value}
                  onClick={() => props.onModeChange(value)}
                >
                  <Icon />
                </button>
              ))}
            </div>
          </div>
        </div>
        <details className="hist-facts">
          <summary>Details</summary>
          <dl>
            <dt>Command</dt>
            <dd>
              <code>{commit.command}</code>: {commandLabel(commit.command)}
            </dd>
            <dt>Commit</dt>
            <dd>
              <code className="hist-oid">{commit.oid}</code>
            </dd>
            {commit.parent && (
              <>
                <dt>{joinedOid ? 'Parents' : 'Parent'}</dt>
                <dd>
                  {[commit.parent, ...(commit.otherParents ?? [])].map((oid) => (
                    <code key={oid} className="hist-oid">
                      {oid}
                    </code>
                  ))}
                </dd>
              </>
            )}
            {commit.machine && (
              <>
                <dt>Machine</dt>
                <dd>
                  {commit.machine === thisMachine ? `${commit.machine} (this one)` : commit.machine}
                </dd>
              </>
            )}
            <dt>Time</dt>
            <dd>{exactTime(commit.time)}</dd>
          </dl>
          <pre className="hist-message" role="region" aria-label="Commit message and trailers">
            {visibleLines(detail.message)}
          </pre>
        </details>
      </header>
      <div className="hist-files">
        {truncated && (
          <p className="hist-truncated" role="note" aria-label="Files shown">
            {truncated}. Filter the timeline by file to see a change to one of the others.
          </p>
        )}
        {detail.changes.length === 0 && (
          <p className="hint view-note">This change did not modify any file.</p>
        )}
        {detail.changes.map((change) =>
          mode === 'blame' ? (
            <FileBlameView
              key={`${commit.oid}:${change.path}:blame`}
              commit={commit}
              change={change}
              now={now}
              actions={props.blameActions}
            />
          ) : (
            <FileChangeView
              key={`${commit.oid}:${change.path}`}
              commit={commit}
              change={change}
              mode={mode}
              wrap={props.wrap}
              onRequest={props.onRequest}
            />
          ),
        )}
      </div>
    </section>
  )
}

/** What a restore or a revert went back to, by its time and what it was, never by its id. */
function TargetLink(props: {
  readonly commit: CommitSummary
  readonly target: CommitSummary | null
  readonly now: number
  readonly onSelect: () => void
}) {
  const { commit, target, now } = props
  const label = commit.command === 'revert' ? 'Undid' : 'Went back to'
  return (
    <button type="button" className="hist-link" onClick={props.onSelect}>
      {label}:{' '}
      {target
        ? `${shortDateTime(target.time, now)} — ${sentence(target, null, now)}`
        : 'an earlier change'}
    </button>
  )
}

/**
 * The files a merge kept both versions of (its `Conflict:` trailers, sync/engine.ts):
 *
 *   Conflict: %2Fmemories%2Fnotes.md
 *   Conflict: %2Fmemories%2Fphoto.png %2Fmemories%2Fphoto%20(desktop).png
 */
export function conflictsKept(message: string): ReadonlyArray<string> {
  const paths: string[] = []
  for (const line of message.split('\n')) {
    const match = /^Conflict: (\S+)/.exec(line)
    if (!match) continue
    try {
      paths.push(decodeURIComponent(match[1] as string))
    } catch {
      // Not one of Cairn's trailers: nothing to say about it.
    }
  }
  return paths
}

function BlameIcon() {
  return (
    <svg
      width={14}
      height={14}
      viewBox="0 0 16 16"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.4}
      strokeLinecap="round"
      aria-hidden="true"
    >
      <path d="M2.5 3.5h3M2.5 8h3M2.5 12.5h3M7.5 3.5h6M7.5 8h6M7.5 12.5h6" />
    </svg>
  )
}
