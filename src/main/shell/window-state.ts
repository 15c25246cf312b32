import { renameSync, writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'

/** A rectangle in screen coordinates (Electron's `Rectangle`). */
export interface Rect {
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}

/** What is remembered of the window between starts (`window-state.json`). */
export interface WindowState {
  /** The window's normal (not maximized) bounds. */
  readonly bounds: Rect
  readonly maximized: boolean
}

export interface WindowSize {
  readonly width: number
  readonly height: number
}

/** Where the window opens: its bounds and whether to maximize it. */
export interface WindowPlacement {
  readonly bounds: Rect
  readonly maximized: boolean
}

/**
 * Places the window from what was saved, on the display it mostly covered, fully inside that
 * display's work area (a resolution that shrank, or a window dragged half off-screen, comes
 * back into view). When that display is gone, the saved size is centred on the primary one.
 * Without a saved state the window opens at the default size, centred on the primary display.
 */
export function placeWindow(
  saved: WindowState | null,
  workAreas: ReadonlyArray<Rect>,
  primary: Rect,
  defaults: WindowSize,
): WindowPlacement {
  if (!saved) return { bounds: fitInside(centred(defaults, primary), primary), maximized: false }
  const target = largestOverlap(saved.bounds, workAreas)
  const bounds = target
    ? fitInside(saved.bounds, target)
    : fitInside(centred(saved.bounds, primary), primary)
  return { bounds, maximized: saved.maximized }
}

function largestOverlap(rect: Rect, areas: ReadonlyArray<Rect>): Rect | null {
  let best: Rect | null = null
  let bestArea = 0
  for (const area of areas) {
    const width = Math.min(rect.x + rect.width, area.x + area.width) - Math.max(rect.x, area.x)
    const height = Math.min(rect.y + rect.height, area.y + area.height) - Math.max(rect.y, area.y)
    if (width > 0 && height > 0 && width * height > bestArea) {
      best = area
      bestArea = width * height
    }
  }
  return best
}

function centred(size: WindowSize, area: Rect): Rect {
  return {
    x: Math.round(area.x + (area.width - size.width) / 2),
    y: Math.round(area.y + (area.height - size.height) / 2),
    width: size.width,
    height: size.height,
  }
}

function fitInside(rect: Rect, area: Rect): Rect {
  const width = Math.min(rect.width, area.width)
  const height = Math.min(rect.height, area.height)
  return {
    x: Math.min(Math.max(rect.x, area.x), area.x + area.width - width),
    y: Math.min(Math.max(rect.y, area.y), area.y + area.height - height),
    width,
    height,
  }
}

/** Reads the saved state; anything missing, unreadable or malformed means "none". */
export async function readWindowState(file: string): Promise<WindowState | null> {
  try {
    return parseWindowState(JSON.parse(await readFile(file, 'utf8')))
  } catch {
    return null
  }
}

function parseWindowState(value: unknown): WindowState | null {
  if (typeof value !== 'object' || value === null) return null
  const { bounds, maximized } = value as { bounds?: unknown; maximized?: unknown }
  if (typeof bounds !== 'object' || bounds === null) return null
  const { x, y, width, height } = bounds as Record<string, unknown>
  const numbers = [x, y, width, height]
  if (!numbers.every((n) => typeof n === 'number' && Number.isFinite(n))) return null
  const rect = { x, y, width, height } as Rect
  if (rect.width < 1 || rect.height < 1) return null
  return { bounds: rect, maximized: maximized === true }
}

/**
 * Saves the state while the window closes. Synchronous on purpose: the process may end right
 * after the window's `close` event, and the file is a few dozen bytes. Written beside and
 * renamed, so a crash leaves the old state or the new one, never half of one.
 */
export function saveWindowStateSync(file: string, state: WindowState): void {
  const temp = `${file}.tmp`
  writeFileSync(temp, JSON.stringify(state) + '\n')
  renameSync(temp, file)
}
