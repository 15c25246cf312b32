/**
 * What a failed sync tells people. Its own refusals (CairnErrors) pass as they are; an error
 * of the disk itself (full, failing, denied) met anywhere on the way — the lock file, a ref,
 * the sync state — is said in plain words, never as "something went wrong inside Cairn".
 */
import type { ApiErrorData } from '../../shared/types'
import { diskProblem, isDiskProblem } from '../lib/disk-errors'
import { CairnError, toApiError } from '../lib/errors'

export function syncFailure(error: unknown): ApiErrorData {
  if (!(error instanceof CairnError) && isDiskProblem(error)) {
    const problem = diskProblem(error)
    if (problem) {
      return {
        code: problem.code,
        message: `The sync did not finish because ${problem.reason}. Nothing was lost; sync again once that is fixed.`,
      }
    }
  }
  return toApiError(error)
}
