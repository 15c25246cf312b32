import { CairnError } from '../lib/errors'

/** A kind of file offered in a save or open dialog. */
export interface FileFilter {
  readonly name: string
  readonly extensions: ReadonlyArray<string>
}

/** What only the desktop shell can do; the e2e harness passes a recorder instead. */
export interface HostActions {
  openPath(folder: string): Promise<void>
  openExternal(url: string): Promise<void>
  /**
   * Hears which memory file's editor holds unsaved text (null: none), so that closing or
   * reloading the window can name it when it asks first.
   */
  noteUnsaved(path: string | null): void
  /** Asks where to save a file (the system's save dialog); null when the person cancels. */
  chooseSavePath(options: {
    readonly title: string
    readonly defaultName: string
    readonly filters: ReadonlyArray<FileFilter>
  }): Promise<string | null>
  /** Asks for a file or folder to open; null when the person cancels. */
  chooseOpenPath(options: {
    readonly title: string
    readonly kind: 'file' | 'folder'
    readonly filters?: ReadonlyArray<FileFilter>
  }): Promise<string | null>
}

/** The host of a core without a desktop shell (tests, benchmarks): it opens nothing. */
export const noHost: HostActions = {
  async openPath() {
    throw new CairnError('unsupported', 'Opening folders is only available in the desktop app.')
  },
  async openExternal() {
    throw new CairnError('unsupported', 'Opening links is only available in the desktop app.')
  },
  // Without a window there is nothing to close: nothing to ask.
  noteUnsaved() {},
  async chooseSavePath() {
    throw new CairnError('unsupported', 'Saving files is only available in the desktop app.')
  },
  async chooseOpenPath() {
    throw new CairnError('unsupported', 'Choosing files is only available in the desktop app.')
  },
}
