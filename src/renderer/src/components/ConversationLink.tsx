import './components.css'
import type { MouseEvent } from 'react'

/**
 * A link to the conversation a change came from, by its title. Every link to a conversation
 * has the one conversation colour (`.conversation-link`), wherever it appears. Once the
 * conversation is `deleted` (`useConversationTitles`), words say so instead of a link that
 * would lead nowhere.
 */
export function ConversationLink(props: {
  readonly title: string
  readonly onOpen: () => void
  readonly prefix?: string
  readonly tabIndex?: number
  readonly deleted?: boolean
}) {
  if (props.deleted) {
    return (
      <span
        className="conversation-gone"
        title="The conversation this change came from has been deleted"
      >
        {props.prefix ? `${props.prefix}a deleted conversation` : 'Conversation deleted'}
      </span>
    )
  }
  return (
    <button
      type="button"
      className="conversation-link"
      tabIndex={props.tabIndex}
      title="Open the conversation this change came from"
      onClick={(event: MouseEvent) => {
        event.stopPropagation()
        props.onOpen()
      }}
    >
      {props.prefix}
      {/* Isolated: a right-to-left title neither reorders the prefix nor is reordered by it. */}
      <bdi>{props.title}</bdi>
    </button>
  )
}
