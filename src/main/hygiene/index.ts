/**
 * Memory hygiene: the read log (when Claude last read and changed each file), the size meter,
 * expiring files, and proposals to expire files left unread.
 */
export { hygieneHandlers } from './handlers'
export {
  createHygieneService,
  EXPIRE_SUBJECT,
  MAX_PROPOSALS,
  type HygieneService,
  type HygieneServiceOptions,
} from './hygiene-service'
export { openReadLog, type ReadLog } from './read-log'
