/**
 * Where the core reports what went wrong without a caller to tell: a listener that threw, a
 * watcher commit that failed, a best-effort step that did not happen. Injected into every
 * service (`CoreOptions.logger`), so tests can read what was reported and the app can route it.
 */
export interface Logger {
  /** Something failed that the app recovers from (it is retried, or it only costs a nicety). */
  warn(message: string, error?: unknown): void
  /** Something failed that should not have (a bug, or a broken environment). */
  error(message: string, error?: unknown): void
}

/** Writes to the process's stderr, prefixed `[cairn]`: the default in the app. */
export const consoleLogger: Logger = {
  warn: (message, error) => console.warn(`[cairn] ${message}`, ...details(error)),
  error: (message, error) => console.error(`[cairn] ${message}`, ...details(error)),
}

/** Writes as `consoleLogger` does, to `out` (a `Console` over a log file, say). */
export function createConsoleLogger(out: Pick<Console, 'warn' | 'error'>): Logger {
  return {
    warn: (message, error) => out.warn(`[cairn] ${message}`, ...details(error)),
    error: (message, error) => out.error(`[cairn] ${message}`, ...details(error)),
  }
}

function details(error: unknown): unknown[] {
  return error === undefined ? [] : [error]
}

/** One report a `RecordingLogger` kept. */
export interface LogEntry {
  readonly level: 'warn' | 'error'
  readonly message: string
  readonly error: unknown
}

/** A logger that keeps its reports, for tests (and nothing else: it never forgets). */
export interface RecordingLogger extends Logger {
  readonly entries: ReadonlyArray<LogEntry>
}

export function createRecordingLogger(): RecordingLogger {
  const entries: LogEntry[] = []
  return {
    entries,
    warn: (message, error) => entries.push({ level: 'warn', message, error }),
    error: (message, error) => entries.push({ level: 'error', message, error }),
  }
}
