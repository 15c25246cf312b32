import type { CommitSummary } from '../../../../shared/types'
import { icons } from '../../components/icons'
import { flagRules, flagSentences, flagTitle, flagWhere } from '../../lib/flags'

/** True for an expiry: a delete named "expire" (by the person, or Cairn's approved proposal). */
function isExpiry(commit: CommitSummary): boolean {
  return commit.command === 'delete' && commit.subject === 'expire'
}

/**
 * The review facts of a commit as small badges: flagged (each rule that fired, with where, in
 * its tooltip), reviewed or edited by the person, expired.
 */
export function CommitBadges({ commit }: { readonly commit: CommitSummary }) {
  const flags = commit.flags ?? []
  return (
    <>
      {flags.length > 0 && (
        <span className="hist-badge hist-badge-flag" title={flagSentences(flags).join('\n')}>
          <icons.alert width={10} height={10} aria-hidden="true" />
          Flagged
        </span>
      )}
      {commit.review && (
        <span
          className="hist-badge hist-badge-review"
          title={
            commit.review === 'edited'
              ? 'You edited this change before approving it'
              : 'You approved this change before it landed'
          }
        >
          {commit.review === 'edited' ? 'Edited by you' : 'Approved'}
        </span>
      )}
      {isExpiry(commit) && <span className="hist-badge hist-badge-expire">Expired</span>}
    </>
  )
}

/** A commit's flags in a few words for the timeline row: `Instruction-like text (notes.md, line 2)`. */
export function FlagReason({ commit }: { readonly commit: CommitSummary }) {
  const flags = commit.flags ?? []
  if (flags.length === 0) return null
  const [first] = flags
  const more = flagRules(flags).length - 1
  return (
    <span className="hist-flag-reason" title={flagSentences(flags).join('\n')}>
      {flagTitle(first!.rule)} ({flagWhere(first!)}){more > 0 && ` +${more} more`}
    </span>
  )
}

/** Every flag of the selected commit, with what was found, under its title. */
export function FlagList({ commit }: { readonly commit: CommitSummary }) {
  const flags = commit.flags ?? []
  if (flags.length === 0) return null
  return (
    <ul className="hist-flags" aria-label="Why this change was flagged">
      {flags.map((flag, i) => (
        <li key={i}>
          <icons.alert width={12} height={12} aria-hidden="true" />
          <span>
            <strong>{flagTitle(flag.rule)}</strong> · {flagWhere(flag)}: {flag.message}
          </span>
        </li>
      ))}
    </ul>
  )
}
