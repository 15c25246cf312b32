import { escapeInvisible } from '../lib/text'

/** The button of `unsavedChangesDialog` that lets the window close or reload anyway. */
export const DISCARD_RESPONSE = 1

/**
 * The question asked when the window is about to close or reload while the memory editor
 * holds unsaved text (the page refused its unload: Electron's `will-prevent-unload`). Keep
 * editing is the default and what Escape answers, so nothing typed is lost by a stray key.
 * `path` is the file being edited, as the page named it (null: not named).
 */
export function unsavedChangesDialog(path: string | null) {
  const what = path === null ? 'the open memory file' : escapeInvisible(shortened(path))
  return {
    type: 'question' as const,
    title: 'Unsaved changes',
    message: `Discard unsaved changes to ${what}?`,
    detail: 'The text you typed in the editor has not been saved. Discarded, it is gone.',
    buttons: ['Keep editing', 'Discard'],
    defaultId: 0,
    cancelId: 0,
    noLink: true,
  }
}

// A path as long as the contract allows would make the dialog as tall as the screen.
function shortened(path: string): string {
  return path.length <= 200 ? path : `${path.slice(0, 100)}…${path.slice(-99)}`
}
