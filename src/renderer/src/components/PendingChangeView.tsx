import { useEffect, useId, useMemo, useState, type KeyboardEvent } from 'react'
import type { PendingChange } from '../../../shared/types'
import { api, ApiError, errorMessage, unwrap } from '../lib/api'
import { changeDiff } from '../lib/change-diff'
import { flagTitle, flagWhere } from '../lib/flags'
import { formatSize } from '../features/memory/tree-model'
import { displayPath, visibleName } from '../lib/format'
import { keepLineEnds } from '../lib/line-ends'
import { leftOutForLength, usePendingChanges } from '../lib/pending-changes'
import { Revealed } from './Revealed'
import { takesFocus } from './focus-after-removal'
import { showsProblemNote, type ReviewRefusal } from './review-problem'
import { icons } from './icons'
import './review.css'

/**
 * The decision being made. `edit` keeps the revision the person's text was written against:
 * when the file changes meanwhile (the preview is planned again), their text is not sent as
 * it is but shown first as the diff it would now make.
 */
/** Rows of a diff drawn at first, and drawn more each time the person asks. */
const DIFF_CHUNK = 600

type Step =
  | { readonly kind: 'view' }
  | { readonly kind: 'edit'; readonly basis: number }
  | { readonly kind: 'decline' }

/**
 * One change waiting for the person: why it was flagged, the exact diff it would make, and
 * the decision: Approve, Edit (then approve the edited text) or Decline (with an optional
 * reason Claude is told). Shown on the chat's tool card and in the memory pane's list.
 */
