import { useEffect } from 'react'
import type { ThemeSetting } from '../../../../shared/types'

/** The themes Settings can pin; `system` pins none. */
type PinnedTheme = 'light' | 'dark'

function pin(theme: PinnedTheme | null): void {
  const root = document.documentElement
  if (theme) root.dataset['theme'] = theme
  else delete root.dataset['theme']
}

/**
 * Ends at once the colour transitions a theme switch started (a button's hover fade, 120 ms):
 * the whole window changes theme in one frame, never with some controls half-way between the
 * two (as a screenshot taken then showed). `getAnimations` brings the styles up to date first,
 * so the transitions the switch starts exist to be ended. A hover afterwards fades as before.
 */
function endThemeTransitions(): void {
  for (const animation of document.getAnimations()) {
    if (!(animation instanceof CSSTransition)) continue
    try {
      animation.finish()
    } catch {
      // One that cannot be finished (paused with no end) is left to run.
    }
  }
}

/** A switch of the system's theme (which Settings' `system` follows) runs no transitions either. */
export function watchSystemTheme(): void {
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', endThemeTransitions)
}

/**
 * Pins the theme the shell read from the settings before the memory opened (`?theme=light` or
 * `?theme=dark` in the page's address), before anything is drawn: the opening screen comes
 * before the settings can be asked for, and must not show the system's theme meanwhile.
 */
export function pinThemeFromAddress(): void {
  const theme = new URLSearchParams(window.location.search).get('theme')
  if (theme === 'light' || theme === 'dark') pin(theme)
}

/**
 * Applies the theme setting: `light`/`dark` pin `<html data-theme>`, `system` removes it so
 * styles.css follows the OS (`prefers-color-scheme`). Null (the settings not read yet) keeps
 * what the address pinned. The address follows the setting, so a reload starts in it too.
 */
export function useTheme(theme: ThemeSetting | null): void {
  useEffect(() => {
    if (theme === null) return
    const pinned = theme === 'system' ? null : theme
    pin(pinned)
    endThemeTransitions()
    const url = new URL(window.location.href)
    if (pinned) url.searchParams.set('theme', pinned)
    else url.searchParams.delete('theme')
    if (url.href !== window.location.href) window.history.replaceState(null, '', url)
  }, [theme])
}
