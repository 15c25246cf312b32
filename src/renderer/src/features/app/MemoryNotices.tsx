import { useEffect, useState } from 'react'
import { noticeSlot } from '../../../../shared/notice-slot'
import type { MemoryNotice } from '../../../../shared/types'
import { Banner } from '../../components/Banner'
import { api, errorMessage, unwrap } from '../../lib/api'
import { heldUntilAnswered } from '../../lib/held-until-answered'
import { useNavigation } from '../../lib/navigation'

// Notices about a file that the core moves along with the file.
const FOLLOWS_FILE: ReadonlySet<MemoryNotice['kind']> = new Set(['too-large', 'name-not-allowed'])

type Removal =
  | { readonly state: 'idle' | 'working' }
  | { readonly state: 'done' | 'failed'; readonly message: string }

/**
 * What the core noticed about the memory folder (`memory:notices` at start, `memory:notice`
 * as it happens): a file too large to version, a secret that arrived in a file edited
 * outside Cairn (with a way to take it out of the file), an earlier version found damaged
 * (with a way to that file's history). Each can be dismissed; the dismissal is told to the core
 * (`memory:dismissNotice`), so a window that opens later, or this one reloaded, does not show
 * it again, and one already open hides it at once (`memory:noticeDismissed`). Each is dismissed
 * by the id the core raised it with: another notice that reads the same (its file's notice raised
 * again after it was dealt with) is not taken with it.
 */
export function MemoryNotices() {
  const [notices, setNotices] = useState<ReadonlyArray<MemoryNotice>>([])
  const [loadError, setLoadError] = useState<string | null>(null)
  const [attempt, setAttempt] = useState(0)
  useEffect(() => {
    let live = true
    // What another window dismissed while the answer was on its way stays dismissed. One told
    // since takes the place of the answer's of its id or file, not the other way: a file's
    // notice raised again, or moved with its file, stays as it was told (rnotices26 R2).
    const early = heldUntilAnswered<MemoryNotice, string>({
      dismisses: (id, notice) => notice.id === id,
      replaces: (told, notice) => told.id === notice.id || noticeSlot(told) === noticeSlot(notice),
    })
    // The core keeps one notice of a kind per file: one raised again for its file takes the
    // earlier one's place, and one that follows its file to a new name keeps its id.
    const put = (notice: MemoryNotice) =>
      setNotices((list) => {
        const same = (n: MemoryNotice) => n.id === notice.id || noticeSlot(n) === noticeSlot(notice)
        const at = list.findIndex(same)
        if (at < 0) return [...list, notice]
        return [...list.slice(0, at), notice, ...list.slice(at + 1).filter((n) => !same(n))]
      })
    early.without(unwrap(api().memory.notices())).then(
      (list) => {
        if (!live) return
        setLoadError(null)
        for (const notice of list) put(notice)
      },
      (error: unknown) => {
        // Said, with Retry: a secret or a damaged version found before this window opened is
        // told nowhere else.
        if (live) setLoadError(errorMessage(error))
      },
    )
    // A notice about a file History keeps no copy of follows the file when a change moves
    // it (the same notice, its id kept, at the new path); one the core no longer keeps (one
    // shown here before a window's answer told otherwise) goes.
    const follow = (notice: MemoryNotice) => {
      early.told(notice)
      put(notice)
      unwrap(api().memory.notices()).then(
        (list) => {
          if (!live) return
          const current = new Set(list.map((n) => n.id))
          setNotices((shown) => shown.filter((n) => !FOLLOWS_FILE.has(n.kind) || current.has(n.id)))
        },
        () => {
          // Kept as shown: a stale notice costs less than none.
        },
      )
    }
    const stop = api().on('memory:notice', follow)
    // Dismissed in any window (this one too), or cleared by the core (its file went): gone
    // from every window.
    const drop = ({ id }: { readonly id: string }) => {
      early.heard(id)
      setNotices((shown) => shown.filter((notice) => notice.id !== id))
    }
    const stopDismissed = api().on('memory:noticeDismissed', drop)
    const stopCleared = api().on('memory:noticeCleared', drop)
    return () => {
      live = false
      stop()
      stopDismissed()
      stopCleared()
    }
  }, [attempt])
  const dismiss = (notice: MemoryNotice) => {
    setNotices((shown) => shown.filter((n) => n.id !== notice.id))
    // Kept by the core for the run, so a window opened later does not show it again, and told
    // to every window. Should that fail, it is gone from this one all the same.
    unwrap(api().memory.dismissNotice({ id: notice.id })).catch(() => {})
  }
  if (notices.length === 0 && !loadError) return null
  return (
    <div className="memory-notices">
      {loadError && (
        <Banner
          tone="error"
          title="Could not load what Cairn noticed about memory"
          onRetry={() => {
            setLoadError(null)
            setAttempt((n) => n + 1)
          }}
        >
          {loadError}
        </Banner>
      )}
      {notices.map((notice) =>
        notice.kind === 'secret' ? (
          <SecretNotice key={notice.id} notice={notice} onDismiss={() => dismiss(notice)} />
        ) : notice.kind === 'damaged' ? (
          <DamagedNotice key={notice.id} notice={notice} onDismiss={() => dismiss(notice)} />
        ) : (
          <Banner
            key={notice.id}
            tone="info"
            title={
              notice.kind === 'kept-aside' ? 'A file was kept aside' : 'A file is not versioned'
            }
            onDismiss={() => dismiss(notice)}
          >
            {notice.message}
          </Banner>
        ),
      )}
    </div>
  )
}

/**
 * A version History keeps is damaged and could not be repaired: a loss, so a warning, with a
 * way to that file's history (where the version is marked damaged).
 */
function DamagedNotice(props: { readonly notice: MemoryNotice; readonly onDismiss: () => void }) {
  const { notice } = props
  const { showHistory } = useNavigation()
  return (
    <Banner
      tone="warning"
      title="An earlier version of a file is damaged"
      onDismiss={props.onDismiss}
      actions={
        <button
          type="button"
          className="button button-small"
          onClick={() => showHistory({ path: notice.path })}
        >
          View in History
        </button>
      }
    >
      {notice.message}
    </Banner>
  )
}

function SecretNotice(props: { readonly notice: MemoryNotice; readonly onDismiss: () => void }) {
  const { notice } = props
  const { showHistory } = useNavigation()
  const [removal, setRemoval] = useState<Removal>({ state: 'idle' })
  const remove = async () => {
    setRemoval({ state: 'working' })
    try {
      const result = await unwrap(api().memory.removeSecrets({ path: notice.path }))
      setRemoval({ state: 'done', message: result.message })
    } catch (error) {
      setRemoval({ state: 'failed', message: errorMessage(error) })
    }
  }
  if (removal.state === 'done') {
    return (
      <Banner tone="success" title="Secret removed" onDismiss={props.onDismiss} compact>
        {removal.message}
      </Banner>
    )
  }
  return (
    <Banner
      tone="warning"
      title="A secret was found in your memory"
      onDismiss={props.onDismiss}
      actions={
        <>
          <button
            type="button"
            className="button button-small button-primary"
            disabled={removal.state === 'working'}
            onClick={() => void remove()}
          >
            {removal.state === 'working' ? 'Removing…' : 'Remove it from the file'}
          </button>
          {notice.commitOid && (
            <button
              type="button"
              className="button button-small"
              onClick={() => showHistory({ oid: notice.commitOid ?? undefined })}
            >
              View in History
            </button>
          )}
        </>
      }
    >
      {notice.message}
      {removal.state === 'failed' && <p role="alert">{removal.message}</p>}
    </Banner>
  )
}
