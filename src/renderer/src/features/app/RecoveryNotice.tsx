import { useEffect, useState } from 'react'
import type { RecoveryReport } from '../../../../shared/types'
import { Banner, type BannerTone } from '../../components/Banner'
import { api } from '../../lib/api'
import { useNavigation } from '../../lib/navigation'

const PRESENTATION: Readonly<
  Record<RecoveryReport['kind'], { readonly tone: BannerTone; readonly title: string }>
> = {
  'history-rebuilt': { tone: 'warning', title: 'Memory history was rebuilt' },
  'history-repaired': { tone: 'warning', title: 'Memory history was repaired' },
  'uncommitted-changes': { tone: 'warning', title: 'Unsaved memory changes recovered' },
  'outside-changes': { tone: 'info', title: 'Edits made outside Cairn saved' },
}

/**
 * Tells the person when the core repaired its history: at start-up (`app:info`.recovery) or
 * later (`app:recovery`, e.g. edits made to the memory folder in another program, saved as
 * their own change), with a way to see the commit.
 */
export function RecoveryNotice({ initial }: { readonly initial: RecoveryReport | null }) {
  const { showHistory } = useNavigation()
  const [report, setReport] = useState<RecoveryReport | null>(null)
  const [dismissed, setDismissed] = useState<RecoveryReport | null>(null)
  useEffect(() => api().on('app:recovery', setReport), [])
  const shown = report ?? initial
  if (!shown || shown === dismissed) return null
  const { tone, title } = PRESENTATION[shown.kind]
  return (
    <Banner
      tone={tone}
      title={title}
      onDismiss={() => setDismissed(shown)}
      actions={
        shown.commitOid && (
          <button
            type="button"
            className="button button-small"
            onClick={() => showHistory({ oid: shown.commitOid ?? undefined })}
          >
            View in History
          </button>
        )
      }
    >
      {shown.message}
    </Banner>
  )
}
