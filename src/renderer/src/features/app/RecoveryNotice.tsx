import { useEffect, useState } from 'react'
import type { RecoveryReport } from '../../../../shared/types'
import { Banner, type BannerTone } from '../../components/Banner'
import { api, errorMessage, unwrap } from '../../lib/api'
import { heldUntilAnswered } from '../../lib/held-until-answered'
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
 * Tells the person when the core repaired its history: at start-up or later (`app:recovery`,
 * e.g. edits made to the memory folder in another program, saved as their own change), with
 * a way to see the commit. On mount it asks the core for every report so far
 * (`app:recoveries`): one told before this window listened (outside edits saved in the first
 * moments) still shows. Each report stays until it is dismissed: a later one shows below,
 * never in its place (the start-up report may be the only place that says where a damaged
 * history was set aside). A later report of the same kind replaces the earlier one, so that
 * outside edits saved one after another do not pile up. A dismissal is told to the core
 * (`app:dismissRecovery`): a window that opens later, or this one reloaded, does not show it
 * again, and one already open hides it at once (`app:recoveryDismissed`). Each is dismissed by
 * the id the core told it with: another report that reads the same is not taken with it.
 */
export function RecoveryNotice() {
  const { showHistory } = useNavigation()
  const [reports, setReports] = useState<ReadonlyArray<RecoveryReport>>([])
  const [loadError, setLoadError] = useState<string | null>(null)
  const [attempt, setAttempt] = useState(0)
  useEffect(() => {
    let live = true
    // What another window dismissed while the answer was on its way stays dismissed; a report
    // told since is newer than (or the same as) the answer's of its kind.
    const early = heldUntilAnswered<RecoveryReport, string>({
      dismisses: (id, report) => report.id === id,
      replaces: (told, report) => told.kind === report.kind,
    })
    const stop = api().on('app:recovery', (report) => {
      early.told(report)
      setReports((shown) => [...shown.filter((earlier) => earlier.kind !== report.kind), report])
    })
    // Dismissed in any window (this one too): gone from every window.
    const stopDismissed = api().on('app:recoveryDismissed', ({ id }) => {
      early.heard(id)
      setReports((shown) => shown.filter((report) => report.id !== id))
    })
    early.without(unwrap(api().app.recoveries())).then(
      (missed) => {
        if (!live) return
        setLoadError(null)
        // One told meanwhile (after a Retry: since the first attempt) is as new as the answer's.
        setReports((shown) => [
          ...missed.filter((report) => !shown.some((s) => s.kind === report.kind)),
          ...shown,
        ])
      },
      (error: unknown) => {
        // Said, with Retry: a repair the core made at start-up is told nowhere else.
        if (live) setLoadError(errorMessage(error))
      },
    )
    return () => {
      live = false
      stop()
      stopDismissed()
    }
  }, [attempt])
  if (reports.length === 0 && !loadError) return null
  return (
    <div className="recovery-notices">
      {loadError && (
        <Banner
          tone="error"
          title="Could not check whether Cairn repaired anything"
          onRetry={() => {
            setLoadError(null)
            setAttempt((n) => n + 1)
          }}
        >
          {loadError}
        </Banner>
      )}
      {reports.map((report) => {
        const { tone, title } = PRESENTATION[report.kind]
        return (
          <Banner
            key={report.id}
            tone={tone}
            title={title}
            onDismiss={() => {
              setReports((shown) => shown.filter((entry) => entry.id !== report.id))
              // Kept by the core for the run, so a window opened later does not show it again,
              // and told to every window. Should that fail, it is gone from this one all the same.
              unwrap(api().app.dismissRecovery({ id: report.id })).catch(() => {})
            }}
            actions={
              report.commitOid && (
                <button
                  type="button"
                  className="button button-small"
                  onClick={() => showHistory({ oid: report.commitOid ?? undefined })}
                >
                  View in History
                </button>
              )
            }
          >
            {report.message}
          </Banner>
        )
      })}
    </div>
  )
}
