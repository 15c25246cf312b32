import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type ReactNode,
} from 'react'
import type { ApiErrorData, Conversation } from '../../../../shared/types'
import { Banner } from '../../components/Banner'
import { Loading } from '../../components/Feedback'
import { CairnMark, icons } from '../../components/icons'
import { api, ApiError, errorMessage, unwrap } from '../../lib/api'
import { newClientId } from '../../lib/client-id'
import { errorTitle } from '../../lib/error-title'
import { useNavigation } from '../../lib/navigation'
import { shownTitle } from '../../lib/shown-title'
import { promptText, retriedPrompt } from '../../../../shared/retry'
import { useSettings } from '../settings/settings-context'
import { Composer } from './Composer'
import { useLiveTurns } from './live-turns'
import {
  isSettingsProblem,
  isUnsavedTurn,
  storedBeforeTurn,
  turnFromLive,
  turnsFromStored,
  type TranscriptTurn,
} from './transcript-model'
import { toolCardId } from './ToolCard'
import { TurnView } from './TurnView'
import { DeleteConversationDialog } from './DeleteConversationDialog'
import { useConversation } from './use-conversation'
import './chat.css'

/** A message sent but not yet acknowledged by a `turn-started` event. */
interface PendingSend {
  readonly text: string
  readonly conversationId: string | null
  /** Chosen here and echoed by the turn's `turn-started` event: how the turn is recognized. */
  readonly clientId: string
}

const suggestions = [
  'What do you remember about me?',
  'Remember that I prefer concise answers.',
  'Help me plan my week.',
]

/**
 * Opens the data folder, where a conversation's file (or a copy kept aside) can be looked at;
 * `title` says which file. A failure is reported through `onError`.
 */
function OpenDataFolderButton({
  title,
  onError,
}: {
  readonly title: string
  readonly onError: (message: string) => void
}) {
  return (
    <button
      type="button"
      className="button button-small"
      onClick={() =>
        void unwrap(api().app.openDataFolder()).catch((error: unknown) =>
          onError(`Could not open the data folder. ${errorMessage(error)}`),
        )
      }
      title={title}
    >
      <icons.folder />
      Open data folder
    </button>
  )
}

