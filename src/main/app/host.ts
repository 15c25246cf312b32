import { CairnError } from '../lib/errors'

/** What only the desktop shell can do; the e2e harness passes a recorder instead. */
export interface HostActions {
  openPath(folder: string): Promise<void>
  openExternal(url: string): Promise<void>
}

/** The host of a core without a desktop shell (tests, benchmarks): it opens nothing. */
export const noHost: HostActions = {
  async openPath() {
    throw new CairnError('unsupported', 'Opening folders is only available in the desktop app.')
  },
  async openExternal() {
    throw new CairnError('unsupported', 'Opening links is only available in the desktop app.')
  },
}
