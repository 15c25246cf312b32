import { icons } from '../../components/icons'
import { LazyPendingChange } from '../../components/LazyPendingChange'
import { visibleName } from '../../lib/format'
import { useNavigation } from '../../lib/navigation'
import { usePendingFor } from '../../lib/pending-changes'
import { declinedNote } from './declined'
import { previewResult, summarizeTool } from './tool-summary'
import type { ToolItem } from './transcript-model'

const commandLabels: Readonly<Record<string, string>> = {
  view: 'Viewed',
  create: 'Created',
  str_replace: 'Edited',
  insert: 'Inserted into',
  delete: 'Deleted',
  rename: 'Renamed',
}

// A change waiting for the person, or one they declined, did not happen: it says what it asks.
const proposalLabels: Readonly<Record<string, string>> = {
  create: 'Create',
  str_replace: 'Edit',
  insert: 'Insert into',
  delete: 'Delete',
  rename: 'Rename',
}

/**
 * A command's label, or the command itself. Own keys only: the command is the model's raw
 * input, and `__proto__` or `toString` must not pick up what every object inherits (an object
 * drawn as text throws, and blanks the window).
 */
function labelOf(labels: Readonly<Record<string, string>>, command: string): string {
  return Object.hasOwn(labels, command) ? (labels[command] as string) : command
}

/**
 * One memory command as a compact card: what ran on which path, and how it ended. A command
 * that changed memory links to its commit in the history pane.
 */
export function ToolCard({
  item,
  interrupted,
  revealed = false,
}: {
  readonly item: ToolItem
  readonly interrupted: boolean
  /** This card is the one someone asked to see (from a line's provenance): highlighted. */
  readonly revealed?: boolean
}) {
  const { showHistory } = useNavigation()
  // An error's text is no listing: only a successful answer tells what the range counted.
  const summary = summarizeTool(
    item.command,
    item.input,
    item.result && !item.result.isError ? item.result.content : null,
  )
  const pending = usePendingFor(item.toolUseId)
  const declined = item.result?.isError ? declinedNote(item.result.content) : null
  const state = item.result
    ? declined
      ? 'declined'
      : item.result.isError
        ? 'error'
        : 'done'
    : pending
      ? 'pending'
      : interrupted
        ? 'not-run'
        : 'running'
  const status = {
    running: 'Running…',
    pending: 'Waiting for you',
    done: 'Done',
    error: 'Failed',
    declined: 'Declined',
    'not-run': 'Not run',
  }[state]
  const preview = item.result && !item.result.isError ? previewResult(item.result.content, 1) : null
  return (
    <section
      id={toolCardId(item.toolUseId)}
      className="tool-card"
      data-state={state}
      data-revealed={revealed || undefined}
      aria-current={revealed || undefined}
      aria-label={`Memory ${item.command} ${visibleName(summary.target)}`}
    >
      <div className="tool-head">
        <icons.memory className="tool-icon" />
        <span className="tool-command" title={`memory ${item.command}`}>
          {labelOf(
            state === 'pending' || state === 'declined' ? proposalLabels : commandLabels,
            item.command,
          )}
        </span>
        <code className="tool-path" title={visibleName(summary.target)}>
          {/* The folders give way first, so a narrow card still shows the file's name. */}
          <span className="tool-path-dir">{visibleName(folderOf(summary.target))}</span>
          <span className="tool-path-name">
            {visibleName(summary.target.slice(folderOf(summary.target).length))}
          </span>
        </code>
        {summary.detail && <span className="tool-detail">{summary.detail}</span>}
        <span className="tool-status" data-state={state}>
          {state === 'running' && <span className="spinner spinner-small" aria-hidden="true" />}
          {state === 'done' && <icons.check />}
          {(state === 'error' || state === 'pending') && <icons.alert />}
          {state === 'declined' && <icons.close />}
          {status}
        </span>
      </div>
      {pending && !item.result && <LazyPendingChange change={pending} />}
      {declined && <p className="tool-declined">{declined}</p>}
      {item.result?.isError && !declined && <p className="tool-error">{item.result.content}</p>}
      {(preview || item.commitOid) && (
        <div className="tool-foot">
          {preview &&
            (item.command === 'view' || preview.more ? (
              <details className="tool-result">
                <summary>{item.command === 'view' ? 'Show what Claude saw' : preview.text}</summary>
                <pre>{item.result?.content}</pre>
              </details>
            ) : (
              <p className="tool-result-line">{preview.text}</p>
            ))}
          {item.commitOid && (
            <button
              type="button"
              className="button button-small"
              onClick={() => showHistory({ oid: item.commitOid ?? undefined })}
              aria-label={`View change to ${visibleName(summary.target)}`}
              title="Open this change in History"
            >
              View change
            </button>
          )}
        </div>
      )}
    </section>
  )
}

/** `/memories/a/b.md` -> `/memories/a/` (everything up to the last slash). */
function folderOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/') + 1)
}

/** The DOM id of the card of a tool call (the chat scrolls to it when a line's blame asks). */
export function toolCardId(toolUseId: string): string {
  return `tool-${toolUseId.replace(/[^A-Za-z0-9_-]/g, '_')}`
}
