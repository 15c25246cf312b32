import { useEffect } from 'react'
import { api } from './api'

/**
 * While `path`'s editor holds unsaved text (null: none), closing or reloading the window asks
 * first instead of losing that text without a word: the page refuses its unload
 * (`beforeunload`), which a browser answers with its own question and Electron with the
 * shell's ("Discard unsaved changes to …?", which main words with the path told it here).
 */
export function useUnsavedGuard(path: string | null): void {
  useEffect(() => {
    if (path === null) return
    const refuse = (event: BeforeUnloadEvent) => {
      event.preventDefault()
      // Older engines ask only when a value is set.
      event.returnValue = ''
    }
    window.addEventListener('beforeunload', refuse)
    // Best effort: main words its question without the name when this did not arrive.
    void api()
      .app.unsaved({ path })
      .catch(() => undefined)
    return () => {
      window.removeEventListener('beforeunload', refuse)
      void api()
        .app.unsaved({ path: null })
        .catch(() => undefined)
    }
  }, [path])
}