export function PendingChangeView({ change }: { readonly change: PendingChange }) {
  const { decide, draftOf, keepDraft } = usePendingChanges()
  // Begun where the person left it, here or in the other place the change shows.
  const kept = draftOf(change.id)
  const [step, setStep] = useState<Step>(() =>
    kept?.step === 'edit'
      ? { kind: 'edit', basis: kept.basis }
      : kept?.step === 'decline'
        ? { kind: 'decline' }
        : { kind: 'view' },
  )
  const [draft, setDraft] = useState(kept?.text ?? change.after ?? '')
  const [reason, setReason] = useState(kept?.reason ?? '')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<ReviewRefusal | null>(null)
  const id = useId()
  const name = displayPath(change.path)
  const sectionId = `${id}-review`
  const section = () => document.getElementById(sectionId)
  /** Leaves the edit or decline step; the button that began it has the focus again. */
  const leaveStep = () => {
    const began = step.kind
    if (began !== 'view' && section()?.contains(document.activeElement)) {
      // Once the view step is drawn (the step's field is gone, and the focus with it).
      requestAnimationFrame(() =>
        section()?.querySelector<HTMLElement>(`[data-step="${began}"]`)?.focus(),
      )
    }
    setStep({ kind: 'view' })
  }

  useEffect(() => {
    keepDraft(
      change.id,
      step.kind === 'view' && reason === ''
        ? undefined
        : {
            step: step.kind,
            basis: step.kind === 'edit' ? step.basis : change.revision,
            text: draft,
            reason,
          },
    )
  }, [keepDraft, change.id, change.revision, step, draft, reason])

  // A decision refused: the control the focus was on before the buttons were disabled. Kept
  // until the next decision, as the change planned again (its Approve now disabled) may come
  // before or after the refusal itself.
  const [refocus, setRefocus] = useState<HTMLElement | null>(null)
  useEffect(() => {
    if (refocus) focusBack(refocus, document.getElementById(sectionId))
  }, [refocus, sectionId, change.revision])

  const run = async (decision: Parameters<typeof decide>[1]) => {
    if (busy) return
    // Taken before the buttons are disabled, which sends the focus to the page.
    const shown = section()
    const active = document.activeElement
    const had = active instanceof HTMLElement && shown?.contains(active) ? active : null
    const next = had && shown ? focusAfter(shown) : null
    setBusy(true)
    setError(null)
    setRefocus(null)
    try {
      await decide(change.id, decision)
    } catch (failure) {
      setError({
        code: failure instanceof ApiError ? failure.code : null,
        message: errorMessage(failure),
      })
      setBusy(false)
      // The change stays: the focus goes back to it once its buttons can be used again.
      setRefocus(had)
      return
    }
    // On success the change leaves the list and this view with it: a keyboard user goes on
    // where they were, not at the top of the page.
    if (shown && next) next(shown)
  }

  /**
   * Keys of the edit and decline steps: Escape cancels the step (and only it, not Claude's
   * turn) while nothing was typed in it: typed text is let go only by the step's own Cancel
   * button, as the memory editor does (review hunt13 D6). `isConfirm` says which key confirms
   * it; the Enter that ends an IME composition confirms nothing (review hunt13 D5).
   */
  const stepKeys =
    (isConfirm: (event: KeyboardEvent) => boolean, confirm: () => void, untouched: () => boolean) =>
    (event: KeyboardEvent) => {
      if (event.nativeEvent.isComposing || event.keyCode === 229) return
      if (event.key === 'Escape') {
        event.preventDefault()
        event.stopPropagation()
        if (untouched()) leaveStep()
      } else if (isConfirm(event)) {
        event.preventDefault()
        confirm()
      }
    }
  const edited = keepLineEnds(draft, change.after)
  // The file changed while the person edited: their text was written against the old one.
  const outdated = step.kind === 'edit' && step.basis !== change.revision
  // The new revision's text was left out of the list and has not arrived yet: the person's
  // text cannot be compared with it nor given its line ends (review14-review R5).
  const awaitingText = outdated && change.omitted !== null
  const approveEdited = () =>
    void run({ decision: 'approve', editedText: edited, revision: change.revision })
  const editAgain = () => setStep({ kind: 'edit', basis: change.revision })
  const declineNow = () => void run({ decision: 'decline', reason: reason.trim() || undefined })
  const onEditorKey = stepKeys(
    (e) => e.key === 'Enter' && (e.ctrlKey || e.metaKey),
    () =>
      step.kind === 'edit' &&
      void run({ decision: 'approve', editedText: edited, revision: step.basis }),
    () => draft === (change.after ?? ''),
  )
  const onReasonKey = stepKeys(
    (e) => e.key === 'Enter',
    declineNow,
    () => reason === '',
  )
  const cancelStep = () => {
    leaveStep()
    setReason('')
  }

  return (
    <section
      id={sectionId}
      className="review"
      aria-label={`Review the change to ${name}`}
      aria-busy={busy}
    >
      {change.flags.length > 0 && (
        <ul className="review-flags" aria-label="Why this change was flagged">
          {change.flags.map((flag, i) => (
            <li key={i} className="review-flag">
              <icons.alert className="review-flag-icon" />
              <span>
                <strong>{flagTitle(flag.rule)}</strong>
                <span className="review-flag-where"> · {flagWhere(flag)}</span>
                <span className="review-flag-message">{flag.message}</span>
              </span>
            </li>
          ))}
        </ul>
      )}

      {change.unchecked.map((note, i) => (
        <p key={i} className="review-problem" role="note">
          <icons.alert /> {note}
        </p>
      ))}

      {outdated ? (
        <>
          <p className="review-problem" role="note">
            <icons.alert /> {name} changed while you were editing. Below is what your text would now
            do to the file as it is: look at it before approving.
          </p>
          <ChangePreview change={{ ...change, after: edited }} />
        </>
      ) : step.kind === 'edit' ? (
        <textarea
          className="review-editor"
          aria-label={`Edit the text of ${name} before approving`}
          value={draft}
          spellCheck={false}
          autoFocus
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={onEditorKey}
        />
      ) : (
        <ChangePreview change={change} />
      )}

      {/* A refused Approve says the problem and that the change can only be declined: the
          note under it would say both again. */}
      {showsProblemNote(change.problem, error) && (
        <p className="review-problem" role="note">
          <icons.alert /> {change.problem} It can only be declined now.
        </p>
      )}
      {error && (
        <p className="review-error" role="alert">
          {error.message}
        </p>
      )}

      {step.kind === 'decline' && (
        <div className="review-reason">
          <label htmlFor={`${id}-reason`} className="review-reason-label">
            Tell Claude why (optional)
          </label>
          <input
            id={`${id}-reason`}
            className="input input-small"
            aria-label="Reason for declining (optional)"
            placeholder="For example: that is not true any more"
            value={reason}
            maxLength={2000}
            autoFocus
            onChange={(event) => setReason(event.target.value)}
            onKeyDown={onReasonKey}
          />
        </div>
      )}

      <div className="review-actions" role="group" aria-label="Decision">
        {step.kind === 'view' && (
          <>
            <button
              type="button"
              className="button button-small button-primary"
              disabled={busy || change.problem !== null}
              onClick={() => void run({ decision: 'approve', revision: change.revision })}
            >
              <icons.check /> Approve
            </button>
            {change.problem !== null && (
              <button
                type="button"
                className="button button-small"
                disabled={busy}
                onClick={() => void run({ decision: 'approve', revision: change.revision })}
              >
                Check again
              </button>
            )}
            {change.editable && !change.omitted && (
              <button
                type="button"
                className="button button-small"
                data-step="edit"
                disabled={busy || change.problem !== null}
                onClick={() => {
                  setDraft(change.after ?? '')
                  setStep({ kind: 'edit', basis: change.revision })
                }}
              >
                <icons.pencil /> Edit
              </button>
            )}
            <button
              type="button"
              className="button button-small"
              data-step="decline"
              disabled={busy}
              onClick={() => setStep({ kind: 'decline' })}
            >
              <icons.close /> Decline
            </button>
          </>
        )}
        {step.kind === 'edit' && (
          <>
            <button
              type="button"
              className="button button-small button-primary"
              disabled={busy || awaitingText}
              title={awaitingText ? 'The file’s new text is still loading' : undefined}
              onClick={
                outdated
                  ? approveEdited
                  : () =>
                      void run({ decision: 'approve', editedText: edited, revision: step.basis })
              }
            >
              <icons.check /> Approve edited text
            </button>
            {outdated && (
              <button
                type="button"
                className="button button-small"
                disabled={busy}
                onClick={editAgain}
              >
                <icons.pencil /> Edit my text again
              </button>
            )}
            <button
              type="button"
              className="button button-small"
              disabled={busy}
              onClick={cancelStep}
            >
              Cancel edit
            </button>
            <span className="hint review-hint">
              Ctrl+Enter approves ·{' '}
              {draft === (change.after ?? '') ? 'Esc cancels' : 'Cancel edit lets your text go'}
            </span>
          </>
        )}
        {step.kind === 'decline' && (
          <>
            <button
              type="button"
              className="button button-small button-danger"
              disabled={busy}
              onClick={declineNow}
            >
              Decline change
            </button>
            <button
              type="button"
              className="button button-small"
              disabled={busy}
              onClick={cancelStep}
            >
              Cancel
            </button>
          </>
        )}
      </div>
    </section>
  )
}

