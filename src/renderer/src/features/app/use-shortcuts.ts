import { useCallback, useEffect } from 'react'
import type { AppCommand } from '../../../../shared/types'
import { api } from '../../lib/api'
import { useNavigation } from '../../lib/navigation'

/**
 * App-wide keys: Ctrl/Cmd+N new chat, Ctrl/Cmd+L focus the composer, Ctrl/Cmd+1/2 Memory or
 * History, Ctrl/Cmd+Shift+H the full history view, Ctrl/Cmd+, settings. (Escape stops a
 * turn in the chat pane, and leaves the full history view.)
 * The desktop app's menu offers the same commands with the same keys and sends them as
 * `app:command` events; both routes run the same code, so a key the menu also handles does
 * the same thing twice at most, never two different things.
 */
export function useShortcuts(): void {
  const { focusComposer } = useNavigation()
  const run = useAppCommand()
  useEffect(() => api().on('app:command', ({ command }) => run(command)), [run])
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!(event.ctrlKey || event.metaKey) || event.altKey) return
      const key = event.key.toLowerCase()
      const act = (action: () => void) => {
        event.preventDefault()
        action()
      }
      if (key === 'n' && !event.shiftKey) act(() => run('new-chat'))
      else if (key === 'l' && !event.shiftKey) act(focusComposer)
      else if (key === '1') act(() => run('show-memory'))
      else if (key === '2') act(() => run('show-history'))
      else if (key === ',') act(() => run('open-settings'))
      else if (key === 'h' && event.shiftKey) act(() => run('show-full-history'))
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [run, focusComposer])
}

/** Carries out one app command, whether it came from a key or from the application menu. */
function useAppCommand(): (command: AppCommand) => void {
  const { openConversation, focusComposer, showSidePane, openSettings, openFullHistory } =
    useNavigation()
  return useCallback(
    (command: AppCommand) => {
      switch (command) {
        case 'new-chat':
          openSettings(false)
          openConversation(null)
          focusComposer()
          return
        case 'open-settings':
          openSettings(true)
          return
        case 'show-memory':
          showSidePane('memory')
          return
        case 'show-history':
          showSidePane('history')
          return
        case 'show-full-history':
          openFullHistory()
          return
      }
    },
    [openConversation, focusComposer, showSidePane, openSettings, openFullHistory],
  )
}
