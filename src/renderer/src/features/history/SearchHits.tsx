import { useRef, type KeyboardEvent } from 'react'
import { knownSummary } from '../../lib/commit-summaries'
import { sentence, whoLabel, whoOf } from '../../lib/commit-words'
import { displayPath, exactTime, shortDateTime } from '../../lib/format'
import { useThisMachine } from '../../lib/this-machine'
import type { HistorySearch } from './use-history-search'

/**
 * The state of a history search and what it found: progress with Stop while it runs, then
 * the commits that added or removed the text, newest first (arrow keys move the selection).
 */
export function SearchHits(props: {
  readonly search: HistorySearch
  readonly now: number
  readonly selectedOid: string | null
  readonly onSelect: (oid: string) => void
  readonly onCancel: () => void
  readonly onClear: () => void
}) {
  const { search, now } = props
  const thisMachine = useThisMachine()
  const list = useRef<HTMLUListElement>(null)
  const quoted = `“${search.text ?? ''}”`
  const count = search.hits.length
  const found = `${count.toLocaleString()} ${count === 1 ? 'change' : 'changes'}`
  const status =
    search.state === 'searching'
      ? `Searching… ${search.scanned.toLocaleString()} of ${search.total.toLocaleString()} changes looked at`
      : search.state === 'failed'
        ? `The search failed: ${search.error ?? ''}`
        : search.state === 'stopped'
          ? `Stopped after ${search.scanned.toLocaleString()} of ${search.total.toLocaleString()} changes: ${found} so far add or remove ${quoted}.`
          : search.capped
            ? `The first ${found} that add or remove ${quoted} (the search stops there).`
            : count === 0
              ? `No change ever added or removed ${quoted}.`
              : `${found} added or removed ${quoted}.`

  const passed = search.damaged
  const damageNote =
    passed > 0 && search.state !== 'failed'
      ? `${passed.toLocaleString()} ${passed === 1 ? 'change' : 'changes'} could not be searched: the history's copy of a version ${passed === 1 ? 'it' : 'they'} touched is damaged, so the text may have been added or removed there.`
      : null

  const onKeyDown = (event: KeyboardEvent) => {
    const index = search.hits.findIndex((hit) => hit.commit.oid === props.selectedOid)
    const next =
      event.key === 'ArrowDown'
        ? index + 1
        : event.key === 'ArrowUp'
          ? index - 1
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? search.hits.length - 1
              : null
    if (next === null) return
    event.preventDefault()
    const hit = search.hits[Math.max(0, Math.min(search.hits.length - 1, next))]
    if (!hit) return
    props.onSelect(hit.commit.oid)
    list.current
      ?.querySelector(`[data-oid="${hit.commit.oid}"]`)
      ?.scrollIntoView({ block: 'nearest' })
  }

  return (
    <div className="fh-search-results">
      <div className="fh-search-status">
        <p role="status" aria-label="Search progress">
          {status}
        </p>
        {search.state === 'searching' && (
          <>
            <progress
              className="fh-search-progress"
              aria-label="Searched"
              max={Math.max(search.total, 1)}
              value={search.scanned}
            />
            <button type="button" className="button button-small" onClick={props.onCancel}>
              Stop
            </button>
          </>
        )}
        {search.state !== 'searching' && (
          <button type="button" className="button button-small" onClick={props.onClear}>
            Back to all changes
          </button>
        )}
      </div>
      {damageNote && (
        <p className="hint fh-search-damaged" role="note">
          {damageNote}
        </p>
      )}
      {count > 0 && (
        <ul
          ref={list}
          role="listbox"
          aria-label="Changes that add or remove the text"
          tabIndex={0}
          className="fh-hits"
          onKeyDown={onKeyDown}
        >
          {search.hits.map((hit) => {
            const { commit } = hit
            const who = whoOf(commit)
            return (
              <li
                key={commit.oid}
                data-oid={commit.oid}
                role="option"
                aria-selected={commit.oid === props.selectedOid}
                className="fh-hit"
                onClick={() => props.onSelect(commit.oid)}
              >
                <span
                  className={`hist-who hist-who-${who}`}
                  title={whoLabel(commit)}
                  aria-hidden="true"
                />
                <span className="fh-hit-main">
                  <span className="hist-sentence">
                    {sentence(commit, knownSummary(commit.restoredFrom), now, {
                      thisMachine,
                      joined: knownSummary(commit.otherParents?.[0]),
                    })}
                  </span>
                  <span className="hist-sub">
                    <time title={exactTime(commit.time)}>{shortDateTime(commit.time, now)}</time>
                    {hit.files.map((file) => (
                      <span key={file.path} className={`fh-hit-change fh-hit-${file.change}`}>
                        {file.change === 'added' ? 'added in' : 'removed from'}{' '}
                        {displayPath(file.path)}
                      </span>
                    ))}
                  </span>
                </span>
              </li>
            )
          })}
        </ul>
      )}
    </div>
  )
}
