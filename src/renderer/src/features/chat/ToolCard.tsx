import { icons } from '../../components/icons'
import { useNavigation } from '../../lib/navigation'
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
  const summary = summarizeTool(item.command, item.input)
  const state = item.result
    ? item.result.isError
      ? 'error'
      : 'done'
    : interrupted
      ? 'not-run'
      : 'running'
  const status = {
    running: 'Running…',
    done: 'Done',
    error: 'Failed',
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
      aria-label={`Memory ${item.command} ${summary.target}`}
    >
      <div className="tool-head">
        <icons.memory className="tool-icon" />
        <span className="tool-command" title={`memory ${item.command}`}>
          {commandLabels[item.command] ?? item.command}
        </span>
        <code className="tool-path" title={summary.target}>
          {/* The folders give way first, so a narrow card still shows the file's name. */}
          <span className="tool-path-dir">{folderOf(summary.target)}</span>
          <span className="tool-path-name">
            {summary.target.slice(folderOf(summary.target).length)}
          </span>
        </code>
        {summary.detail && <span className="tool-detail">{summary.detail}</span>}
        <span className="tool-status" data-state={state}>
          {state === 'running' && <span className="spinner spinner-small" aria-hidden="true" />}
          {state === 'done' && <icons.check />}
          {state === 'error' && <icons.alert />}
          {status}
        </span>
      </div>
      {item.result?.isError && <p className="tool-error">{item.result.content}</p>}
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
              aria-label={`View change to ${summary.target}`}
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
