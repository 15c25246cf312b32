import type { MemoryStats } from '../../../../shared/types'
import { icons } from '../../components/icons'
import { tokensLabel } from './file-use'
import { formatSize } from './tree-model'

/**
 * How big memory is: files, bytes, and about how many tokens Claude reads to view all of it,
 * with a warning (that filters to them) when files are too long for one `view`.
 */
export function SizeMeter(props: {
  readonly stats: MemoryStats
  readonly oversizedOnly: boolean
  readonly onOversizedOnly: (on: boolean) => void
}) {
  const { stats } = props
  const oversized = stats.files.filter((file) => file.overViewLimit).length
  const files = stats.files.length === 1 ? '1 file' : `${stats.files.length} files`
  return (
    <footer className="mem-meter" aria-label="Memory size">
      <span role="status" aria-label="Memory size summary">
        {files} · {formatSize(stats.totalBytes)} ·{' '}
        <span title="An estimate of what Claude reads to view the folder and every file in it">
          {tokensLabel(stats.totalTokens)} to read everything
        </span>
      </span>
      {oversized > 0 && (
        <button
          type="button"
          className="mem-meter-warn"
          aria-pressed={props.oversizedOnly}
          title={`One view returns at most ${stats.viewLimit.toLocaleString('en-US')} characters; Claude must read these files in parts`}
          onClick={() => props.onOversizedOnly(!props.oversizedOnly)}
        >
          <icons.alert width={12} height={12} />
          {oversized === 1 ? '1 file is' : `${oversized} files are`} longer than one view
        </button>
      )}
    </footer>
  )
}
