import type { Comparison } from '../../../../shared/types'
import { Banner } from '../../components/Banner'
import { DiffStat, DiffView } from '../../components/DiffView'
import { EmptyState, Loading } from '../../components/Feedback'
import { displayPath } from '../../lib/format'

const STATUS: Readonly<Record<string, string>> = {
  added: 'Added since',
  modified: 'Changed since',
  deleted: 'Deleted since',
  renamed: 'Renamed since',
}

/**
 * The change to show: the selected file's when it changed, else the first. A file moved since
 * is found by either name (the tree of memory at the reply has its old one).
 */
export function shownChange<T extends { readonly path: string; readonly oldPath: string | null }>(
  changes: ReadonlyArray<T>,
  selected: string | null,
): T | undefined {
  if (selected === null) return changes[0]
  return (
    changes.find((change) => change.path === selected || change.oldPath === selected) ?? changes[0]
  )
}

/**
 * Memory at a reply compared with memory now: the files that differ, and the diff of the
 * one selected (the open file when it changed, else the first).
 */
export function ComparePanel(props: {
  readonly comparison: Comparison | undefined
  readonly loading: boolean
  readonly error: string | null
  readonly onRetry: () => void
  readonly selected: string | null
  readonly onSelect: (path: string) => void
}) {
  const { comparison } = props
  const changes = comparison?.changes ?? []
  const shown = shownChange(changes, props.selected)
  return (
    <section className="mem-compare" aria-label="Compared with now">
      {props.error && (
        <Banner tone="error" compact onRetry={props.onRetry}>
          {props.error}
        </Banner>
      )}
      <Loading active={props.loading && !comparison} label="Comparing with now…" />
      {comparison && changes.length === 0 && (
        <EmptyState title="Nothing changed since">
          <p>Memory is exactly as it was when this reply began.</p>
        </EmptyState>
      )}
      {comparison && changes.length > 0 && (
        <>
          <div className="mem-compare-head">
            <h3>
              {comparison.totalChanges} {comparison.totalChanges === 1 ? 'file' : 'files'} changed
              since this reply
              {comparison.truncated && ` (the first ${changes.length} shown)`}
            </h3>
            <ul className="mem-compare-files">
              {changes.map((change) => (
                <li key={change.path}>
                  <button
                    type="button"
                    className="mem-compare-file"
                    aria-pressed={change.path === shown?.path}
                    onClick={() => props.onSelect(change.oldPath ?? change.path)}
                  >
                    <span className={`hist-status hist-status-${change.status}`}>
                      {STATUS[change.status]}
                    </span>
                    <span>
                      {change.oldPath && change.oldPath !== change.path
                        ? `${displayPath(change.oldPath)} → ${displayPath(change.path)}`
                        : displayPath(change.path)}
                    </span>
                    {!change.omitted && <DiffStat change={change} />}
                  </button>
                </li>
              ))}
            </ul>
          </div>
          {shown && (
            <article className="hist-file" aria-label={`Diff of ${displayPath(shown.path)}`}>
              {shown.omitted ? (
                <p className="hint view-note">
                  This file is too large to compare here; open it in History instead.
                </p>
              ) : (
                <DiffView change={shown} mode="unified" />
              )}
            </article>
          )}
        </>
      )}
    </section>
  )
}
