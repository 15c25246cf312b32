import { useEffect, useRef, useState, type FormEvent } from 'react'
import { MAX_SEARCH_CHARS } from '../../../../shared/types'
import { Notice } from '../../components/Banner'
import { icons } from '../../components/icons'
import { Splitter } from '../../components/Splitter'
import { useNavigation } from '../../lib/navigation'
import { useNow } from '../../lib/use-now'
import { HistoryFilters } from './HistoryFilters'
import { DetailArea, RestoreConfirm, TimelineArea } from './HistoryParts'
import { SearchHits } from './SearchHits'
import { useHistory } from './use-history'
import { useHistorySearch } from './use-history-search'
import './history.css'

/**
 * The full history view (GitHub Desktop's history tab is the model): the timeline as a left
 * column, the selected change using the rest of the window, and a search for when a text
 * appeared or disappeared. Escape, "Back to chat" or Ctrl/⌘ Shift H return to the chat.
 */
export function FullHistoryView() {
  const navigation = useNavigation()
  const history = useHistory(navigation.fullHistoryTarget)
  const { search, start, cancel, clear } = useHistorySearch(history.selectOid)
  const [draft, setDraft] = useState('')
  const [matchCase, setMatchCase] = useState(false)
  const [split, setSplit] = useState(30)
  const now = useNow()
  const back = useRef<HTMLButtonElement>(null)
  const { selectOid } = history
  const { closeFullHistory, openConversation } = navigation

  useEffect(() => back.current?.focus(), [])

  // Escape goes back to the chat (before the chat's own Escape, which stops a reply).
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || event.defaultPrevented) return
      if (document.querySelector('dialog[open]')) return
      // Escape in a text field holding something clears the field (the search's, the file
      // filter's own handler); on a checkbox, whose value is always "on", it goes back too.
      const target = event.target
      if (
        target instanceof HTMLInputElement &&
        target.type !== 'checkbox' &&
        target.value &&
        target.closest('.fh-search, .hist-filters')
      ) {
        return
      }
      event.preventDefault()
      closeFullHistory()
    }
    window.addEventListener('keydown', onKey, true)
    return () => window.removeEventListener('keydown', onKey, true)
  }, [closeFullHistory])

  const submit = (event: FormEvent) => {
    event.preventDefault()
    const text = draft
    if (text.trim() === '') {
      clear()
      return
    }
    void start(text, matchCase)
  }

  const searching = search.text !== null

  return (
    // A banner that goes with the focus inside it (a result dismissed) hands it on in the view.
    <section className="full-history" aria-label="Full history" data-banner-group="">
      <header className="fh-bar">
        <button
          ref={back}
          type="button"
          className="button button-small"
          onClick={closeFullHistory}
          aria-keyshortcuts="Escape"
          title="Back to the chat (Esc)"
        >
          <icons.arrowLeft width={14} height={14} />
          Back to chat
        </button>
        <h1 className="fh-title">History</h1>
        <form className="fh-search" role="search" aria-label="Search history" onSubmit={submit}>
          <icons.search width={14} height={14} className="fh-search-icon" />
          <input
            type="search"
            className="input input-small"
            aria-label="Find text in history"
            placeholder="Find when a text appeared or disappeared…"
            value={draft}
            maxLength={MAX_SEARCH_CHARS}
            spellCheck={false}
            onChange={(event) => {
              setDraft(event.target.value)
              if (event.target.value === '') clear()
            }}
            onKeyDown={(event) => {
              if (event.key === 'Escape' && draft !== '') {
                event.preventDefault()
                setDraft('')
                clear()
              }
            }}
          />
          <label className="fh-match-case">
            <input
              type="checkbox"
              checked={matchCase}
              onChange={(event) => setMatchCase(event.target.checked)}
            />
            Match case
          </label>
          <button type="submit" className="button button-small">
            Find
          </button>
        </form>
      </header>

      <div className="fh-body">
        <div className="fh-list" style={{ flexBasis: `${split}%` }} data-banner-fallback="">
          {searching ? (
            <SearchHits
              search={search}
              now={now}
              selectedOid={history.selectedOid}
              onSelect={selectOid}
              onCancel={cancel}
              onClear={() => {
                setDraft('')
                clear()
              }}
            />
          ) : (
            <>
              <HistoryFilters
                filters={history.filters}
                onChange={history.setFilters}
                filePaths={history.filePaths}
                conversations={history.conversations}
                total={history.snapshot.total}
              />
              <TimelineArea history={history} now={now} onOpenConversation={openConversation} />
            </>
          )}
        </div>
        <Splitter
          vertical
          label="Resize the list of changes"
          value={split}
          min={18}
          max={60}
          onChange={setSplit}
        />
        <div className="fh-detail">
          <Notice notice={history.notice} onDismiss={history.dismissNotice} />
          <DetailArea
            history={history}
            now={now}
            onOpenConversation={openConversation}
            blameActions={history.blameActions}
          />
        </div>
      </div>

      <RestoreConfirm history={history} now={now} />
    </section>
  )
}