/**
 * Where the focus goes once the change in `section` is decided, worked out while the page
 * still shows it: the next change waiting beside it (in the transcript, its decision's first
 * button; in the memory pane's list, its row), else the one before, else the tool card it was
 * shown on, else the pane. The returned step moves the focus only if it was lost meanwhile
 * (the person may have gone on).
 */
function focusAfter(section: HTMLElement): (section: HTMLElement) => void {
  const scope = section.parentElement?.closest<HTMLElement>('[role="log"], [role="tabpanel"]')
  const others = [
    ...(scope ?? document).querySelectorAll<HTMLElement>('section.review, [data-review-row]'),
  ].filter((other) => other !== section && other.parentElement !== section.parentElement)
  const following = (other: HTMLElement) =>
    (section.compareDocumentPosition(other) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0
  const targets = [
    ...others.filter(following),
    ...others.filter((other) => !following(other)).reverse(),
  ]
  const places = [section.parentElement?.closest<HTMLElement>('.tool-card'), scope].filter(
    (place): place is HTMLElement => place != null,
  )
  return (decided) => {
    const active = document.activeElement
    if (active && active !== document.body && active.isConnected && !decided.contains(active)) {
      return
    }
    for (const other of targets) {
      if (!other.isConnected) continue
      const target = other.matches('section.review')
        ? other.querySelector<HTMLElement>('.review-actions button:not(:disabled)')
        : other
      if (target) return target.focus()
    }
    const place = places.find((candidate) => candidate.isConnected)
    if (!place) return
    if (!place.hasAttribute('tabindex')) place.setAttribute('tabindex', '-1')
    place.focus()
  }
}

/**
 * Gives the focus back to `was` after a refused decision (disabling the buttons while it ran
 * sent the focus to the page), or, when it cannot take it now (Approve, once the change can
 * only be declined), to the first decision button that can. Not if the person went on.
 */
function focusBack(was: HTMLElement, section: HTMLElement | null): void {
  // A focused button just disabled keeps the focus until the page is next drawn.
  const usable = (element: Element | null) =>
    element instanceof HTMLElement && takesFocus(element, document.body)
  const active = document.activeElement
  if (active !== document.body && usable(active)) return
  const target = usable(was)
    ? was
    : section?.querySelector<HTMLElement>('.review-actions button:not(:disabled)')
  target?.focus()
}

/**
 * What the change would do, for a change whose text was too long to come with it (`omitted`):
 * its size, and the whole diff once the person asks for it.
 */
function LongChangePreview({
  change,
  omitted,
}: {
  readonly change: PendingChange
  readonly omitted: NonNullable<PendingChange['omitted']>
}) {
  const [text, setText] = useState<{
    readonly revision: number
    readonly before: string | null
    readonly after: string | null
  } | null>(null)
  const [loading, setLoading] = useState(false)
  const [failure, setFailure] = useState<string | null>(null)
  const chars = (n: number) => n.toLocaleString('en-US')
  if (text && text.revision === change.revision) {
    return (
      <ChangePreview
        change={{ ...change, before: text.before, after: text.after, omitted: null }}
      />
    )
  }
  const show = async () => {
    setLoading(true)
    setFailure(null)
    try {
      const whole = await unwrap(api().review.text({ id: change.id }))
      // The revision main read the text at: a newer one than the card's shows as such.
      setText(whole)
    } catch (error) {
      setFailure(errorMessage(error))
    } finally {
      setLoading(false)
    }
  }
  // Left out only to keep the list short: its text is on its way (see PendingChangesProvider).
  if (leftOutForLength(change) && !failure) {
    return (
      <div className="review-diff-frame">
        <p className="review-note" role="status">
          Loading the change to {displayPath(change.path)}…{' '}
          <button
            type="button"
            className="button button-small"
            disabled={loading}
            onClick={() => void show()}
          >
            Show it now
          </button>
        </p>
      </div>
    )
  }
  return (
    <div className="review-diff-frame">
      <p className="review-note">
        This change is too long to show at once: {displayPath(change.path)} holds{' '}
        {chars(omitted.beforeChars)} characters now and would hold {chars(omitted.afterChars)}.{' '}
        <button
          type="button"
          className="button button-small"
          disabled={loading}
          onClick={() => void show()}
        >
          Show the whole change
        </button>
      </p>
      {failure && (
        <p className="review-error" role="alert">
          {failure}
        </p>
      )}
    </div>
  )
}

/** What the change would do: the diff of the file, or what a folder change touches. */
function ChangePreview({ change }: { readonly change: PendingChange }) {
  if (change.omitted) return <LongChangePreview change={change} omitted={change.omitted} />
  return <TextChangePreview change={change} />
}

/** `ChangePreview` for a change that carries its text. */
function TextChangePreview({ change }: { readonly change: PendingChange }) {
  // A long diff is drawn in chunks: what is approved must all be there to read, but a rewrite
  // of a long file would be thousands of rows at once.
  const [rowLimit, setRowLimit] = useState(DIFF_CHUNK)
  const diff = useMemo(
    () => (change.kind === 'file' ? changeDiff(change.before, change.after, 3, rowLimit) : null),
    [change.kind, change.before, change.after, rowLimit],
  )
  const name = displayPath(change.path)
  if (change.kind === 'dir') {
    const verb = change.command === 'rename' ? 'Moves' : 'Deletes'
    const to = change.newPath ? ` to ${displayPath(change.newPath)}` : ''
    return (
      <div className="review-folder" role="region" aria-label={`What changes in ${name}`}>
        <p>
          {verb} the folder <strong>{name}</strong>
          {to} with {change.fileCount} {change.fileCount === 1 ? 'file' : 'files'}:
        </p>
        <ul>
          {change.files.map((file) => (
            <li key={file}>
              <code>{displayPath(file)}</code>
            </li>
          ))}
          {change.fileCount > change.files.length && (
            <li className="hint">and {change.fileCount - change.files.length} more</li>
          )}
        </ul>
      </div>
    )
  }
  const note =
    change.command === 'rename'
      ? `Renames ${name} to ${displayPath(change.newPath ?? '')}; its text stays the same.`
      : change.command === 'delete'
        ? (change.unreadBytes ?? null) !== null
          ? `Deletes ${name} (${formatSize(change.unreadBytes ?? 0)}, too large to show).`
          : `Deletes ${name}.`
        : change.notTextBytes !== null
          ? `Replaces ${name}, which is not text (${formatSize(change.notTextBytes)}): all of it is gone.`
          : change.before === null
            ? `Creates ${name}.`
            : null
  return (
    <div className="review-diff-frame">
      {note && <p className="review-note">{note}</p>}
      {diff && diff.rows.length > 0 && (
        <div
          className="review-diff"
          role="table"
          aria-label={`Changes to ${visibleName(change.path)}`}
        >
          {diff.rows.map((row, i) =>
            row.kind === 'gap' ? (
              <div key={i} role="row" className="review-gap">
                <span role="cell">
                  ⋯ {row.count} unchanged {row.count === 1 ? 'line' : 'lines'}
                </span>
              </div>
            ) : (
              <div key={i} role="row" className={`review-line review-${row.kind}`}>
                <span className="review-no" aria-hidden="true">
                  {row.line}
                </span>
                <span className="review-sign" aria-hidden="true">
                  {row.kind === 'add' ? '+' : row.kind === 'del' ? '−' : ' '}
                </span>
                <span
                  role="cell"
                  className="review-text"
                  aria-label={`${row.kind === 'add' ? 'added' : row.kind === 'del' ? 'removed' : 'unchanged'}: ${row.text}`}
                >
                  {row.text === '' ? ' ' : <Revealed text={row.text} />}
                </span>
              </div>
            ),
          )}
          {diff.cut && (
            <p className="hint review-note review-more">
              The diff goes on.{' '}
              <button
                type="button"
                className="button button-small"
                onClick={() => setRowLimit((limit) => limit + DIFF_CHUNK)}
              >
                Show more of the diff
              </button>
            </p>
          )}
        </div>
      )}
      {diff && diff.rows.length === 0 && change.command !== 'rename' && (
        <p className="review-note">No change to the text.</p>
      )}
    </div>
  )
}
