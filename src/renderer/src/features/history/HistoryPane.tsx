import { useState } from 'react'
import { Notice } from '../../components/Banner'
import { icons } from '../../components/icons'
import { Splitter } from '../../components/Splitter'
import { useNavigation } from '../../lib/navigation'
import { useNow } from '../../lib/use-now'
import { HistoryFilters } from './HistoryFilters'
import { DetailArea, RestoreConfirm, TimelineArea } from './HistoryParts'
import { useHistory } from './use-history'
import './history.css'

/** Below this window height (px) the side pane's history is laid out for little room. */
const SHORT_WINDOW = 700

/**
 * The History tab of the side pane, for a quick look: filters, the timeline, the selected
 * change below it, and a way into the full history view with the same change selected.
 */
export function HistoryPane() {
  const navigation = useNavigation()
  const history = useHistory(navigation.historyTarget)
  // In a short window the timeline starts smaller, so a change's own restore actions show
  // without scrolling the detail below it (dragging the splitter still sets any share).
  const [split, setSplit] = useState(() => (window.innerHeight < SHORT_WINDOW ? 35 : 40))
  const now = useNow()
  const { openFullHistory, openConversation } = navigation

  return (
    // A banner that goes with the focus inside it (a result dismissed) hands it on in the pane.
    <div className="hist-pane" data-banner-group="">
      <HistoryFilters
        filters={history.filters}
        onChange={history.setFilters}
        filePaths={history.filePaths}
        conversations={history.conversations}
        total={history.snapshot.total}
      >
        <button
          type="button"
          className="button button-small hist-open-full"
          onClick={() =>
            openFullHistory({
              ...history.filters,
              ...(history.selectedOid ? { oid: history.selectedOid } : {}),
            })
          }
          aria-keyshortcuts="Control+Shift+H Meta+Shift+H"
          title="Open the full history view (Ctrl/⌘ Shift H)"
        >
          <icons.history width={14} height={14} />
          Open full history
        </button>
      </HistoryFilters>
      <Notice notice={history.notice} onDismiss={history.dismissNotice} />

      <div className="hist-list" style={{ flexBasis: `${split}%` }} data-banner-fallback="">
        <TimelineArea history={history} now={now} onOpenConversation={openConversation} />
      </div>

      <Splitter label="Resize timeline" value={split} onChange={setSplit} />

      <div className="hist-detail-area">
        <DetailArea
          history={history}
          now={now}
          onOpenConversation={openConversation}
          blameActions={history.blameActions}
        />
      </div>

      <RestoreConfirm history={history} now={now} />
    </div>
  )
}
