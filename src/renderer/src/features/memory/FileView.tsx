import { useEffect, useState, type KeyboardEvent } from 'react'
import type { FileUse, MemoryEntry, MemoryFile } from '../../../../shared/types'
import { relativeTime, visibleName } from '../../lib/format'
import { Banner } from '../../components/Banner'
import type { BlameActions } from '../../components/BlameView'
import { EmptyState, Loading } from '../../components/Feedback'
import { LazyPart, retryableLazy } from '../../components/LazyPart'
import { icons } from '../../components/icons'
import { useNow } from '../../lib/use-now'
import { MarkdownView } from './MarkdownView'
import { baseName, formatSize, isMarkdown } from './tree-model'
import { keepLineEnds } from '../../lib/line-ends'
import { holdsHidden } from '../../lib/reveal-hidden'

// Blame is asked for, not shown at start: its code loads the first time a file's blame opens.
const LoadedBlame = retryableLazy(() =>
  import('../../components/BlameView').then((module) => ({ default: module.LoadedBlame })),
)

// The line view (windowing, copy and find over the whole file) loads the first time a text file
// opens, not with the first screen.
const FileLines = retryableLazy(() =>
  import('./FileLines').then((module) => ({ default: module.FileLines })),
)

export interface FileActions {
  save(path: string, content: string): Promise<boolean>
  /** Saves the text as a new file beside `path` (the editor's text that cannot go back). */
  saveAs(path: string, content: string): Promise<boolean>
  rename(path: string): void
  remove(path: string, kind: 'file' | 'dir'): void
  /** Deletes a file as an expiry (restorable from History). */
  expire(path: string): void
  showHistory(path: string): void
}

