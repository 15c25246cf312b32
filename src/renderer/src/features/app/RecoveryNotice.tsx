import { useEffect, useState } from 'react'
import type { RecoveryReport } from '../../../../shared/types'
import { Banner } from '../../components/Banner'
import { useNavigation } from './navigation'

/**
 * Tells the person when the core repaired its history at start-up (`app:info`.recovery or a
 * later `app:recovery`), with a way to see the recovery commit.
 */
export function RecoveryNotice({ initial }: { readonly initial: RecoveryReport | null }) {
  const { showHistory } = useNavigation()
  const [report, setReport] = useState<RecoveryReport | null>(null)
  const [dismissed, setDismissed] = useState<RecoveryReport | null>(null)
  useEffect(() => window.api.on('app:recovery', setReport), [])
  const shown = report ?? initial
  if (!shown || shown === dismissed) return null
  return (
    <Banner
      tone="warning"
      title={
        shown.kind === 'history-rebuilt'
          ? 'Memory history was rebuilt'
          : shown.kind === 'history-repaired'
            ? 'Memory history was repaired'
            : 'Unsaved memory changes recovered'
      }
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
