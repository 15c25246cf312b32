import { useEffect, useState } from 'react'
import type { FollowProgress } from '../../../../shared/types'
import { icons } from '../../components/icons'
import { api } from '../../lib/api'
import { useDelayed } from '../../lib/use-delayed'
import './follow.css'

const count = new Intl.NumberFormat()

/** "Reading 1,234 of 5,000 commits git added…", or what is done while their number is not known. */
export function followLine(progress: FollowProgress): string {
  if (progress.total === null) return 'Finding the commits git added…'
  const noun = progress.total === 1 ? 'commit' : 'commits'
  return `Reading ${count.format(progress.done)} of ${count.format(progress.total)} ${noun} git added…`
}

/**
 * The sidebar's line while Cairn takes in a history `main` was moved to with git outside it
 * (`history:following`): a history of thousands of commits takes seconds, and the window
 * would say nothing meanwhile. It goes when the follow ends, also when it failed (the change
 * or the read that met it says why); a quick follow shows nothing at all.
 */
export function FollowIndicator() {
  const [progress, setProgress] = useState<FollowProgress | null>(null)
  useEffect(
    () => api().on('history:following', (next) => setProgress(next.ended ? null : next)),
    [],
  )
  const shown = useDelayed(progress !== null, 300)
  if (!shown || progress === null) return null
  return (
    <div className="follow-indicator" role="status" aria-label="Taking in commits made with git">
      <icons.history className="follow-spin" aria-hidden="true" />
      <span className="follow-indicator-text">{followLine(progress)}</span>
    </div>
  )
}
