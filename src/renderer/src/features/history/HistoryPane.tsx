import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from 'react'
import type { ChangeResult, CommitSummary } from '../../../../shared/types'
import { Banner, Notice, useNotice } from '../../components/Banner'
import { ConfirmDialog } from '../../components/ConfirmDialog'
import { EmptyState, Loading } from '../../components/Feedback'
import { Splitter } from '../../components/Splitter'
import { api, errorMessage, unwrap } from '../../lib/api'
import { useNow } from '../../lib/use-now'
import { useThisMachine } from '../../lib/use-this-machine'
import { useResource } from '../../lib/use-resource'
import { useNavigation } from '../../lib/navigation'
import { CommitDetailView } from './CommitDetailView'
import type { DiffMode } from './DiffView'
import { HistoryFilters } from './HistoryFilters'
import { describeRequest, startRestore, type RestoreRequest } from './restore-request'
import { Timeline } from './Timeline'
import { TimelineStore, type TimelineFilters } from './timeline-store'
import { shortOid } from './describe'
import './history.css'

const fetchPage = (query: TimelineFilters & { offset: number; limit: number }) =>
  unwrap(api().history.log(withoutEmpty(query)))
const loadDetail = (oid: string) => unwrap(api().history.show({ oid }))
const loadFiles = async () =>
  (await unwrap(api().memory.tree())).filter((e) => e.kind === 'file').map((e) => e.path)
const loadConversations = async () =>
  (await unwrap(api().conversations.list({}))).map((hit) => ({
    id: hit.conversation.id,
    title: hit.conversation.title,
  }))

function withoutEmpty<T extends object>(query: T): T {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)) as T
}

function filtersOf(target: { path?: string; conversationId?: string } | null): TimelineFilters {
  return withoutEmpty({ path: target?.path, conversationId: target?.conversationId })
}

