import { useState } from 'react'
import type { FileChange } from '../../../shared/types'
import { diffModelOf, type DiffGap, type DiffLine, type Segment } from '../lib/diff-model'
import { Revealed } from './Revealed'
import { MoreRows } from './MoreRows'
import './diff.css'
import { visibleName } from '../lib/format'

export type DiffMode = 'unified' | 'split'

/**
 * Rows drawn at first (and added per "Show more"): a 1 MiB file is some 30,000 lines, and
 * drawing them all at once would hold the window for seconds.
 */
export const DIFF_ROWS_SHOWN = 2_000

/** Lines added and removed, for the file header (`+3 −1`). */
export function DiffStat(props: { readonly change: FileChange }) {
  const { change } = props
  // A version shown whole (its earlier one is damaged) has nothing counted against it.
  if (change.binary || change.damaged || change.beforeDamaged) return null
  const model = diffModelOf(change)
  if (model.added === 0 && model.removed === 0) return null
  return (
    <span className="hist-stat" aria-label={`${model.added} added, ${model.removed} removed`}>
      <span className="hist-stat-add">+{model.added}</span>
      <span className="hist-stat-del">−{model.removed}</span>
    </span>
  )
}

/**
 * One file's change as a unified or side-by-side diff with word-level highlights. Lines are
 * never wrapped unless `wrap` asks for it: side by side, each side then scrolls sideways on
 * its own, its rows staying level with the other side's.
 */
export function DiffView(props: {
  readonly change: FileChange
  readonly mode: DiffMode
  /** Side by side only: wrap long lines instead of scrolling. */
  readonly wrap?: boolean
}) {
  const { change, mode } = props
  const [limit, setLimit] = useState(DIFF_ROWS_SHOWN)
  if (change.damaged) {
    return (
      <p className="hint view-note hist-damaged" role="note">
        The history&apos;s copy of this version is damaged (missing or corrupt), so it cannot be
        shown. The rest of the history is not affected.
      </p>
    )
  }
  if (change.binary) {
    return <p className="hint view-note">Binary file — its contents cannot be compared.</p>
  }
  if (change.beforeDamaged) {
    return <WholeVersion text={change.after ?? ''} path={change.path} />
  }
  const model = diffModelOf(change)
  if (model.added === 0 && model.removed === 0) {
    return (
      <p className="hint view-note">
        {change.status === 'renamed'
          ? 'Renamed without changes to its content.'
          : 'No changes to the text.'}
      </p>
    )
  }
  const label = `Changes in ${visibleName(change.path)}`
  const all = mode === 'unified' ? model.unified.length : model.split.length
  const unified = model.unified.slice(0, limit)
  const split = model.split.slice(0, limit)
  const notes = model.unpaired && (
    <p className="hint view-note" role="note">
      Too many changes to pair line by line: the whole old version is shown removed and the whole
      new version added.
    </p>
  )
  const more = (
    <MoreRows
      shown={limit}
      all={all}
      step={DIFF_ROWS_SHOWN}
      of="this diff"
      onMore={() => setLimit((n) => n + DIFF_ROWS_SHOWN)}
    />
  )
  if (mode === 'unified') {
    return (
      <>
        {notes}
        <div className="hist-diff hist-diff-unified" role="table" aria-label={label}>
          {unified.map((row, i) =>
            row.kind === 'gap' ? <Gap key={i} gap={row} /> : <UnifiedLine key={i} line={row} />,
          )}
        </div>
        {more}
      </>
    )
  }
  if (props.wrap) {
    return (
      <>
        {notes}
        <div
          className="hist-diff hist-diff-split-rows hist-diff-wrap"
          role="table"
          aria-label={label}
        >
          {split.map((row, i) =>
            row.kind === 'gap' ? (
              <Gap key={i} gap={row} />
            ) : (
              <div role="row" key={i} className="hist-split-row">
                <SideCell line={row.left} side="old" />
                <SideCell line={row.right} side="new" />
              </div>
            ),
          )}
        </div>
        {more}
      </>
    )
  }
  return (
    <>
      {notes}
      <div className="hist-diff hist-diff-split" role="table" aria-label={label}>
        {(['old', 'new'] as const).map((side) => (
          <div
            key={side}
            role="rowgroup"
            aria-label={side === 'old' ? 'Before' : 'After'}
            className="hist-split-column"
            tabIndex={0}
          >
            <div className="hist-split-lines">
              {split.map((row, i) =>
                row.kind === 'gap' ? (
                  side === 'old' ? (
                    <Gap key={i} gap={row} />
                  ) : (
                    <div key={i} className="hist-gap" aria-hidden="true" />
                  )
                ) : (
                  <div role="row" key={i}>
                    <SideCell line={side === 'old' ? row.left : row.right} side={side} />
                  </div>
                ),
              )}
            </div>
          </div>
        ))}
      </div>
      {more}
    </>
  )
}

