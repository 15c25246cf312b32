import type { FileUse } from '../../../../shared/types'
import { FileIcon, icons } from '../../components/icons'
import { displayPath, relativeTime, visibleName } from '../../lib/format'
import { formatSize } from './tree-model'

/** "read 3 days ago", or "not read yet" for a file Claude has not viewed since the log began. */
export function readLabel(file: FileUse, now: number): string {
  return file.lastReadAt === null ? 'not read yet' : `read ${relativeTime(file.lastReadAt, now)}`
}

/**
 * The memory files as a flat list, when sorted by use or filtered by last read: each with
 * when Claude last read it and its size; a file one view cannot show whole is marked.
 */
export function FileUseList(props: {
  readonly files: ReadonlyArray<FileUse>
  readonly selected: string | null
  readonly now: number
  readonly label: string
  readonly onSelect: (path: string) => void
}) {
  const { files, now } = props
  if (files.length === 0) {
    return <p className="hint mem-use-empty">No file matches.</p>
  }
  return (
    <ul className="mem-use-list" aria-label={props.label}>
      {files.map((file) => (
        <li key={file.path}>
          <button
            type="button"
            className="mem-use-row"
            aria-current={file.path === props.selected || undefined}
            aria-label={`${displayPath(file.path)}, ${readLabel(file, now)}, ${formatSize(file.size)}`}
            onClick={() => props.onSelect(file.path)}
          >
            <span className="mem-tree-icon" aria-hidden="true">
              <FileIcon />
            </span>
            <span className="mem-use-name" title={visibleName(file.path)}>
              {displayPath(file.path)}
            </span>
            {file.overViewLimit && (
              <span className="mem-use-warn" title="Longer than one view: Claude reads it in parts">
                <icons.alert width={12} height={12} />
              </span>
            )}
            <span className="mem-use-read">{readLabel(file, now)}</span>
            <span className="mem-tree-size">{formatSize(file.size)}</span>
          </button>
        </li>
      ))}
    </ul>
  )
}
