import type { MemorySearchHit } from '../../../../shared/types'
import { displayPath } from '../../lib/format'
import { Banner } from '../../components/Banner'
import { EmptyState, Loading } from '../../components/Feedback'
import { Revealed } from '../../components/Revealed'

/** Full-text hits across memory files, grouped by file; each opens the file at that line. */
export function SearchResults(props: {
  readonly query: string
  readonly hits: ReadonlyArray<MemorySearchHit> | undefined
  readonly loading: boolean
  readonly error: string | null
  readonly onRetry: () => void
  readonly onOpen: (path: string, line: number) => void
}) {
  const { hits } = props
  const files = new Map<string, MemorySearchHit[]>()
  for (const hit of hits ?? []) files.set(hit.path, [...(files.get(hit.path) ?? []), hit])
  return (
    <section aria-label="Search results" className="mem-search-results">
      {props.error && (
        <Banner tone="error" compact onRetry={props.onRetry}>
          {props.error}
        </Banner>
      )}
      <Loading active={props.loading && hits === undefined} label="Searching…" />
      {hits && hits.length === 0 && (
        <EmptyState title={`Nothing matches “${props.query}”`}>
          <p>Try fewer or different words. Search looks inside every memory file.</p>
        </EmptyState>
      )}
      {hits && hits.length > 0 && (
        <p className="hint mem-search-count">
          {hits.length} {hits.length === 1 ? 'match' : 'matches'} in {files.size}{' '}
          {files.size === 1 ? 'file' : 'files'}
        </p>
      )}
      <ul className="mem-search-list">
        {[...files].map(([path, fileHits]) => (
          <li key={path}>
            <div className="mem-search-file">{displayPath(path)}</div>
            <ul>
              {fileHits.map((hit) => (
                <li key={hit.line}>
                  <button
                    type="button"
                    className="mem-search-hit"
                    onClick={() => props.onOpen(hit.path, hit.line)}
                  >
                    <span className="mem-search-line">{hit.line}</span>
                    <span className="mem-search-text">
                      <Highlighted text={hit.text} query={props.query} />
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
    </section>
  )
}

// Invisible characters marked as in the file view (a bidi override must not reorder the hit).
function Highlighted(props: { readonly text: string; readonly query: string }) {
  const at = props.text.toLowerCase().indexOf(props.query.toLowerCase())
  if (at < 0) return <Revealed text={props.text} />
  return (
    <>
      <Revealed text={props.text.slice(0, at)} />
      <mark>
        <Revealed text={props.text.slice(at, at + props.query.length)} />
      </mark>
      <Revealed text={props.text.slice(at + props.query.length)} />
    </>
  )
}