/** The History tab: filters, the virtualized timeline, the selected change and its restores. */
export function HistoryPane() {
  const navigation = useNavigation()
  const [store] = useState(() => new TimelineStore(fetchPage, errorMessage))
  const snapshot = useSyncExternalStore(store.subscribe, store.getSnapshot)
  const [filters, setFilters] = useState<TimelineFilters>(() => filtersOf(navigation.historyTarget))
  const [selectedOid, setSelectedOid] = useState<string | null>(
    navigation.historyTarget?.oid ?? null,
  )
  const [locate, setLocate] = useState<{ oid: string; token: number } | null>(
    navigation.historyTarget?.oid ? { oid: navigation.historyTarget.oid, token: 0 } : null,
  )
  const [scrollTo, setScrollTo] = useState<{ index: number; token: number } | null>(null)
  const [requestedTarget, setRequestedTarget] = useState(navigation.historyTarget)
  const [mode, setMode] = useState<DiffMode>('unified')
  const [split, setSplit] = useState(40)
  const [request, setRequest] = useState<RestoreRequest | null>(null)
  const { notice, show, dismiss } = useNotice()
  const now = useNow()
  const thisMachine = useThisMachine()

  const selectOid = useCallback((oid: string) => {
    setSelectedOid(oid)
    setLocate((previous) => ({ oid, token: (previous?.token ?? 0) + 1 }))
  }, [])

  const onSelectRow = useCallback((commit: CommitSummary) => setSelectedOid(commit.oid), [])

  // Another feature asked for a commit, a file's history or a conversation's changes.
  if (navigation.historyTarget !== requestedTarget) {
    setRequestedTarget(navigation.historyTarget)
    if (navigation.historyTarget) {
      setFilters(filtersOf(navigation.historyTarget))
      if (navigation.historyTarget.oid) {
        setSelectedOid(navigation.historyTarget.oid)
        setLocate({ oid: navigation.historyTarget.oid, token: (locate?.token ?? 0) + 1 })
      }
    }
  }

  useEffect(() => {
    store.setFilters(filters)
  }, [store, filters])

  const detail = useResource(selectedOid, loadDetail)
  const files = useResource('files', loadFiles)
  const conversations = useResource('conversations', loadConversations)
  const { reload: reloadFiles } = files
  const { reload: reloadConversations } = conversations

  useEffect(() => {
    const offCommit = api().on('history:commit', () => {
      store.refresh()
      reloadFiles()
    })
    const offConversations = api().on('conversations:changed', () => reloadConversations())
    return () => {
      offCommit()
      offConversations()
    }
  }, [store, reloadFiles, reloadConversations])

  useEffect(() => {
    if (!locate) return
    let current = true
    void store.locate(locate.oid).then((index) => {
      if (current && index !== null) setScrollTo({ index, token: locate.token })
    })
    return () => {
      current = false
    }
  }, [store, locate, filters])

  const titles = useMemo(
    () => new Map((conversations.value ?? []).map((c) => [c.id, c.title])),
    [conversations.value],
  )
  const conversationTitle = useCallback((id: string) => titles.get(id) ?? 'Conversation', [titles])

  const afterChange = (result: ChangeResult, done: string) => {
    const commit = result.commit
    if (!commit) {
      show(
        result.message || 'Nothing needed to change: memory already matches that version.',
        'success',
      )
      return
    }
    selectOid(commit.oid)
    show(`${done} This can be undone.`, 'success', {
      label: 'Undo',
      run: () => void undo(commit),
    })
  }

  const undo = async (commit: CommitSummary) => {
    try {
      const result = await unwrap(api().history.revert({ oid: commit.oid }))
      if (result.commit) selectOid(result.commit.oid)
      show(`Undone: ${shortOid(commit.oid)} was reverted. The undo is in History too.`, 'success')
    } catch (error) {
      show(`Could not undo: ${errorMessage(error)}`, 'error')
    }
  }

  const perform = async (req: RestoreRequest) => {
    try {
      const [call, done] = startRestore(req)
      afterChange(await unwrap(call), done)
    } catch (error) {
      show(errorMessage(error), 'error')
    } finally {
      setRequest(null)
    }
  }

  const total = snapshot.total
  const filtered = Boolean(filters.path || filters.conversationId || filters.actor)
  const described = request ? describeRequest(request) : null

  return (
    <div className="hist-pane">
      <HistoryFilters
        filters={filters}
        onChange={setFilters}
        filePaths={files.value ?? []}
        conversations={conversations.value ?? []}
        total={total}
      />
      <Notice notice={notice} onDismiss={dismiss} />
      {snapshot.error && (
        <Banner tone="error" compact onRetry={() => store.refresh()}>
          {snapshot.error}
        </Banner>
      )}

      <div className="hist-list" style={{ flexBasis: `${split}%` }}>
        <Loading active={total === null && !snapshot.error} label="Loading history…" />
        {total === 0 && !filtered && (
          <EmptyState title="No changes yet">
            <p>
              Every change to memory — by Claude, by you, or a restore — appears here, newest first.
            </p>
            <p>Start a chat; when Claude writes to memory you can compare and undo it here.</p>
          </EmptyState>
        )}
        {total === 0 && filtered && (
          <EmptyState title="No changes match these filters">
            <button type="button" className="button button-small" onClick={() => setFilters({})}>
              Clear filters
            </button>
          </EmptyState>
        )}
        {total !== null && total > 0 && (
          <Timeline
            store={store}
            total={total}
            selectedOid={selectedOid}
            scrollTo={scrollTo}
            now={now}
            thisMachine={thisMachine}
            version={snapshot.version}
            conversationTitle={conversationTitle}
            onSelect={onSelectRow}
            onOpenConversation={(id) => navigation.openConversation(id)}
          />
        )}
      </div>

      <Splitter label="Resize timeline" value={split} onChange={setSplit} />

      <div className="hist-detail-area">
        {detail.error && (
          <Banner tone="error" compact onRetry={detail.reload}>
            {detail.error}
          </Banner>
        )}
        <Loading active={detail.loading && !detail.value} label="Loading change…" />
        {detail.value ? (
          <CommitDetailView
            detail={detail.value}
            mode={mode}
            onModeChange={setMode}
            conversationTitle={conversationTitle}
            onOpenConversation={(id) => navigation.openConversation(id)}
            onSelectOid={selectOid}
            onRequest={setRequest}
            thisMachine={thisMachine}
            onExport={(oid) => {
              unwrap(api().sync.export({ kind: 'zip', at: oid })).then(
                (result) => {
                  if (result.saved) show(result.message, 'success')
                },
                (error: unknown) => show(`Not exported: ${errorMessage(error)}`, 'error'),
              )
            }}
          />
        ) : (
          !selectedOid &&
          total !== 0 && (
            <EmptyState title="Select a change">
              <p>Pick an entry to see what it changed, and to restore or revert it.</p>
            </EmptyState>
          )
        )}
      </div>

      {request && described && (
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
      )}
    </div>
  )
}
