import { useState } from 'react'
import type { FileUse, MemoryEntry } from '../../../../shared/types'
import { ConfirmDialog } from '../../components/ConfirmDialog'
import { displayPath, relativeTime, visibleName } from '../../lib/format'
import { asideNameOf, isKeptAsideName } from '../../lib/kept-aside'
import { useNow } from '../../lib/use-now'

/** Asks for the path (and optional first content) of a new memory file. */
export function NewFileDialog(props: {
  readonly folder: string
  readonly onCreate: (path: string, content: string) => Promise<void>
  readonly onCancel: () => void
}) {
  const [path, setPath] = useState(`${props.folder}/`)
  const [content, setContent] = useState('')
  return (
    <ConfirmDialog
      title="New memory file"
      confirmLabel="Create file"
      initialFocus="field"
      onConfirm={() => props.onCreate(path.trim(), content)}
      onCancel={props.onCancel}
    >
      <p>The file is saved in memory as a change by You. Claude will see it in its next turn.</p>
      <PathField label="Path" value={path} onChange={setPath} />
      <label className="dialog-field">
        Content
        <textarea
          className="input input-small mem-dialog-textarea"
          value={content}
          onChange={(event) => setContent(event.target.value)}
          rows={6}
        />
      </label>
    </ConfirmDialog>
  )
}

/** Asks for the new path of a file or folder. */
export function RenameDialog(props: {
  readonly path: string
  readonly onRename: (to: string) => Promise<void>
  readonly onCancel: () => void
}) {
  const [to, setTo] = useState(props.path)
  return (
    <ConfirmDialog
      title={`Rename ${displayPath(props.path)}`}
      confirmLabel="Rename"
      initialFocus="field"
      onConfirm={() => props.onRename(to.trim())}
      onCancel={props.onCancel}
    >
      <p>
        Moves <code>{visibleName(props.path)}</code> to the new path, as one change by You. The
        history follows the file.
      </p>
      <PathField label="New path" value={to} onChange={setTo} />
    </ConfirmDialog>
  )
}

// Why History keeps no copy of a file, completing "History has no copy of it (…)".
const NO_COPY_BECAUSE: Readonly<Record<'too-large' | 'name-not-allowed', string>> = {
  'too-large': 'it is too large to version',
  'name-not-allowed':
    'its name cannot be tracked: it holds a line break, a tab, another control character or a backslash',
}

/**
 * Confirms deleting a file or a folder, and says how to get it back. A file History keeps no
 * copy of (`notInHistory`: too large to version, say) is not deleted but kept aside, and the
 * dialog says so, and why, rather than promise History has it.
 */
