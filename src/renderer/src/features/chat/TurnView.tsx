import { memo } from 'react'
import { icons } from '../../components/icons'
import { Markdown } from './Markdown'
import { ToolCard } from './ToolCard'
import { formatTokens, type TranscriptTurn } from './transcript-model'

/** One exchange: the person's message, then Claude's text and memory commands, then usage. */
export const TurnView = memo(function TurnView({
  turn,
  running,
}: {
  readonly turn: TranscriptTurn
  /** The turn is still streaming. */
  readonly running: boolean
}) {
  const last = turn.items.at(-1)
  const waiting = running && (!last || (last.kind === 'tool' && last.result !== null))
  return (
    <div className="turn">
      {turn.userText && (
        <article className="msg-user" aria-label="Your message">
          <div className="msg-user-bubble">{turn.userText}</div>
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
                <Markdown key={item.key} text={item.text} />
              ) : (
                <ToolCard key={item.key} item={item} interrupted={!running} />
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
          </div>
        </article>
      )}
    </div>
  )
})
