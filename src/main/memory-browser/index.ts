/**
 * The memory browser: the person's view of the live memory folder (tree, files, search) and
 * their own edits to it. It reads the folder directly and writes through the history.
 */
export { memoryBrowserHandlers } from './handlers'
export { deleteFile, renameFile, writeFile } from './edits'
export { listTree } from './browser'
export { sharedTreeReader, type TreeReader } from './tree-reader'