export function DeleteDialog(props: {
  readonly path: string
  readonly kind: 'file' | 'dir'
  /** The files at or under `path` that History keeps no copy of. */
  readonly notInHistory: ReadonlyArray<string>
  /** True when the file is one Cairn may not read: never said to be "not in History". */
  readonly unreadable?: boolean
  /** Why History keeps no copy of the file itself (`MemoryEntry.notInHistory`). */
  readonly reason?: MemoryEntry['notInHistory']
  /** Where the core would keep it, or a folder's files History keeps no copy of. */
  readonly keptAs?: string
  readonly onDelete: () => Promise<void>
  readonly onCancel: () => void
}) {
  const what = props.kind === 'dir' ? 'folder and everything in it' : 'file'
  const unkept = props.notInHistory
  const because = NO_COPY_BECAUSE[props.reason === 'name-not-allowed' ? props.reason : 'too-large']
  // The core's own name for it, from the listing; the window's own guess only without one.
  const keptAs = props.keptAs
    ? visibleName(props.keptAs)
    : asideNameOf(props.path, props.unreadable === true)
  // Kept aside already by Cairn: the core refuses to keep it aside again (it would only be
  // renamed, on and on), so there is nothing to confirm.
  if (unkept.length > 0 && props.kind === 'file' && isKeptAsideName(props.path)) {
    return (
      <ConfirmDialog title={`${displayPath(props.path)} is not deleted`} onCancel={props.onCancel}>
        <p>
          Cairn kept <code>{visibleName(props.path)}</code> aside already:{' '}
          {props.unreadable
            ? 'Cairn may not read it (permission denied; it may belong to another account), so what it holds now is not in History.'
            : `History has no copy of it (${because}), so it could not be brought back from History.`}{' '}
          Deleting it here would only move it to yet another name, so Cairn does not delete it.
        </p>
        <p>
          {props.unreadable
            ? 'Give your account read access to it to version it (then it can be deleted here), or delete it in your file manager.'
            : props.reason === 'name-not-allowed'
              ? 'Rename it in your file manager to version it, or delete it there if you no longer need it.'
              : 'If you no longer need it, delete it in your file manager.'}
        </p>
      </ConfirmDialog>
    )
  }
  return (
    <ConfirmDialog
      title={`Delete ${displayPath(props.path)}?`}
      confirmLabel="Delete"
      tone="danger"
      onConfirm={props.onDelete}
      onCancel={props.onCancel}
    >
      {unkept.length > 0 && props.kind === 'file' && props.unreadable ? (
        <p>
          Cairn may not read <code>{visibleName(props.path)}</code> (permission denied; it may
          belong to another account), so what it holds now is not in History. It is not deleted: it
          will be kept in its folder as <code>{keptAs}</code>. History keeps the last version Cairn
          could read, if there was one.
        </p>
      ) : unkept.length > 0 && props.kind === 'file' ? (
        <p>
          History has no copy of <code>{visibleName(props.path)}</code> ({because}), so it could not
          be brought back from History. It is not deleted: it will be kept in its folder as{' '}
          <code>{keptAs}</code>.
        </p>
      ) : (
        <p>
          This removes the {what} <code>{visibleName(props.path)}</code> from memory; Claude will no
          longer see it.
        </p>
      )}
      {unkept.length === 0 ? (
        <p>Nothing is lost: its history is kept, and you can bring it back from History.</p>
      ) : (
        props.kind === 'dir' && (
          <p>
            History has no copy of {unkept.length === 1 ? 'one file' : `${unkept.length} files`} in
            it ({unkept.map((path) => displayPath(path)).join(', ')}):{' '}
            {unkept.length === 1 ? 'it' : 'they'} will be kept in <code>{keptAs}</code> beside it.
            The rest can be brought back from History.
          </p>
        )
      )}
    </ConfirmDialog>
  )
}

/** Confirms expiring a file: it leaves memory as a change named "expire", kept in History. */
export function ExpireDialog(props: {
  readonly path: string
  readonly use: FileUse | undefined
  readonly onExpire: () => Promise<void>
  readonly onCancel: () => void
}) {
  const now = useNow()
  const read = props.use?.lastReadAt ?? null
  const when =
    read === null
      ? 'has not read it since Cairn began keeping track'
      : `last read it ${relativeTime(read, now)}`
  return (
    <ConfirmDialog
      title={`Expire ${displayPath(props.path)}?`}
      confirmLabel="Expire"
      tone="danger"
      onConfirm={props.onExpire}
      onCancel={props.onCancel}
    >
      <p>
        Claude {when}. Expiring removes <code>{visibleName(props.path)}</code> from memory, so
        Claude no longer sees it.
      </p>
      <p>History keeps it as a change named “expire”: you can bring it back at any time.</p>
    </ConfirmDialog>
  )
}

/** A memory path field: must lie under /memories/, and takes the dialog's first focus. */
function PathField(props: {
  readonly label: string
  readonly value: string
  readonly onChange: (value: string) => void
}) {
  return (
    <label className="dialog-field">
      {props.label}
      <input
        className="input input-small"
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
        spellCheck={false}
        required
        pattern="/memories/.+"
        data-autofocus
      />
    </label>
  )
}
