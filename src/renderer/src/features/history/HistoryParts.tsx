/**
 * The pieces both history screens are made of (the side pane and the full view), over one
 * `useHistory` state: the timeline with its empty states, the selected change, and the
 * confirmation of a restore.
 */
import type { ReactNode } from 'react'
import { Banner } from '../../components/Banner'
import type { BlameActions } from '../../components/BlameView'
import { ConfirmDialog } from '../../components/ConfirmDialog'
import { EmptyState, Loading } from '../../components/Feedback'
import { CommitDetailView } from './CommitDetailView'
import { useThisMachine } from '../../lib/this-machine'
import { describeRequest } from './restore-request'
import { Timeline } from './Timeline'
import type { HistoryState } from './use-history'

export function TimelineArea(props: {
  readonly history: HistoryState
  readonly now: number
  readonly onOpenConversation: (id: string) => void
}) {
  const { history } = props
  const { snapshot, store } = history
  const total = snapshot.total
  return (
    <>
      {snapshot.error && (
        <Banner tone="error" compact onRetry={() => store.refresh()}>
          {snapshot.error}
        </Banner>
      )}
      <Loading active={total === null && !snapshot.error} label="Loading history…" />
      {total === 0 && !history.filtered && (
        <EmptyState title="No changes yet">
          <p>
            Every change to memory — by Claude, by you, or a restore — appears here, newest first.
          </p>
          <p>Start a chat; when Claude writes to memory you can compare and undo it here.</p>
        </EmptyState>
      )}
      {total === 0 && history.filtered && (
        <EmptyState title="No changes match these filters">
          <button
            type="button"
            className="button button-small"
            onClick={() => history.setFilters({})}
          >
            Clear filters
          </button>
        </EmptyState>
      )}
      {total !== null && total > 0 && (
        <Timeline
          store={store}
          total={total}
          selectedOid={history.selectedOid}
          scrollTo={history.scrollTo}
          now={props.now}
          version={snapshot.version}
          conversationTitle={history.conversationTitle}
          conversationDeleted={history.conversationDeleted}
          onSelect={history.onSelectRow}
          onOpenConversation={props.onOpenConversation}
        />
      )}
    </>
  )
}

export function DetailArea(props: {
  readonly history: HistoryState
  readonly now: number
  readonly onOpenConversation: (id: string) => void
  readonly blameActions: BlameActions
  /** What to show when nothing is selected (the list is not empty). */
  readonly idle?: ReactNode
}) {
  const { history } = props
  const { detail } = history
  return (
    <>
      {detail.error && (
        <Banner tone="error" compact onRetry={detail.reload}>
          {detail.error}
        </Banner>
      )}
      <Loading active={detail.loading && !detail.value} label="Loading change…" />
      {detail.value ? (
        <CommitDetailView
          detail={detail.value}
          now={props.now}
          mode={history.mode}
          onModeChange={history.setMode}
          wrap={history.wrap}
          onWrapChange={history.setWrap}
          conversationTitle={history.conversationTitle}
          conversationDeleted={history.conversationDeleted}
          onOpenConversation={props.onOpenConversation}
          onSelectOid={history.selectOid}
          onRequest={history.setRequest}
          onExport={history.exportVersion}
          blameActions={props.blameActions}
        />
      ) : (
        !history.selectedOid &&
        history.snapshot.total !== 0 &&
        (props.idle ?? (
          <EmptyState title="Select a change">
            <p>Pick an entry to see what it changed, and to restore or revert it.</p>
          </EmptyState>
        ))
      )}
    </>
  )
}

export function RestoreConfirm(props: { readonly history: HistoryState; readonly now: number }) {
  const { request, setRequest, perform } = props.history
  const thisMachine = useThisMachine()
  if (!request) return null
  const described = describeRequest(request, props.now, thisMachine)
  return (
    <ConfirmDialog
      title={described.title}
      confirmLabel={described.confirm}
      onConfirm={() => perform(request)}
      onCancel={() => setRequest(null)}
    >
      {described.body.map((line) => (
        <p key={line}>{line}</p>
      ))}
    </ConfirmDialog>
  )
}
