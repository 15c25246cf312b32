/** The app itself: what `app:info` tells, and what only the desktop shell can do. */
export { appHandlers, type AppHandlerOptions } from './handlers'
export { noHost, type FileFilter, type HostActions } from './host'
