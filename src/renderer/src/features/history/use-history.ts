import { useCallback, useEffect, useMemo, useState, useSyncExternalStore } from 'react'
import type { ChangeResult, CommitSummary, LogPage } from '../../../../shared/types'
import { useNotice } from '../../components/Banner'
import type { BlameActions } from '../../components/BlameView'
import type { DetailMode } from './CommitDetailView'
import { api, errorMessage, unwrap } from '../../lib/api'
import { loadSummaries } from '../../lib/commit-summaries'
import { keptAsideWords } from '../../lib/kept-aside'
import { useConversationTitles } from '../../lib/conversation-titles'
import { useNavigation, type HistoryTarget } from '../../lib/navigation'
import { useResource } from '../../lib/use-resource'
import { useThisMachine } from '../../lib/this-machine'
import { startRestore, type RestoreRequest } from './restore-request'
import { TimelineStore, type TimelineFilters } from './timeline-store'

/**
 * A page of the timeline, with the commits its restores went back to and its merges joined
 * loaded first: a row says "restored preferences.md to its version of 3 Nov, 14:02" or
 * "merged the memory of laptop" from its first drawing.
 */
async function fetchPage(query: TimelineFilters & { offset: number; limit: number }) {
  const page: LogPage = await unwrap(api().history.log(withoutEmpty(query)))
  const named = page.entries.flatMap((entry) => [entry.restoredFrom, entry.otherParents?.[0]])
  await loadSummaries(named).catch(() => {
    // Rows then name the target less precisely ("an earlier version"), nothing worse.
  })
  return page
}
const loadDetail = (oid: string) => unwrap(api().history.show({ oid }))
const loadFiles = async () =>
  (await unwrap(api().memory.tree())).filter((e) => e.kind === 'file').map((e) => e.path)

function withoutEmpty<T extends object>(query: T): T {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)) as T
}

function filtersOf(target: HistoryTarget | null): TimelineFilters {
  return withoutEmpty({ path: target?.path, conversationId: target?.conversationId })
}

/**
 * Everything a history screen holds: the timeline (filters, selection, where to scroll),
 * the selected change, the diff layout, and the restores with their confirmation and
 * result. The side pane and the full history view each draw it their own way. `target` is
 * what another screen asked to see (a commit, a file's history, a conversation's changes).
 */
export function useHistory(target: HistoryTarget | null) {
  const [store] = useState(() => new TimelineStore(fetchPage, errorMessage))
  const snapshot = useSyncExternalStore(store.subscribe, store.getSnapshot)
  const [filters, setFilters] = useState<TimelineFilters>(() => filtersOf(target))
  const [selectedOid, setSelectedOid] = useState<string | null>(target?.oid ?? null)
  const [locate, setLocate] = useState<{ oid: string; token: number } | null>(
    target?.oid ? { oid: target.oid, token: 0 } : null,
  )
  const [scrollTo, setScrollTo] = useState<{ index: number; token: number } | null>(null)
  const [followed, setFollowed] = useState(target)
  const [mode, setMode] = useState<DetailMode>('unified')
  const [wrap, setWrap] = useState(false)
  const [request, setRequest] = useState<RestoreRequest | null>(null)
  const { notice, show, dismiss } = useNotice()
  const { conversations, titleOf, deleted } = useConversationTitles()
  const { showReply } = useNavigation()
  const thisMachine = useThisMachine()

  const selectOid = useCallback((oid: string) => {
    setSelectedOid(oid)
    setLocate((previous) => ({ oid, token: (previous?.token ?? 0) + 1 }))
  }, [])
  const onSelectRow = useCallback((commit: CommitSummary) => setSelectedOid(commit.oid), [])
  // A line's provenance leads to its change here, and to the reply that wrote it in the chat.
  const blameActions = useMemo<BlameActions>(
    () => ({
      openCommit: (commit) => selectOid(commit.oid),
      openReply: showReply,
      conversationTitle: titleOf,
      conversationDeleted: deleted,
    }),
    [selectOid, showReply, titleOf, deleted],
  )

  // Another feature asked for a commit, a file's history or a conversation's changes.
  if (target !== followed) {
    setFollowed(target)
    if (target) {
      setFilters(filtersOf(target))
      if (target.oid) {
        setSelectedOid(target.oid)
        setLocate({ oid: target.oid, token: (locate?.token ?? 0) + 1 })
      }
    }
  }

  useEffect(() => {
    store.setFilters(filters)
  }, [store, filters])

  const detail = useResource(selectedOid, loadDetail)
  const files = useResource('files', loadFiles)
  const { reload: reloadFiles } = files

  useEffect(
    () =>
      api().on('history:commit', () => {
        store.refresh()
        reloadFiles()
      }),
    [store, reloadFiles],
  )

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

  const undo = async (commit: CommitSummary) => {
    try {
      const result = await unwrap(api().history.revert({ oid: commit.oid }))
      if (result.commit) selectOid(result.commit.oid)
      show(
        'Undone. The undo is a change of its own in History, so it can be undone too.',
        'success',
      )
    } catch (error) {
      show(`Could not undo: ${errorMessage(error)}`, 'error')
    }
  }

  const afterChange = (result: ChangeResult, done: string) => {
    const commit = result.commit
    // A file History had no copy of was kept aside, not replaced: where it went is said.
    const kept = keptAsideWords(result.keptAside)
    const tone = kept ? 'warning' : 'success'
    if (!commit) {
      show(
        kept
          ? `${done}${kept}`
          : result.message || 'Nothing needed to change: memory already matches that version.',
        tone,
      )
      return
    }
    selectOid(commit.oid)
    show(`${done}${kept} This can be undone.`, tone, {
      label: 'Undo',
      run: () => void undo(commit),
    })
  }

  // The memory as it was at a change, saved as a ZIP where the person chooses.
  const exportVersion = (oid: string) => {
    unwrap(api().sync.export({ kind: 'zip', at: oid })).then(
      (result) => {
        if (result.saved) show(result.message, 'success')
      },
      (error: unknown) => show(`Not exported: ${errorMessage(error)}`, 'error'),
    )
  }

  const perform = async (req: RestoreRequest) => {
    try {
      const [call, done] = startRestore(req, Date.now(), thisMachine)
      afterChange(await unwrap(call), done)
    } catch (error) {
      show(errorMessage(error), 'error')
    } finally {
      setRequest(null)
    }
  }

  return {
    store,
    snapshot,
    filters,
    setFilters,
    filtered: Boolean(filters.path || filters.conversationId || filters.actor),
    selectedOid,
    selectOid,
    onSelectRow,
    scrollTo,
    detail,
    filePaths: files.value ?? [],
    conversations,
    conversationTitle: titleOf,
    conversationDeleted: deleted,
    blameActions,
    mode,
    setMode,
    wrap,
    setWrap,
    request,
    setRequest,
    perform,
    exportVersion,
    notice,
    dismissNotice: dismiss,
  }
}

export type HistoryState = ReturnType<typeof useHistory>