/** The open conversation: transcript, tool cards and the composer. */
export function ChatPane() {
  const {
    conversationId,
    openConversation,
    openSettings,
    showHistory,
    composerFocusRequest,
    focusComposer,
    replyTarget,
  } = useNavigation()
  const settings = useSettings()
  const live = useLiveTurns()
  const { state, reload } = useConversation(conversationId)
  const [draft, setDraft] = useState('')
  const [pending, setPending] = useState<PendingSend | null>(null)
  const [sendError, setSendError] = useState<ApiErrorData | null>(null)
  // The failed turn a Retry under way replaces: not drawn while the store still holds it.
  const [retried, setRetried] = useState<{ turnId: string; text: string } | null>(null)
  const stopWanted = useRef(false)
  const [shownFor, setShownFor] = useState(conversationId)
  if (shownFor !== conversationId) {
    // Another conversation: a failed send belongs to the one it was sent in.
    setShownFor(conversationId)
    setSendError(null)
  }

  const tracked = conversationId ? live.byConversation[conversationId] : undefined
  const { latestStarted, settle, dismissError } = live

  // The turn of a pending message has started: from then on the live turn shows it.
  const started =
    pending !== null && latestStarted !== null && latestStarted.clientId === pending.clientId
  const waiting = started ? null : pending
  const adoptedId = started ? latestStarted.conversationId : null

  // A new chat adopts the conversation its first turn created.
  useEffect(() => {
    if (!adoptedId) return
    if (conversationId === null) openConversation(adoptedId)
    if (stopWanted.current) {
      stopWanted.current = false
      void api().chat.stop({ conversationId: adoptedId })
    }
  }, [adoptedId, conversationId, openConversation])

  // A finished turn: load what was stored, then draw from the store alone (unless its reply
  // could not be saved: then only the live turn has it).
  useEffect(() => {
    if (!conversationId || !tracked?.finished || tracked.settled) return
    if (tracked.error && isUnsavedTurn(tracked.error.code)) return
    const { turnId } = tracked
    void reload().then(() => settle(conversationId, turnId))
  }, [conversationId, tracked, reload, settle])

  const running = waiting !== null || (tracked !== undefined && !tracked.finished)

  // Renamed elsewhere, or deleted while open.
  useEffect(
    () =>
      api().on('conversations:changed', (change) => {
        if (change.id !== conversationId) return
        if (change.deleted) openConversation(null)
        else if (!running) void reload()
      }),
    [conversationId, running, openConversation, reload],
  )

  /**
   * Sends `text`. From the composer (`fromDraft`), the draft is emptied and given back if the
   * send fails; a Retry sends a failed turn's prompt again and leaves the draft alone (the
   * person may have begun their next message).
   */
  const send = useCallback(
    async (text: string, fromDraft = false, retryOf?: string) => {
      setSendError(null)
      if (fromDraft) setDraft('')
      stopWanted.current = false
      const clientId = newClientId()
      setPending({ text, conversationId, clientId })
      // A Retry's prompt stands in for the failed one (main stores it in its place).
      setRetried(retryOf ? { turnId: retryOf, text } : null)
      try {
        const started = await unwrap(
          api().chat.send({ conversationId, text, clientId, ...(retryOf && { retryOf }) }),
        )
        if (conversationId === null) openConversation(started.conversationId)
        setPending(null)
      } catch (error) {
        setPending(null)
        setRetried(null)
        if (fromDraft) setDraft(text)
        setSendError(
          error instanceof ApiError
            ? { code: error.code, message: error.message }
            : { code: 'internal', message: errorMessage(error) },
        )
      }
    },
    [conversationId, openConversation],
  )

  const stop = useCallback(() => {
    const id = conversationId ?? adoptedId
    if (id) void api().chat.stop({ conversationId: id })
    else stopWanted.current = true
  }, [conversationId, adoptedId])

  // Escape stops the running turn (dialogs handle their own Escape first), unless a field
  // outside the chat takes it: a search box clears with Escape, an editor keeps its text.
  useEffect(() => {
    if (!running) return
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || event.defaultPrevented) return
      if (document.querySelector('dialog[open]')) return
      if (!escapeStopsReply(event.target)) return
      event.preventDefault()
      stop()
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [running, stop])

  const conversation =
    state.status === 'ready' && state.conversation.id === conversationId ? state.conversation : null
  const showLive = tracked !== undefined && !tracked.settled
  const turns = useMemo<ReadonlyArray<TranscriptTurn>>(() => {
    const messages = conversation
      ? showLive
        ? storedBeforeTurn(conversation.messages, tracked.turnId)
        : conversation.messages
      : []
    const replaced = retried && retriedPrompt(messages, retried.turnId, retried.text)
    const stored = conversation
      ? turnsFromStored(
          replaced === null ? messages : messages.slice(0, replaced),
          conversation.toolCommits,
        )
      : []
    const all = showLive ? [...stored, turnFromLive(tracked)] : [...stored]
    if (waiting) {
      all.push({ key: 'pending', userText: waiting.text, items: [], usage: null, stopReason: null })
    }
    return all
  }, [conversation, showLive, tracked, waiting, retried])

  const turnError = tracked?.error && !tracked.errorDismissed ? tracked.error : null
  // The error the last turn ended with, as stored (after a restart, or in a window that did not
  // see it end); the live one speaks for its own turn. Gone with the next message.
  const [dismissedStored, setDismissedStored] = useState<string | null>(null)
  const lastError = conversation?.lastError
  const storedError =
    lastError &&
    !showLive &&
    !waiting &&
    tracked?.turnId !== lastError.turnId &&
    dismissedStored !== lastError.turnId
      ? lastError
      : null
  const error = sendError ?? turnError ?? storedError
  // What Retry sends again: the prompt of the turn that failed.
  const retryTurn = storedError && error === storedError ? storedError.turnId : tracked?.turnId
  const retryText =
    storedError && error === storedError && conversation
      ? promptOf(conversation, storedError.turnId)
      : tracked?.userText
  // The last turn began and never ended: Cairn closed (killed, crashed) while Claude replied.
  // Main tells it only for a turn no Cairn runs now.
  const openTurn = conversation?.openTurn
  const cutOff =
    openTurn !== undefined &&
    !showLive &&
    !waiting &&
    !error &&
    tracked?.turnId !== openTurn &&
    dismissedStored !== openTurn
      ? openTurn
      : null
  const cutOffPrompt = cutOff && conversation ? promptOf(conversation, cutOff) : undefined
  /**
   * Hides what was said of turn `turnId` (its error, or that it was cut off) here at once, and
   * has main forget it, so a reload or a restart does not tell it again.
   */
  const forget = (turnId: string) => {
    setDismissedStored(turnId)
    if (!conversationId) return
    void unwrap(api().chat.dismiss({ conversationId, turnId })).catch((failure: unknown) =>
      setDeleteError(`Could not forget this in the conversation. ${errorMessage(failure)}`),
    )
  }
  const loading = conversationId !== null && state.status === 'loading' && !showLive && !waiting
  const needsKey = settings.state.status === 'ready' && !settings.state.settings.hasApiKey

  const unreadable = state.status === 'unreadable' ? state : null
  const stored = conversation?.title ?? unreadable?.summary?.title
  const title =
    stored !== undefined
      ? shownTitle(stored)
      : unreadable
        ? 'Unreadable conversation'
        : conversationId
          ? ''
          : 'New chat'
  const changedOutside = conversation?.changedOutside ?? null
  // The notice once dismissed stays away until another change is found (its time differs).
  const [dismissedOutside, setDismissedOutside] = useState<number | null>(null)
  const [deleting, setDeleting] = useState(false)
  const [deleteError, setDeleteError] = useState<string | null>(null)
  const deleteUnreadable = async () => {
    if (!conversationId) return
    try {
      await unwrap(api().conversations.delete({ id: conversationId }))
      setDeleteError(null)
      openConversation(null)
    } catch (error) {
      setDeleteError(`Could not delete the conversation. ${errorMessage(error)}`)
    } finally {
      setDeleting(false)
    }
  }

  return (
    <div className="chat-pane">
      <header className="chat-header">
        <h1 className="chat-title" title={title} dir="auto">
          {title}
        </h1>
        {conversationId && (
          <button
            type="button"
            className="button button-ghost button-small"
            onClick={() => showHistory({ conversationId })}
            title="Show the memory changes made in this chat"
          >
            <icons.history />
            Memory changes
          </button>
        )}
      </header>

      <Transcript
        conversationId={conversationId}
        turns={turns}
        running={running}
        reveal={replyTarget?.conversationId === conversationId ? replyTarget : null}
      >
        {live.catchUpError && (
          <Banner
            tone="error"
            title="Could not tell whether Claude is answering"
            onRetry={live.retryCatchUp}
          >
            {live.catchUpError} A reply that was running when this window opened may not show until
            it ends.
          </Banner>
        )}
        {state.status === 'error' && (
          <Banner
            tone="error"
            title="Could not open this conversation"
            onRetry={() => void reload()}
          >
            {state.message}
          </Banner>
        )}
        {unreadable && (
          <Banner
            tone="warning"
            title="This conversation could not be read"
            actions={
              <>
                <button
                  type="button"
                  className="button button-small button-danger"
                  onClick={() => setDeleting(true)}
                >
                  <icons.trash />
                  Delete conversation
                </button>
                <OpenDataFolderButton
                  title={`Its file is conversations/${conversationId}.json in the data folder`}
                  onError={setDeleteError}
                />
              </>
            }
          >
            {unreadable.message} The memory changes made in it are still in History (Memory changes,
            above).
          </Banner>
        )}
        {changedOutside && changedOutside.at !== dismissedOutside && (
          <Banner
            tone="warning"
            title={
              changedOutside.how === 'written-back'
                ? 'Removed by another program'
                : changedOutside.how === 'damaged'
                  ? 'Damaged by another program'
                  : 'Changed by another program'
            }
            onDismiss={() => setDismissedOutside(changedOutside.at)}
            actions={
              changedOutside.keptAs && (
                <OpenDataFolderButton
                  title={`The copy is conversations/${changedOutside.keptAs} in the data folder`}
                  onError={setDeleteError}
                />
              )
            }
          >
            {outsideChangeText(changedOutside)}
          </Banner>
        )}
        {deleteError && (
          <Banner tone="error" title="Something went wrong" onDismiss={() => setDeleteError(null)}>
            {deleteError}
          </Banner>
        )}
        {deleting && unreadable && (
          <DeleteConversationDialog
            conversation={{ title, unreadable: true }}
            onConfirm={deleteUnreadable}
            onCancel={() => setDeleting(false)}
          />
        )}
        {state.status === 'missing' && (
          <Banner
            tone="warning"
            title="This conversation no longer exists"
            actions={
              <button
                type="button"
                className="button button-small"
                onClick={() => openConversation(null)}
              >
                Start a new chat
              </button>
            }
          >
            It may have been deleted. Your memory files are not affected.
          </Banner>
        )}
        <Loading active={loading} label="Loading conversation…" />
        {!conversationId && !waiting && !adoptedId && (
          <Welcome
            needsKey={needsKey}
            onAddKey={() => openSettings(true)}
            onSuggest={(text) => {
              setDraft(text)
              focusComposer()
            }}
          />
        )}
        {conversation && conversation.messages.length === 0 && !showLive && !waiting && (
          <p className="transcript-empty">This conversation has no messages yet.</p>
        )}
        {tracked?.settled && tracked.stopped && !running && (
          <p className="reply-note">You stopped the last reply. Send a message to continue.</p>
        )}
        {cutOff && (
          <Banner
            tone="warning"
            title="Reply cut off"
            onDismiss={() => forget(cutOff)}
            actions={
              cutOffPrompt &&
              !running && (
                <button
                  type="button"
                  className="button button-small"
                  onClick={() => void send(cutOffPrompt, false, cutOff)}
                >
                  Retry
                </button>
              )
            }
          >
            This reply was cut off when Cairn closed. Anything Claude saved to memory before then is
            kept; Retry sends your message again.
          </Banner>
        )}
        {error && (
          <Banner
            tone="error"
            title={errorTitle(error.code)}
            onDismiss={() => {
              setSendError(null)
              if (conversationId) dismissError(conversationId)
              // The turn's error is stored with its conversation (unless it could not be).
              if (error === storedError) forget(storedError.turnId)
              else if (error === turnError && tracked) forget(tracked.turnId)
            }}
            actions={
              isSettingsProblem(error.code) ? (
                <button
                  type="button"
                  className="button button-small button-primary"
                  onClick={() => openSettings(true)}
                >
                  <icons.gear />
                  Open Settings
                </button>
              ) : (
                retryText &&
                !running && (
                  <button
                    type="button"
                    className="button button-small"
                    onClick={() => void send(retryText, false, retryTurn)}
                  >
                    Retry
                  </button>
                )
              )
            }
          >
            {error.message}
          </Banner>
        )}
      </Transcript>

      {!unreadable && (
        <Composer
          value={draft}
          onChange={setDraft}
          onSend={(text) => void send(text, true)}
          onStop={stop}
          running={running}
          focusRequest={composerFocusRequest}
        />
      )}
    </div>
  )
}

