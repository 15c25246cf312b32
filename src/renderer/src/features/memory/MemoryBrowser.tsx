import { useEffect, useMemo, useRef, useState } from 'react'
import type { ApiResult, ChangeResult, MemoryEntry } from '../../../../shared/types'
import { Banner, Notice, useNotice } from '../../components/Banner'
import { ConfirmDialog } from '../../components/ConfirmDialog'
import type { BlameActions } from '../../components/BlameView'
import { ConversationLink } from '../../components/ConversationLink'
import { useSummary } from '../../lib/commit-summaries'
import { useConversationTitles } from '../../lib/conversation-titles'
import { EmptyState, Loading } from '../../components/Feedback'
import { LazyPart, retryableLazy } from '../../components/LazyPart'
import { icons } from '../../components/icons'
import { Splitter } from '../../components/Splitter'
import { api, errorMessage, unwrap } from '../../lib/api'
import { useDebounced } from '../../lib/use-debounced'
import { useNow } from '../../lib/use-now'
import { useResource } from '../../lib/use-resource'
import { useNavigation } from '../../lib/navigation'
import { displayPath, exactTime, shortDateTime } from '../../lib/format'
import { keptAsideWords } from '../../lib/kept-aside'
import { useUnsavedGuard } from '../../lib/use-unsaved-guard'
import { FileUseList } from './FileUseList'
import { filesByUse, type FileOrder } from './file-use'
import { FileView, type FileActions } from './FileView'
import { DeleteDialog, ExpireDialog, NewFileDialog, RenameDialog } from './MemoryDialogs'
import { MemoryTree } from './MemoryTree'
import { PendingList } from './PendingList'
import { SearchResults } from './SearchResults'
import { SizeMeter } from './SizeMeter'
import { copyNameFor, parentOf } from './tree-model'
import { useMemoryStats } from './use-memory-stats'
import './memory.css'

// Comparing a past version with now (diffs) is rare: its code loads the first time it is used.
const ComparePanel = retryableLazy(() =>
  import('./ComparePanel').then((module) => ({ default: module.ComparePanel })),
)

/** Where the browser is asked to go: another file (and line), or memory at another reply. */
type Switch =
  | { readonly kind: 'path'; readonly path: string; readonly line: number | null }
  | { readonly kind: 'then'; readonly then: ReturnType<typeof useNavigation>['memoryAt'] }

type Dialog =
  | { readonly kind: 'new' }
  | { readonly kind: 'rename'; readonly path: string }
  | { readonly kind: 'delete'; readonly path: string; readonly entryKind: 'file' | 'dir' }
  | { readonly kind: 'expire'; readonly path: string }

/** `now`, `then:<oid>` (memory after that commit) or `then:empty` (memory was empty). */
const loadTree = async (key: string) => {
  if (key === 'now') return unwrap(api().memory.tree())
  const at = key.slice('then:'.length)
  return at === 'empty' ? [] : unwrap(api().memory.tree({ at }))
}
const loadFile = (key: string) => {
  const { path, at } = JSON.parse(key) as { path: string; at: string | null }
  return unwrap(api().memory.read(at ? { path, at } : { path }))
}
const runSearch = (query: string) => unwrap(api().memory.search({ query }))
const compareWithNow = (key: string) => unwrap(api().history.compare({ from: key }))

/**
 * The Memory tab: the /memories tree, search, the open file, and the user's own edits. Asked
 * for memory at a reply, it shows memory as it was then, read-only, with the files Claude
 * viewed marked, and can compare it with now.
 */
