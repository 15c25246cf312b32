import { memo } from 'react'
import { icons } from '../../components/icons'
import { displayPath } from '../../lib/format'
import { useNavigation } from '../../lib/navigation'
import { Markdown } from './Markdown'
import { ToolCard } from './ToolCard'
import { formatTokens, type TranscriptTurn } from './transcript-model'

/**
 * One exchange: the person's message, then Claude's text and memory commands, then usage
 * and "Memory at this reply" (memory as Claude could see it when the turn began).
 */
export const TurnView = memo(function TurnView({
  turn,
  running,
  conversationId,
  revealed,
}: {
  readonly turn: TranscriptTurn
  /** The turn is still streaming. */
  readonly running: boolean
  readonly conversationId: string | null
  /** The tool card someone asked to see (it is highlighted). */
  readonly revealed: string | null
}) {
  const last = turn.items.at(-1)
  const waiting = running && (!last || (last.kind === 'tool' && last.result !== null))
  return (
    <div className="turn">
      {turn.userText && (
        <article className="msg-user" aria-label="Your message">
          <div className="msg-user-bubble" dir="auto">
            {turn.userText}
          </div>
        </article>
      )}
      {(turn.items.length > 0 || running || turn.usage) && (
        <article className="reply" aria-label="Claude's reply" aria-busy={running || undefined}>
          <div className="reply-avatar" aria-hidden="true">
            <icons.spark width={16} height={16} />
          </div>
          <div className="reply-body">
            {turn.items.map((item) =>
              item.kind === 'text' ? (
                <Markdown key={item.key} text={item.text} streaming={running && item === last} />
              ) : (
                <ToolCard
                  key={item.key}
                  item={item}
                  interrupted={!running}
                  revealed={item.toolUseId === revealed}
                />
              ),
            )}
            {waiting && (
              <div className="thinking" role="status" aria-label="Claude is thinking">
                <span />
                <span />
                <span />
              </div>
            )}
            {turn.usage && !running && (
              <p
                className="usage"
                aria-label="Token usage"
                title={`Input ${formatTokens(turn.usage.inputTokens)}, output ${formatTokens(turn.usage.outputTokens)}, read from cache ${formatTokens(turn.usage.cacheReadInputTokens)}, written to cache ${formatTokens(turn.usage.cacheCreationInputTokens)}`}
              >
                {formatTokens(
                  turn.usage.inputTokens +
                    turn.usage.cacheReadInputTokens +
                    turn.usage.cacheCreationInputTokens,
                )}{' '}
                tokens in · {formatTokens(turn.usage.outputTokens)} out
                {turn.usage.cacheReadInputTokens > 0 &&
                  ` · ${formatTokens(turn.usage.cacheReadInputTokens)} from cache`}
              </p>
            )}
            {!running && turn.memoryAt !== undefined && (
              <MemoryAtReply
                at={turn.memoryAt}
                viewed={turn.viewed ?? []}
                conversationId={conversationId}
              />
            )}
          </div>
        </article>
      )}
    </div>
  )
})

/** "Memory at this reply": opens the memory browser, read-only, on what Claude could see. */
function MemoryAtReply(props: {
  readonly at: string | null
  readonly viewed: ReadonlyArray<string>
  readonly conversationId: string | null
}) {
  const { showMemoryAt } = useNavigation()
  const files = props.viewed.filter((path) => path !== '/memories')
  const viewedNote =
    files.length > 0
      ? `Claude read ${files.map(displayPath).join(', ')}`
      : props.viewed.length > 0
        ? 'Claude looked at the list of memory files'
        : null
  return (
    <p className="reply-memory">
      <button
        type="button"
        className="button button-small button-ghost"
        title="Memory as Claude could see it when this reply began (read-only)"
        onClick={() =>
          showMemoryAt({
            at: props.at,
            conversationId: props.conversationId,
            viewed: props.viewed,
          })
        }
      >
        <icons.eye width={14} height={14} />
        Memory at this reply
      </button>
      {viewedNote && <span className="reply-memory-note">{viewedNote}</span>}
    </p>
  )
}