/** The open memory file: header with actions, then its lines, its rendering, or the editor. */
export function FileView(props: {
  readonly path: string
  readonly entry: MemoryEntry | undefined
  readonly file: MemoryFile | undefined
  readonly loading: boolean
  readonly error: string | null
  readonly highlightLine: number | null
  readonly childCount: number
  /** The file is gone from the tree and could not be read (deleted or renamed meanwhile). */
  readonly missing: boolean
  readonly onRetry: () => void
  readonly actions: FileActions
  readonly editing: boolean
  readonly onEditingChange: (editing: boolean) => void
  /** The editor's text to save while it differs from the file (null: nothing unsaved). */
  readonly onUnsaved?: (content: string | null) => void
  /** Memory as it was at this commit: nothing can be changed (null: memory now). */
  readonly at?: string | null
  readonly readOnly?: boolean
  /** Each line with who last changed it, beside the text. */
  readonly blame: boolean
  readonly onBlameChange: (blame: boolean) => void
  readonly blameActions: BlameActions
  /** When Claude last read and changed the file (the read log). */
  readonly use?: FileUse
}) {
  const { path, file, entry, actions, editing, onEditingChange, readOnly = false } = props
  // Drawn with its invisible characters shown (`a\u200B.md` is not `a.md`).
  const name = visibleName(baseName(path))
  const [rendered, setRendered] = useState(false)
  const markdown = isMarkdown(path) && file?.kind === 'text'
  const isDir = entry?.kind === 'dir'
  // A name in another Unicode spelling (a decomposed café.md): no memory path names it, so a
  // save (a memory write) would be refused; it is renamed first, which the note offers.
  const otherSpelling = path !== path.normalize('NFC')
  const now = useNow()
  // The file's last text: the editor keeps it while the file is gone or stops being text.
  const [lastText, setLastText] = useState<string | null>(null)
  const text = file?.kind === 'text' ? file.text : null
  if (text !== null && text !== lastText) setLastText(text)
  // The file went away under the editor (renamed or deleted by Claude, sync, a restore or another
  // program), or became binary or too large: the editor stays with the person's text, and says
  // so. It was unmounted, and the draft dropped without a word (review hunt12-story D4).
  const gone: EditorGone | null =
    !editing || readOnly || isDir || lastText === null
      ? null
      : props.missing
        ? 'missing'
        : file && file.kind !== 'text'
          ? file.kind === 'too-large'
            ? 'too-large'
            : 'not-text'
          : null

  if (props.missing && readOnly) {
    return (
      <section className="mem-file" aria-label={`File ${name}`}>
        <EmptyState title={`${name} was not in memory then`}>
          <p>It did not exist when this reply began.</p>
        </EmptyState>
      </section>
    )
  }
  if (props.missing && gone === null) {
    return (
      <section className="mem-file" aria-label={`File ${name}`}>
        <EmptyState title={`${name} is no longer in memory`}>
          <p>It was deleted or renamed. Its history is kept: you can bring it back from there.</p>
          <button
            type="button"
            className="button button-small"
            onClick={() => actions.showHistory(path)}
          >
            Show history
          </button>
        </EmptyState>
      </section>
    )
  }

  return (
    <section className="mem-file" aria-label={isDir ? `Folder ${name}` : `File ${name}`}>
      <header className="mem-file-header">
        <div className="mem-file-title">
          <span className="mem-file-name" title={visibleName(path)}>
            {name}
          </span>
          <span className="mem-file-meta">
            {visibleName(path.slice(0, path.lastIndexOf('/'))) || '/'}
            {entry && ` · ${formatSize(entry.size)}`}
            {entry &&
              !isDir &&
              entry.modifiedAt > 0 &&
              ` · modified ${relativeTime(entry.modifiedAt, now)}`}
            {isDir && ` · ${props.childCount} ${props.childCount === 1 ? 'item' : 'items'}`}
          </span>
          {props.use && !isDir && <FileUseLine use={props.use} now={now} />}
        </div>
        {!editing && (
          <div className="mem-file-actions" role="toolbar" aria-label="File actions">
            {markdown && (
              <button
                type="button"
                className="button button-small"
                aria-pressed={rendered && !props.blame}
                onClick={() => {
                  setRendered((value) => !value)
                  props.onBlameChange(false)
                }}
              >
                Preview
              </button>
            )}
            {file?.kind === 'text' && (
              <button
                type="button"
                className="button button-small"
                aria-pressed={props.blame}
                title="Show who last changed each line, and when"
                onClick={() => props.onBlameChange(!props.blame)}
              >
                Blame
              </button>
            )}
            {file?.kind === 'text' && !readOnly && !otherSpelling && (
              <button
                type="button"
                className="button button-small"
                onClick={() => onEditingChange(true)}
              >
                Edit
              </button>
            )}
            <button
              type="button"
              className="button button-small"
              onClick={() => actions.showHistory(path)}
            >
              Show history
            </button>
            {(entry || file) && !readOnly && (
              <>
                <button
                  type="button"
                  className="button button-small"
                  onClick={() => actions.rename(path)}
                >
                  Rename
                </button>
                {!isDir && (
                  <button
                    type="button"
                    className="button button-small"
                    title="Remove it from memory as an expiry; History keeps it"
                    onClick={() => actions.expire(path)}
                  >
                    Expire
                  </button>
                )}
                <button
                  type="button"
                  className="button button-small mem-danger-text"
                  onClick={() => actions.remove(path, isDir ? 'dir' : 'file')}
                >
                  Delete
                </button>
              </>
            )}
          </div>
        )}
      </header>

      {props.error && !isDir && gone === null && (
        <Banner tone="error" compact onRetry={props.onRetry}>
          {props.error}
        </Banner>
      )}
      <Loading active={props.loading && !file && !isDir} label="Opening file…" />

      {otherSpelling && (
        <div className="hint mem-file-note" role="note">
          <p>
            Claude cannot see or change this {isDir ? 'folder' : 'file'}: its name is written with
            other Unicode characters than memory paths use (such as an accent stored apart from its
            letter, as macOS writes names), so no memory path can name it. Rename it, keeping its
            name, to make it part of Claude&apos;s memory: Cairn writes the name the way memory
            paths do.
            {!isDir && file?.kind === 'text' && ' It cannot be edited here until then.'}
          </p>
          {!isDir && file?.kind === 'text' && !readOnly && !editing && (
            <button
              type="button"
              className="button button-small"
              onClick={() => actions.rename(path)}
            >
              Rename to edit
            </button>
          )}
        </div>
      )}
      {isDir && (
        <p className="hint mem-file-note">
          A folder. Select a file inside it to read it, or use Show history to see every change
          under this folder.
        </p>
      )}
      {!isDir && editing && !otherSpelling && (file?.kind === 'text' || gone !== null) && (
        <Editor
          key={path}
          name={name}
          current={text ?? lastText ?? ''}
          gone={gone}
          onSave={async (content) => {
            if (await actions.save(path, content)) onEditingChange(false)
          }}
          onSaveAs={async (content) => {
            if (await actions.saveAs(path, content)) onEditingChange(false)
          }}
          onCancel={() => onEditingChange(false)}
          onUnsaved={props.onUnsaved}
        />
      )}
      {!isDir && file && !editing && props.blame && file.kind === 'text' && (
        <FileBlame path={path} at={props.at ?? null} actions={props.blameActions} />
      )}
      {!isDir && file && !editing && !(props.blame && file.kind === 'text') && (
        <FileContent
          file={file}
          rendered={rendered && markdown}
          highlightLine={props.highlightLine}
        />
      )}
    </section>
  )
}