/** How close to the end (px) still counts as reading the latest text. */
const PIN_SLACK = 80

/**
 * The scrolling transcript; it follows new text unless the person scrolled up to read. Then a
 * "Jump to latest" button brings them back; sending a message or opening another conversation
 * follows again.
 */
function Transcript({
  conversationId,
  turns,
  running,
  reveal,
  children,
}: {
  readonly conversationId: string | null
  readonly turns: ReadonlyArray<TranscriptTurn>
  readonly running: boolean
  /** A tool card to bring into view (the reply that wrote a line), once it is drawn. */
  readonly reveal: { readonly toolUseId: string; readonly token: number } | null
  readonly children: ReactNode
}) {
  const scroller = useRef<HTMLDivElement>(null)
  const pinned = useRef(true)
  /** True while a smooth jump to the end runs: its scroll events are not the person's. */
  const jumping = useRef(false)
  const [awayFromEnd, setAwayFromEnd] = useState(false)
  const lastKey = turns.at(-1)?.key
  // One more turn (the person just sent) or another conversation. Not the turn's key: that
  // changes from pending to live to stored while the same turn runs and settles.
  const follow = `${conversationId ?? 'new'}:${turns.length}`
  const [followed, setFollowed] = useState(follow)
  if (followed !== follow) {
    setFollowed(follow)
    setAwayFromEnd(false)
  }
  // Show the new end. Runs before the effect below, which then scrolls.
  useLayoutEffect(() => {
    pinned.current = true
    jumping.current = false
  }, [follow])
  useLayoutEffect(() => {
    const element = scroller.current
    if (element && pinned.current) element.scrollTop = element.scrollHeight
  })
  // Scroll to the card someone asked for, once its conversation is drawn; then stay there
  // (the scroll itself tells the transcript it is away from the end).
  const revealedToken = useRef<number | null>(null)
  useEffect(() => {
    if (!reveal || revealedToken.current === reveal.token) return
    const card = document.getElementById(toolCardId(reveal.toolUseId))
    if (!card) return
    revealedToken.current = reveal.token
    pinned.current = false
    jumping.current = false
    card.scrollIntoView({ block: 'center' })
  }, [reveal, turns])
  const highlighted = reveal?.toolUseId ?? null

  const jumpToLatest = () => {
    const element = scroller.current
    if (!element) return
    pinned.current = true
    jumping.current = true
    setAwayFromEnd(false)
    // Asked for less motion, the transcript jumps: a long one would otherwise glide for a while.
    const still = window.matchMedia('(prefers-reduced-motion: reduce)').matches
    element.scrollTo({ top: element.scrollHeight, behavior: still ? 'instant' : 'smooth' })
  }
  return (
    <div className="transcript-frame">
      <div
        className="transcript"
        ref={scroller}
        onScroll={(event) => {
          const element = event.currentTarget
          const atEnd = element.scrollHeight - element.scrollTop - element.clientHeight < PIN_SLACK
          if (jumping.current) {
            if (atEnd) jumping.current = false
            return
          }
          pinned.current = atEnd
          setAwayFromEnd(!atEnd)
        }}
        // The person takes over from a running jump.
        onWheel={() => (jumping.current = false)}
        onPointerDown={() => (jumping.current = false)}
        onKeyDown={() => (jumping.current = false)}
      >
        <div className="transcript-inner" role="log" aria-label="Transcript">
          {turns.map((turn) => (
            <TurnView
              key={turn.key}
              turn={turn}
              running={running && turn.key === lastKey}
              conversationId={conversationId}
              revealed={highlighted}
            />
          ))}
          {children}
        </div>
      </div>
      {/* Not over the welcome screen: with no turns there is no latest to jump to. */}
      {awayFromEnd && turns.length > 0 && (
        <button type="button" className="jump-to-latest" onClick={jumpToLatest}>
          <icons.arrowDown />
          {running ? 'Claude is replying — jump to latest' : 'Jump to latest'}
        </button>
      )}
    </div>
  )
}

