/**
 * The desktop shell's plain helpers: what `src/main/index.ts` needs beyond Electron itself,
 * written as functions of values so they are tested in Node. No channels, no Electron import.
 */
export {
  APP_HOST,
  APP_PAGE_URL,
  APP_SCHEME,
  createAppProtocolHandler,
  resolveAppFile,
} from './app-protocol'
export { appResponseHeaders, contentSecurityPolicy } from './content-security'
export {
  buildApplicationMenu,
  buildContextMenu,
  type ContextMenuFacts,
  type MenuCommand,
  type MenuItemSpec,
} from './menu'
export { isAppPage, isHttpsLink } from './navigation'
export { describeStartupFailure, StartupError, startupFailureDialog } from './startup-failure'
export {
  placeWindow,
  readWindowState,
  saveWindowStateSync,
  type Rect,
  type WindowState,
} from './window-state'
export { DISCARD_RESPONSE, unsavedChangesDialog } from './unsaved-changes'
export { debuggingRefusal, debuggingSwitches } from './debug-switches'
