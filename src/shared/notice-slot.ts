import type { MemoryNotice } from './types'

/**
 * The place a memory notice holds (`too-large:/memories/big.bin`): the core keeps one notice of
 * each kind per file, and a window shows one, so a notice raised again for its file, or moved
 * onto it, takes the place of the one there. One rule for the core and the window.
 */
export function noticeSlot(notice: Pick<MemoryNotice, 'kind' | 'path'>): string {
  return `${notice.kind}:${notice.path}`
}