/** The file with each line's provenance (compact, for the side pane). */
function FileBlame(props: {
  readonly path: string
  readonly at: string | null
  readonly actions: BlameActions
}) {
  const now = useNow()
  return (
    <div className="mem-blame" role="region" aria-label={`Blame of ${baseName(props.path)}`}>
      <LazyPart fallback={<Loading active label="Tracing lines…" />}>
        <LoadedBlame path={props.path} at={props.at} now={now} actions={props.actions} compact />
      </LazyPart>
    </div>
  )
}

/** When Claude last read and changed the file, and a warning when one view cannot show it. */
function FileUseLine({ use, now }: { readonly use: FileUse; readonly now: number }) {
  const read =
    use.lastReadAt === null
      ? 'not read by Claude yet'
      : `read by Claude ${relativeTime(use.lastReadAt, now)}`
  const changed =
    use.lastChangedAt === null ? null : `changed by Claude ${relativeTime(use.lastChangedAt, now)}`
  return (
    <span className="mem-file-meta mem-file-use" aria-label="Use by Claude">
      {read}
      {changed && ` · ${changed}`}
      {use.overViewLimit && (
        <span className="mem-file-long">
          {' · '}
          <icons.alert width={12} height={12} /> longer than one view
        </span>
      )}
    </span>
  )
}

function FileContent(props: {
  readonly file: MemoryFile
  readonly rendered: boolean
  readonly highlightLine: number | null
}) {
  const { file } = props
  const name = visibleName(baseName(file.path))

  if (file.kind === 'image' && file.data && file.mediaType) {
    return (
      <div className="mem-image" role="region" aria-label={`Content of ${name}`}>
        <img src={`data:${file.mediaType};base64,${file.data}`} alt={name} />
      </div>
    )
  }
  if (file.kind === 'too-large') {
    return (
      <p className="hint mem-file-note">
        This file is too large to show here ({formatSize(file.size)}). It stays in your memory
        folder; open it with another editor.
      </p>
    )
  }
  // The main process shows as an image only what is one (its signature checked).
  const namedAsImage = isImageName(file.path)
  if (file.kind !== 'text' || file.text === null) {
    return (
      <p className="hint mem-file-note">
        {namedAsImage
          ? `This file is named like an image but is not a PNG or JPEG image, nor text (${formatSize(file.size)}); it cannot be shown here.`
          : `This file is not text (${formatSize(file.size)}); it cannot be shown here.`}
      </p>
    )
  }
  if (props.rendered) {
    return (
      <div className="mem-rendered" role="region" aria-label={`Content of ${name}`}>
        <MarkdownView text={file.text} />
      </div>
    )
  }
  return (
    <LazyPart fallback={<Loading active label="Opening file…" />}>
      <FileLines
        // Another file starts at its top, with Find closed.
        key={file.path}
        text={file.text}
        name={name}
        highlightLine={props.highlightLine}
        note={
          namedAsImage && (
            <p className="hint mem-file-note">
              This file is named like an image, but it holds text: shown as text.
            </p>
          )
        }
      />
    </LazyPart>
  )
}