function Welcome({
  needsKey,
  onAddKey,
  onSuggest,
}: {
  readonly needsKey: boolean
  readonly onAddKey: () => void
  readonly onSuggest: (text: string) => void
}) {
  if (needsKey) {
    return (
      <section className="welcome" aria-label="Welcome">
        <div className="welcome-mark" aria-hidden="true">
          <icons.key width={22} height={22} />
        </div>
        <h2>Welcome to Cairn</h2>
        <p>
          Chat with Claude while it keeps a long-term memory in plain files on this computer. Every
          change to that memory is saved as a version you can compare and undo.
        </p>
        <p>To begin, add your Anthropic API key. It is stored encrypted and never shown again.</p>
        <button type="button" className="button button-primary" onClick={onAddKey}>
          Add your API key
        </button>
      </section>
    )
  }
  return (
    <section className="welcome" aria-label="Welcome">
      <div className="welcome-mark" aria-hidden="true">
        <CairnMark size={26} />
      </div>
      <h2>What’s on your mind?</h2>
      <p>
        Claude reads its memory before answering and writes down what matters. You can watch every
        change in the Memory and History panes.
      </p>
      <div className="suggestions" role="group" aria-label="Suggestions">
        {suggestions.map((text) => (
          <button key={text} type="button" className="suggestion" onClick={() => onSuggest(text)}>
            {text}
          </button>
        ))}
      </div>
    </section>
  )
}

