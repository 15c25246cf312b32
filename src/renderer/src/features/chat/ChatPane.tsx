/** The open conversation: transcript, tool cards and the composer. */
export function ChatPane() {
  return (
    <div className="empty-state">
      <h1>Chat with Claude</h1>
      <p>Claude keeps what matters in memory files you can read, compare and undo.</p>
    </div>
  )
}