function isImageName(path: string): boolean {
  return /\.(png|jpe?g)$/i.test(path)
}

/** What became of the file under the editor: gone from its place, or no longer text. */
type EditorGone = 'missing' | 'not-text' | 'too-large'

function Editor(props: {
  readonly name: string
  /** The file's content now; it may change (Claude, a restore) while the user edits. */
  readonly current: string
  /** The file is gone or no longer text: the draft stays, and the person chooses. */
  readonly gone: EditorGone | null
  readonly onSave: (content: string) => Promise<void>
  readonly onSaveAs: (content: string) => Promise<void>
  readonly onCancel: () => void
  /** Told of every draft that differs from the file, so switching away can ask first. */
  readonly onUnsaved?: (content: string | null) => void
}) {
  const [initial] = useState(props.current)
  const [draft, setDraft] = useState(props.current)
  // A textarea must keep the real characters, so it cannot mark them as the view does.
  const [hidden] = useState(() => holdsHidden(props.current))
  const [saving, setSaving] = useState(false)
  const { onUnsaved } = props
  useEffect(() => {
    onUnsaved?.(draft === initial ? null : keepLineEnds(draft, initial))
  }, [draft, initial, onUnsaved])
  useEffect(() => () => onUnsaved?.(null), [onUnsaved])
  const save = async (as: 'back' | 'copy' = 'back') => {
    if (saving) return
    setSaving(true)
    try {
      // The textarea gave every line end back as LF: a CRLF file stays CRLF (see line-ends).
      const content = keepLineEnds(draft, initial)
      await (as === 'copy' ? props.onSaveAs(content) : props.onSave(content))
    } finally {
      setSaving(false)
    }
  }
  const goneWords = {
    missing: `${props.name} was renamed or deleted while you were editing (by Claude, sync, a restore or another program). Your text is still here: Save writes it back as ${props.name}, Save as new file keeps it beside, or Discard drops it.`,
    'not-text': `${props.name} was replaced while you were editing, and is no longer text. Your text is still here: Save replaces the file with it (the replaced version stays in History), Save as new file keeps it beside, or Discard drops it.`,
    'too-large': `${props.name} grew too large to show while you were editing. Your text is still here: Save replaces the file with it, Save as new file keeps it beside, or Discard drops it.`,
  }
  const onKeyDown = (event: KeyboardEvent) => {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === 's') {
      event.preventDefault()
      void save()
    } else if (event.key === 'Escape' && draft === initial) {
      props.onCancel()
    }
  }
  return (
    <div className="mem-editor" onKeyDown={onKeyDown}>
      {props.gone !== null ? (
        <Banner tone="error" compact>
          {goneWords[props.gone]}
        </Banner>
      ) : (
        props.current !== initial && (
          <Banner tone="error" compact>
            {props.name} changed while you were editing (Claude or a restore wrote to it). Saving
            replaces that change; it stays in History.
          </Banner>
        )
      )}
      {hidden && (
        <p className="hint mem-file-note">
          This text holds invisible characters (the view marks them, such as U+202E). The editor
          keeps them as they are, unmarked: what follows a direction override may show reordered
          here.
        </p>
      )}
      <textarea
        className="mem-editor-text"
        aria-label={`Edit ${props.name}`}
        value={draft}
        onChange={(event) => setDraft(event.target.value)}
        spellCheck={false}
        autoFocus
      />
      <div className="mem-editor-bar">
        <span className="hint">
          {draft === initial ? 'No changes' : 'Unsaved changes'} · Ctrl+S to save
        </span>
        <button
          type="button"
          className="button button-small"
          onClick={props.onCancel}
          disabled={saving}
        >
          {props.gone !== null ? 'Discard' : 'Cancel'}
        </button>
        {props.gone !== null && (
          <button
            type="button"
            className="button button-small"
            onClick={() => void save('copy')}
            disabled={saving}
          >
            Save as new file
          </button>
        )}
        <button
          type="button"
          className="button button-small button-primary"
          onClick={() => void save()}
          disabled={saving || (draft === initial && props.gone === null)}
        >
          {saving ? 'Saving…' : 'Save'}
        </button>
      </div>
    </div>
  )
}