/**
 * True when an Escape from `target` is meant for the chat: it comes from inside the chat pane
 * (composer, transcript), from nowhere in particular (the page itself), or from a control
 * outside the chat that has no use for Escape. A field elsewhere (the memory search, the
 * memory editor, History's filters) uses Escape itself, and must not stop Claude's reply.
 */
function escapeStopsReply(target: EventTarget | null): boolean {
  if (!(target instanceof Element) || target === document.body) return true
  if (target.closest('main[aria-label="Chat"]')) return true
  return !target.closest('input, textarea, select, [contenteditable="true"], [role="tree"]')
}

/** The text the person typed to start turn `turnId` (undefined if it is not stored). */
function promptOf(conversation: Conversation, turnId: string): string | undefined {
  const prompt = conversation.messages.find(
    (message) => message.role === 'user' && message.turnId === turnId,
  )
  return prompt && promptText(prompt) !== '' ? promptText(prompt) : undefined
}

/** What the banner says of another program's change to the conversation's file. */
function outsideChangeText(changed: NonNullable<Conversation['changedOutside']>): string {
  const kept = changed.keptAs ? `conversations/${changed.keptAs}` : null
  switch (changed.how) {
    case 'written-back':
      return 'This conversation’s file was removed or moved outside Cairn while Claude was replying, so Cairn wrote it back with the reply: nothing is lost. To remove the conversation, delete it here.'
    case 'damaged':
      return `This conversation’s file was changed outside Cairn and no longer reads as a conversation, so Cairn kept that file as ${kept ?? 'a copy'} in the data folder and saved its own copy in its place.`
    case 'kept-own':
      return `This conversation’s file was changed outside Cairn (another editor, a sync tool) while Cairn was saving it, so Cairn kept its own copy and went on with it. ${kept ? `The other version is kept as ${kept} in the data folder.` : 'The other version could not be kept aside.'}`
    case 'taken-up':
      return `This conversation’s file was changed outside Cairn (another editor, a sync tool), so Cairn now shows that version, and adds to it. ${kept ? `Cairn’s own copy holds what this version lacks, so it is kept as ${kept} in the data folder.` : 'Nothing Cairn had is missing from it.'}`
  }
}