export function MemoryBrowser() {
  const navigation = useNavigation()
  const [selected, setSelected] = useState<string | null>(navigation.memoryPath)
  const [requestedPath, setRequestedPath] = useState(navigation.memoryPath)
  const [highlightLine, setHighlightLine] = useState<number | null>(null)
  const [editing, setEditing] = useState(false)
  // The editor's text while it differs from the file: switching away asks first (`leaving`).
  const [unsaved, setUnsaved] = useState<string | null>(null)
  const [leaving, setLeaving] = useState<Switch | null>(null)
  const [dialog, setDialog] = useState<Dialog | null>(null)
  const { notice, show, dismiss } = useNotice()
  const [query, setQuery] = useState('')
  const [split, setSplit] = useState(34)
  const [blame, setBlame] = useState(false)
  const [comparing, setComparing] = useState(false)
  const [shownThen, setShownThen] = useState(navigation.memoryAt)
  const dirty = editing && unsaved !== null
  // Closing or reloading the window asks first while the editor holds unsaved text.
  useUnsavedGuard(dirty ? selected : null)

  /** Shows another file, or memory at another reply, closing the editor. */
  const apply = (to: Switch) => {
    if (to.kind === 'then') {
      // Another reply's memory, or back to now: start without a comparison.
      setShownThen(to.then)
      setComparing(false)
    } else {
      setSelected(to.path)
      setHighlightLine(to.line)
    }
    setEditing(false)
    setUnsaved(null)
  }
  /** `apply`, unless the editor holds unsaved text: then the person is asked first. */
  const request = (to: Switch) => {
    if (to.kind === 'path' && to.path === selected && editing) setHighlightLine(to.line)
    else if (dirty) setLeaving(to)
    else apply(to)
  }
  if (navigation.memoryAt !== shownThen && leaving?.kind !== 'then') {
    request({ kind: 'then', then: navigation.memoryAt })
  }
  // Memory as shown (it follows the navigation once unsaved text is dealt with).
  const then = shownThen
  const readOnly = then !== null
  const tree = useResource(then ? `then:${then.at ?? 'empty'}` : 'now', loadTree)
  const thenCommit = useSummary(then?.at)
  // Memory at a reply whose version the history no longer holds (rewritten outside Cairn): said
  // once, without a Retry that cannot bring it back, and no file of it is opened.
  const thenGone = readOnly && tree.errorCode === 'not-found'
  const { titleOf, deleted } = useConversationTitles()
  const { openFullHistory, showReply } = navigation
  const blameActions = useMemo<BlameActions>(
    () => ({
      openCommit: (commit) => openFullHistory({ oid: commit.oid }),
      openReply: showReply,
      conversationTitle: titleOf,
      conversationDeleted: deleted,
    }),
    [openFullHistory, showReply, titleOf, deleted],
  )
  const stats = useMemoryStats()
  const [order, setOrder] = useState<FileOrder>('name')
  const [notReadInDays, setNotReadInDays] = useState('')
  const [oversizedOnly, setOversizedOnly] = useState(false)
  const now = useNow()

  // Another feature asked to open a file (e.g. a tool card): follow it.
  if (navigation.memoryPath !== requestedPath) {
    setRequestedPath(navigation.memoryPath)
    if (navigation.memoryPath) request({ kind: 'path', path: navigation.memoryPath, line: null })
  }

  const entries = useMemo(() => tree.value ?? [], [tree.value])
  const byPath = useMemo(() => new Map(entries.map((entry) => [entry.path, entry])), [entries])
  const selectedEntry = selected ? byPath.get(selected) : undefined
  const searched = useDebounced(query).trim()
  const searchKey = searched === '' || readOnly ? null : searched
  const fileKey =
    selected && selectedEntry?.kind !== 'dir' && !(then && then.at === null) && !thenGone
      ? JSON.stringify({ path: selected, at: then?.at ?? null })
      : null
  const file = useResource(fileKey, loadFile)
  const search = useResource(searchKey, runSearch)
  const comparison = useResource(comparing && then?.at ? then.at : null, compareWithNow)
  const { reload: reloadTree } = tree
  const { reload: reloadFile } = file
  const { reload: reloadSearch } = search
  const { reload: reloadComparison } = comparison

  const listRef = useRef<HTMLDivElement>(null)

  // Live: every commit (Claude's, yours, a restore) may change the tree and the open file;
  // memory at a reply never changes, but "now" in a comparison does.
  const live = useRef(!readOnly)
  useEffect(() => {
    live.current = !readOnly
  }, [readOnly])
  useEffect(
    () =>
      api().on('history:commit', () => {
        if (!live.current) {
          reloadComparison()
          return
        }
        reloadTree()
        reloadFile()
        reloadSearch()
      }),
    [reloadTree, reloadFile, reloadSearch, reloadComparison],
  )

  const changedSince = comparing ? comparison.value?.changes : undefined
  const marks = useMemo(() => {
    const found = new Map<string, { label: string; tone: string }>()
    for (const path of then?.viewed ?? []) found.set(path, { label: 'Viewed', tone: 'viewed' })
    for (const change of changedSince ?? []) {
      if (change.status === 'added') continue
      // Memory at the reply holds a moved file under its old name.
      if (change.status === 'renamed' && change.oldPath) {
        found.set(change.oldPath, { label: 'Renamed since', tone: 'modified' })
        continue
      }
      found.set(
        change.path,
        change.status === 'deleted'
          ? { label: 'Deleted since', tone: 'deleted' }
          : { label: 'Changed since', tone: 'modified' },
      )
    }
    return found
  }, [then, changedSince])

  const select = (path: string, line: number | null = null) => request({ kind: 'path', path, line })

  /** Runs a change, shows its result, and offers to undo it by reverting the commit. */
  const change = async (
    run: () => Promise<ApiResult<ChangeResult>>,
    done: (result: ChangeResult) => string,
  ): Promise<ChangeResult | null> => {
    try {
      const result = await unwrap(run())
      const commit = result.commit
      // What was kept aside, never destroyed, is named (History cannot bring it back).
      const kept = result.keptAside ?? []
      const said = commit
        ? done(result) + keptAsideWords(kept)
        : kept.length > 0
          ? keptAsideWords(kept).trim()
          : result.message || 'Nothing changed.'
      show(
        said,
        kept.length > 0 ? 'warning' : 'success',
        commit
          ? {
              label: 'Undo',
              run: () => {
                void undo(commit.oid)
              },
            }
          : undefined,
      )
      // No commit, no `history:commit` event: a file History keeps no copy of still moved.
      if (!commit) {
        reloadTree()
        stats.reload()
      }
      return result
    } catch (error) {
      show(errorMessage(error), 'error')
      return null
    }
  }

  const undo = async (oid: string) => {
    try {
      await unwrap(api().history.revert({ oid }))
      show(
        'Undone. The undo is a change of its own in History, so it can be undone too.',
        'success',
      )
    } catch (error) {
      show(errorMessage(error), 'error')
    }
  }

  const actions: FileActions = {
    async save(path, content) {
      const result = await change(
        () => api().memory.write({ path, content }),
        () => `Saved ${displayPath(path)}. The change is in History, by You.`,
      )
      return result !== null
    },
    async saveAs(path, content) {
      // A free name beside it: the tree says which are taken, and mustNotExist checks again.
      const taken = new Set(entries.map((entry) => entry.path))
      const target = copyNameFor(path, taken)
      const result = await change(
        () => api().memory.write({ path: target, content, mustNotExist: true }),
        () => `Saved your text as ${displayPath(target)}. The change is in History, by You.`,
      )
      if (result === null) return false
      apply({ kind: 'path', path: target, line: null })
      return true
    },
    rename: (path) => setDialog({ kind: 'rename', path }),
    remove: (path, entryKind) => setDialog({ kind: 'delete', path, entryKind }),
    expire: (path) => setDialog({ kind: 'expire', path }),
    showHistory: (path) => navigation.showHistory({ path }),
  }

  const days = Number(notReadInDays)
  const daysFilter = notReadInDays.trim() !== '' && Number.isInteger(days) && days > 0 ? days : null
  // Use (reads, sizes) is about memory now: memory at a reply is shown as its tree.
  const byUse = !readOnly && (order !== 'name' || daysFilter !== null || oversizedOnly)
  const useByPath = useMemo(
    () => new Map((stats.value?.files ?? []).map((file) => [file.path, file])),
    [stats.value],
  )
  const listed = useMemo(
    () =>
      filesByUse(stats.value?.files ?? [], {
        order,
        notReadInDays: daysFilter,
        oversizedOnly,
        now,
      }),
    [stats.value, order, daysFilter, oversizedOnly, now],
  )

  const childCount = selected
    ? entries.filter((entry) => parentOf(entry.path) === selected).length
    : 0
  const empty = tree.value !== undefined && entries.length === 0

  return (
    // A banner that goes with the focus inside it (a result dismissed) hands it on in the pane.
    <div className={`mem-browser${readOnly ? ' mem-then' : ''}`} data-banner-group="">
      {then && (
        <Banner
          tone="info"
          title="Memory at this reply"
          actions={
            <>
              {then.at && !thenGone && (
                <button
                  type="button"
                  className="button button-small"
                  aria-pressed={comparing}
                  onClick={() => setComparing((value) => !value)}
                >
                  {comparing ? 'Hide comparison' : 'Compare with now'}
                </button>
              )}
              <button type="button" className="button button-small" onClick={navigation.backToNow}>
                Back to now
              </button>
            </>
          }
        >
          {then.at === null ? (
            <>Memory was empty when this reply began. </>
          ) : (
            <>
              Read-only: memory as Claude could see it when the reply began
              {thenCommit && (
                <>
                  ,{' '}
                  <time title={exactTime(thenCommit.time)}>
                    {shortDateTime(thenCommit.time, now)}
                  </time>
                </>
              )}
              .{' '}
            </>
          )}
          {then.conversationId && (
            <ConversationLink
              title={titleOf(then.conversationId)}
              prefix="Reply in "
              onOpen={() => navigation.openConversation(then.conversationId!)}
            />
          )}
        </Banner>
      )}
      {!readOnly && (
        <div className="mem-toolbar">
          <input
            type="search"
            className="input input-small mem-search"
            aria-label="Search memory files"
            placeholder="Search memory…"
            value={query}
            onChange={(event) => setQuery(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Escape') setQuery('')
            }}
          />
          <button
            type="button"
            className="button button-small"
            onClick={() => setDialog({ kind: 'new' })}
          >
            <icons.plus width={14} height={14} /> New file
          </button>
        </div>
      )}

      {!readOnly && (
        <div className="mem-toolbar mem-use-bar">
          <label className="mem-use-field">
            Sort
            <select
              className="input input-small"
              aria-label="Sort files"
              value={order}
              onChange={(event) => setOrder(event.target.value as FileOrder)}
            >
              <option value="name">By name</option>
              <option value="last-read">By last read</option>
              <option value="size">By size</option>
            </select>
          </label>
          <label className="mem-use-field">
            Not read in
            <input
              type="number"
              className="input input-small mem-use-days"
              aria-label="Not read in days"
              min={1}
              max={3650}
              placeholder="any"
              value={notReadInDays}
              onChange={(event) => setNotReadInDays(event.target.value)}
            />
            days
          </label>
        </div>
      )}

      <Notice notice={notice} onDismiss={dismiss} />
      <PendingList />
      {tree.error && (
        <Banner tone="error" compact {...(thenGone ? {} : { onRetry: tree.reload })}>
          {tree.error}
        </Banner>
      )}

      <div
        ref={listRef}
        className="mem-list"
        style={{ flexBasis: `${split}%` }}
        data-banner-fallback=""
      >
        {searchKey !== null ? (
          <SearchResults
            query={searchKey}
            hits={search.value}
            loading={search.loading}
            error={search.error}
            onRetry={search.reload}
            onOpen={(path, line) => select(path, line)}
          />
        ) : (
          <>
            <Loading active={tree.loading && tree.value === undefined} label="Loading memory…" />
            {empty && readOnly && (
              <EmptyState title="Memory was empty then">
                <p>Claude had no memory files when this reply began.</p>
              </EmptyState>
            )}
            {empty && !readOnly && (
              <EmptyState title="No memories yet">
                <p>When Claude decides something is worth remembering, its files appear here.</p>
                <p>You can also write one yourself with New file.</p>
              </EmptyState>
            )}
            {entries.length > 0 && !byUse && (
              <MemoryTree
                entries={entries}
                selected={selected}
                onSelect={(path) => select(path)}
                marks={marks}
                scrollRef={listRef}
              />
            )}
            {byUse && (
              <FileUseList
                files={listed}
                selected={selected}
                now={now}
                label={
                  daysFilter === null
                    ? 'Memory files by use'
                    : `Memory files not read in ${daysFilter} days`
                }
                onSelect={(path) => select(path)}
                scrollRef={listRef}
              />
            )}
          </>
        )}
      </div>
      {stats.error && !stats.value && !readOnly && (
        <div className="mem-read-error">
          <Banner tone="error" title="Could not load memory sizes" onRetry={stats.reload}>
            {stats.error}
          </Banner>
        </div>
      )}
      {stats.value && stats.value.files.length > 0 && !readOnly && (
        <SizeMeter
          stats={stats.value}
          oversizedOnly={oversizedOnly}
          onOversizedOnly={setOversizedOnly}
        />
      )}

      <Splitter label="Resize file list" value={split} onChange={setSplit} />

      <div className="mem-detail">
        {thenGone ? null : comparing && then?.at ? (
          <LazyPart fallback={<Loading active label="Loading the comparison…" />}>
            <ComparePanel
              comparison={comparison.value}
              loading={comparison.loading}
              error={comparison.error}
              onRetry={comparison.reload}
              selected={selected}
              onSelect={(path) => setSelected(path)}
            />
          </LazyPart>
        ) : selected ? (
          <FileView
            path={selected}
            entry={selectedEntry}
            file={file.value}
            loading={file.loading}
            error={file.error}
            highlightLine={highlightLine}
            childCount={childCount}
            missing={tree.value !== undefined && !selectedEntry && file.error !== null}
            use={selected && !readOnly ? useByPath.get(selected) : undefined}
            onRetry={file.reload}
            actions={actions}
            editing={editing}
            onEditingChange={setEditing}
            onUnsaved={setUnsaved}
            at={then?.at ?? null}
            readOnly={readOnly}
            blame={blame}
            onBlameChange={setBlame}
            blameActions={blameActions}
          />
        ) : empty ? (
          <EmptyState title="How memory works">
            <p>
              Claude reads these files at the start of every conversation and keeps them up to date.
            </p>
            <p>
              Every change, by Claude or by you, is saved in History, where any version can be
              restored.
            </p>
          </EmptyState>
        ) : (
          <EmptyState title="No file open">
            <p>Select a file to read it, or search across all memory files.</p>
          </EmptyState>
        )}
      </div>

      {leaving && selected && (
        <ConfirmDialog
          title={`Save your changes to ${displayPath(selected)}?`}
          confirmLabel="Save"
          onConfirm={async () => {
            const saved = unsaved === null ? true : await actions.save(selected, unsaved)
            const to = leaving
            setLeaving(null)
            if (saved) apply(to)
            else if (to.kind === 'then') navigation.backToNow()
          }}
          alternative={{
            label: 'Discard',
            run: () => {
              setLeaving(null)
              apply(leaving)
            },
          }}
          onCancel={() => {
            setLeaving(null)
            // Stay with the editor: memory now, as shown.
            if (leaving.kind === 'then') navigation.backToNow()
          }}
        >
          <p>
            The editor holds changes to <code>{selected}</code> that are not saved yet. Save them as
            a change by You, discard them, or cancel to keep editing.
          </p>
        </ConfirmDialog>
      )}
      {dialog?.kind === 'new' && (
        <NewFileDialog
          folder={folderFor(selected, selectedEntry)}
          onCancel={() => setDialog(null)}
          onCreate={async (path, content) => {
            const result = await change(
              () => api().memory.write({ path, content, mustNotExist: true }),
              () => `Created ${displayPath(path)}. The change is in History, by You.`,
            )
            if (result) {
              setDialog(null)
              select(path)
            }
          }}
        />
      )}
      {dialog?.kind === 'rename' && (
        <RenameDialog
          path={dialog.path}
          onCancel={() => setDialog(null)}
          onRename={async (to) => {
            const result = await change(
              () => api().memory.rename({ from: dialog.path, to }),
              () => `Renamed ${displayPath(dialog.path)} to ${displayPath(to)}.`,
            )
            if (result) {
              setDialog(null)
              select(to)
            }
          }}
        />
      )}
      {dialog?.kind === 'expire' && (
        <ExpireDialog
          path={dialog.path}
          use={useByPath.get(dialog.path)}
          onCancel={() => setDialog(null)}
          onExpire={async () => {
            const result = await change(
              () => api().hygiene.expire({ path: dialog.path }),
              () => `Expired ${displayPath(dialog.path)}. You can bring it back from History.`,
            )
            setDialog(null)
            if (result) setSelected(null)
          }}
        />
      )}
      {dialog?.kind === 'delete' && (
        <DeleteDialog
          path={dialog.path}
          kind={dialog.entryKind}
          notInHistory={entries
            .filter(
              (entry) =>
                entry.notInHistory &&
                (entry.path === dialog.path || entry.path.startsWith(`${dialog.path}/`)),
            )
            .map((entry) => entry.path)}
          unreadable={entries.some((entry) => entry.path === dialog.path && entry.unreadable)}
          reason={entries.find((entry) => entry.path === dialog.path)?.notInHistory}
          keptAs={entries.find((entry) => entry.path === dialog.path)?.keptAsideAs}
          onCancel={() => setDialog(null)}
          onDelete={async () => {
            const result = await change(
              () => api().memory.delete({ path: dialog.path }),
              (result) =>
                result.keptAside?.length
                  ? `Deleted ${displayPath(dialog.path)}. You can bring back what History holds of it from History.`
                  : `Deleted ${displayPath(dialog.path)}. You can bring it back from History.`,
            )
            setDialog(null)
            if (result) setSelected(null)
          }}
        />
      )}
    </div>
  )
}

function folderFor(selected: string | null, entry: MemoryEntry | undefined): string {
  if (!selected) return '/memories'
  if (entry?.kind === 'dir') return selected
  return parentOf(selected) ?? '/memories'
}
