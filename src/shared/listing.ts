/**
 * The start of a directory listing's first line (the official memory tool's words), shared so
 * the chat can tell a listing from a file view by its stored tool_result alone: a `view_range`
 * counts entries in one and lines in the other. Pure, no imports.
 */
export const LISTING_HEADER_START = "Here're the files and directories up to 2 levels deep in "
