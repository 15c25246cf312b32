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

/**
 * What a person can do about a sync that keeps failing with `code`, in plain words; `retried`:
 * whether Cairn keeps retrying by itself (failures the network or a server may mend);
 * `slowed`: downloads kept breaking, so it retries only about hourly.
 */
export function repeatedAdvice(code: string, retried: boolean, slowed = false): string {
  const retry = slowed
    ? 'Each try downloads the memory again, so Cairn now tries by itself only about once an hour (Sync now and changes to memory still try at once), and this goes once a sync completes; memory on this machine is safe meanwhile.'
    : retried
      ? 'Cairn keeps trying by itself, at least every 10 minutes, and this goes once a sync completes; memory on this machine is safe meanwhile.'
      : 'Cairn tries again when memory changes, at each scheduled sync and on Sync now; memory on this machine is safe meanwhile.'
  return `${ADVICE[code] ?? 'If it goes on after Cairn is restarted, the sync settings or the server need a look.'} ${retry}`
}

const ADVICE: Readonly<Record<string, string>> = {
  'sync-interrupted':
    'Something on the way to the remote keeps cutting or damaging what the sync sends or receives: often a proxy, VPN, antivirus or firewall that inspects traffic, or an unstable connection. Try another network, or ask whoever runs that network or the server to let git’s traffic through unchanged.',
  'sync-unreachable':
    'If the server is your own, check that it is running; if this network reaches it only through a VPN or a proxy, check that too.',
  'sync-rejected':
    'Something keeps changing the remote’s memory during every sync (a bot or a hook that commits on each push?). Ask whoever runs the server to stop it for this repository.',
  'sync-auth':
    'Enter a new token below: the saved one may have expired or lost access to this repository.',
  'sync-redirected':
    'If you trust the address the remote sends Cairn to, enter it as the remote’s address.',
  'sync-not-a-repository':
    'Check the address, and sign in to any network page (a hotel’s or an office’s Wi-Fi) in a browser.',
  'sync-push-refused':
    'This is settled on the server: ask whoever runs it, or change what its rules refuse.',
  'sync-unsafe-content': 'Remove those files from the remote (with git on another machine).',
  'disk-full': 'Free some space on this machine’s disk.',
}
