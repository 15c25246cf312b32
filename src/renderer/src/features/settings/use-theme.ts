import { useEffect } from 'react'
import type { ThemeSetting } from '../../../../shared/types'

/**
 * Applies the theme setting: `light`/`dark` pin `<html data-theme>`, `system` removes it so
 * styles.css follows the OS (`prefers-color-scheme`).
 */
export function useTheme(theme: ThemeSetting | null): void {
  useEffect(() => {
    const root = document.documentElement
    if (theme === 'light' || theme === 'dark') root.dataset['theme'] = theme
    else delete root.dataset['theme']
  }, [theme])
}
