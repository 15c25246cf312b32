import { useState } from 'react'
import type { PendingChange } from '../../../../shared/types'
import { Banner } from '../../components/Banner'
import { icons } from '../../components/icons'
import { LazyPendingChange } from '../../components/LazyPendingChange'
import { flagRules, flagTitle } from '../../lib/flags'
import { displayPath } from '../../lib/format'
import { useNavigation } from '../../lib/navigation'
import { usePendingChanges } from '../../lib/pending-changes'

const VERBS: Readonly<Record<PendingChange['command'], string>> = {
  create: 'Write',
  str_replace: 'Edit',
  insert: 'Add to',
  delete: 'Delete',
  rename: 'Rename',
}

/** What the change asks for, in a few words: `Claude: Edit notes.md`, `Cairn: Expire old.md`. */
function describe(change: PendingChange): string {
  const verb =
    change.origin === 'cairn' && change.command === 'delete' ? 'Expire' : VERBS[change.command]
  const to = change.newPath ? ` → ${displayPath(change.newPath)}` : ''
  return `${verb} ${displayPath(change.path)}${to}`
}

/**
 * Every change waiting for the person, at the top of the memory pane: Claude's (from any
 * conversation) and Cairn's own expiry proposals. One opens at a time, with its diff and the
 * same decisions as on the chat's tool card.
 */
export function PendingList() {
  const { changes, loadError, retry } = usePendingChanges()
  const { openConversation } = useNavigation()
  const [shown, setShown] = useState(true)
  const [expanded, setExpanded] = useState<string | null>(null)
  if (changes.length === 0) {
    return (
      loadError && (
        <div className="mem-read-error">
          <Banner
            tone="error"
            title="Could not load the changes waiting for review"
            onRetry={retry}
          >
            {loadError}
          </Banner>
        </div>
      )
    )
  }
  // The oldest is open unless the person opened another (or closed it: the empty string).
  const open =
    expanded === ''
      ? ''
      : expanded !== null && changes.some((c) => c.id === expanded)
        ? expanded
        : changes[0]!.id
  const count = changes.length === 1 ? '1 change waits' : `${changes.length} changes wait`
  return (
    <section className="mem-pending" aria-label="Waiting for your review">
      <button
        type="button"
        className="mem-pending-head"
        aria-expanded={shown}
        onClick={() => setShown((value) => !value)}
      >
        <icons.alert />
        <span>{count} for your review</span>
        <span className="mem-pending-twisty" aria-hidden="true">
          {shown ? '▾' : '▸'}
        </span>
      </button>
      {shown && (
        <ul className="mem-pending-list">
          {changes.map((change) => {
            const isOpen = change.id === open
            const rules = flagRules(change.flags)
            return (
              <li key={change.id} className="mem-pending-item" data-open={isOpen}>
                <button
                  type="button"
                  className="mem-pending-row"
                  data-review-row
                  aria-expanded={isOpen}
                  aria-label={`${change.origin === 'claude' ? 'Claude' : 'Cairn'}: ${describe(change)}`}
                  onClick={() => setExpanded(isOpen ? '' : change.id)}
                >
                  <span className={`mem-pending-who mem-pending-${change.origin}`}>
                    {change.origin === 'claude' ? 'Claude' : 'Cairn'}
                  </span>
                  <span className="mem-pending-what">{describe(change)}</span>
                  {rules.length > 0 && (
                    <span className="mem-pending-flag" title={rules.map(flagTitle).join(', ')}>
                      <icons.alert />{' '}
                      {rules.length === 1 ? flagTitle(rules[0]!) : `${rules.length} flags`}
                    </span>
                  )}
                </button>
                {isOpen && (
                  <>
                    {change.conversationId && (
                      <button
                        type="button"
                        className="mem-pending-link"
                        onClick={() => openConversation(change.conversationId)}
                      >
                        Open the conversation
                      </button>
                    )}
                    {change.origin === 'cairn' && (
                      <p className="hint mem-pending-why">
                        Claude has not read this file for a while. Expiring it deletes it from
                        memory; History keeps it.
                      </p>
                    )}
                    <LazyPendingChange change={change} />
                  </>
                )}
              </li>
            )
          })}
        </ul>
      )}
    </section>
  )
}
