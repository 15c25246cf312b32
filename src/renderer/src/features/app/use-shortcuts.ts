import { useEffect } from 'react'
import { useNavigation } from '../../lib/navigation'

/**
 * App-wide keys: Ctrl/Cmd+N new chat, Ctrl/Cmd+L focus the composer, Ctrl/Cmd+1/2 Memory or
 * History, Ctrl/Cmd+Shift+H the full history view (and back), Ctrl/Cmd+, settings. (Escape,
 * which stops a turn, belongs to the chat pane; in the full history view it goes back.)
 */
export function useShortcuts(): void {
  const {
    openConversation,
    focusComposer,
    showSidePane,
    openSettings,
    view,
    openFullHistory,
    closeFullHistory,
  } = useNavigation()
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!(event.ctrlKey || event.metaKey) || event.altKey) return
      const key = event.key.toLowerCase()
      const act = (action: () => void) => {
        event.preventDefault()
        action()
      }
      if (key === 'n' && !event.shiftKey) {
        act(() => {
          openSettings(false)
          openConversation(null)
          focusComposer()
        })
      } else if (key === 'l' && !event.shiftKey) act(focusComposer)
      else if (key === '1') act(() => showSidePane('memory'))
      else if (key === '2') act(() => showSidePane('history'))
      else if (key === ',') act(() => openSettings(true))
      else if (key === 'h' && event.shiftKey) {
        act(() => (view === 'history' ? closeFullHistory() : openFullHistory()))
      }
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [
    openConversation,
    focusComposer,
    showSidePane,
    openSettings,
    view,
    openFullHistory,
    closeFullHistory,
  ])
}
