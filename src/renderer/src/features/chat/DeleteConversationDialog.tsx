import type { ConversationSummary } from '../../../../shared/types'
import { ConfirmDialog } from '../../components/ConfirmDialog'
import { shownTitle } from '../../lib/shown-title'

/**
 * Asks before a conversation is deleted. An unreadable one is not destroyed: main moves its
 * file into `conversations/cairn-damaged/` in the data folder, and the question says so.
 */
export function DeleteConversationDialog(props: {
  readonly conversation: Pick<ConversationSummary, 'title' | 'unreadable'>
  readonly onConfirm: () => Promise<void> | void
  readonly onCancel: () => void
}) {
  const { conversation } = props
  const title = shownTitle(conversation.title)
  return (
    <ConfirmDialog
      title="Delete this conversation?"
      confirmLabel="Delete conversation"
      tone="danger"
      initialFocus="cancel"
      onConfirm={props.onConfirm}
      onCancel={props.onCancel}
    >
      {conversation.unreadable ? (
        <p>
          “<bdi>{title}</bdi>” could not be read, so it will be removed from the list. Its file is
          kept, untouched, in the folder <code>conversations/cairn-damaged</code> of Cairn’s data
          folder, in case it can be repaired.
        </p>
      ) : (
        <p>
          “<bdi>{title}</bdi>” and its messages will be removed from Cairn. This cannot be undone.
          Copies of it that Cairn kept aside when another program changed its file (in the folder{' '}
          <code>conversations/cairn-replaced</code>) are not deleted: remove those by hand.
        </p>
      )}
      <p>Memory files Claude wrote in it, and their history, stay as they are.</p>
    </ConfirmDialog>
  )
}