/**
 * A version whose earlier one is damaged: nothing to compare it with, so its own (intact)
 * text is shown whole, line by line, said so in one line above it.
 */
function WholeVersion(props: { readonly text: string; readonly path: string }) {
  const [limit, setLimit] = useState(DIFF_ROWS_SHOWN)
  const lines = props.text.split('\n')
  if (props.text.endsWith('\n')) lines.pop()
  return (
    <>
      <p className="hint view-note" role="note">
        Compared with an earlier version that is damaged, so shown whole.
      </p>
      <div
        className="hist-diff hist-diff-unified"
        role="table"
        aria-label={`Content of ${visibleName(props.path)}`}
      >
        {lines.slice(0, limit).map((line, i) => (
          <div role="row" key={i} className="hist-dl hist-dl-context">
            <span className="hist-no" aria-hidden="true">
              {i + 1}
            </span>
            <span role="cell" className="hist-text">
              {line === '' ? '\u200b' : line}
            </span>
          </div>
        ))}
      </div>
      <MoreRows
        shown={limit}
        all={lines.length}
        step={DIFF_ROWS_SHOWN}
        of="this version"
        onMore={() => setLimit((n) => n + DIFF_ROWS_SHOWN)}
      />
    </>
  )
}

const SIGN = { add: '+', del: '−', context: ' ' } as const
const SPOKEN = { add: 'added', del: 'removed', context: 'unchanged' } as const

function UnifiedLine(props: { readonly line: DiffLine }) {
  const { line } = props
  return (
    <div role="row" className={`hist-dl hist-dl-${line.kind}`}>
      <span className="hist-no" aria-hidden="true">
        {line.oldNo ?? ''}
      </span>
      <span className="hist-no" aria-hidden="true">
        {line.newNo ?? ''}
      </span>
      <span className="hist-sign" aria-hidden="true">
        {SIGN[line.kind]}
      </span>
      <span
        role="cell"
        className="hist-text"
        aria-label={`${SPOKEN[line.kind]}: ${text(line.segments)}`}
      >
        <Segments segments={line.segments} kind={line.kind} />
      </span>
    </div>
  )
}

function SideCell(props: { readonly line: DiffLine | null; readonly side: 'old' | 'new' }) {
  const { line, side } = props
  if (!line) return <span role="cell" className="hist-side hist-side-empty" />
  const number = side === 'old' ? line.oldNo : line.newNo
  return (
    <span role="cell" className={`hist-side hist-dl hist-dl-${line.kind}`}>
      <span className="hist-no" aria-hidden="true">
        {number ?? ''}
      </span>
      <span className="hist-text">
        <Segments segments={line.segments} kind={line.kind} />
      </span>
    </span>
  )
}

function Segments(props: {
  readonly segments: ReadonlyArray<Segment>
  readonly kind: DiffLine['kind']
}) {
  if (props.segments.length === 1 && props.segments[0]?.text === '') return <>{'\u200b'}</>
  return (
    <>
      {props.segments.map((segment, i) =>
        segment.changed && props.kind !== 'context' ? (
          <mark key={i} className={`hist-word hist-word-${props.kind}`}>
            <Revealed text={segment.text} />
          </mark>
        ) : (
          <span key={i}>
            <Revealed text={segment.text} />
          </span>
        ),
      )}
    </>
  )
}

function Gap(props: { readonly gap: DiffGap }) {
  const count = props.gap.count
  return (
    <div role="row" className="hist-gap">
      <span role="cell">
        ⋯ {count} unchanged {count === 1 ? 'line' : 'lines'}
      </span>
    </div>
  )
}

const text = (segments: ReadonlyArray<Segment>) => segments.map((s) => s.text).join('')
