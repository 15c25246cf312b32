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
  /** The least size the window may be made: the one asked for, or the display's if smaller. */
  readonly least: WindowSize
}

/**
 * Places the window from what was saved, on the display it mostly covered, fully inside that
 * display's work area (a resolution that shrank, or a window dragged half off-screen, comes
 * back into view). When that display is gone, the saved size is centred on the primary one.
 * Without a saved state the window opens at the default size, centred on the primary display.
 * Its least size is `least`, or the work area where that is smaller, and the window is never
 * placed smaller than its least size (a window saved on a smaller screen grows back on a
 * larger one). A work area with no room (0×0, as a display being set up may report) is passed
 * over; with none left the window is placed as if on a screen of the default size.
 */
export function placeWindow(
  saved: WindowState | null,
  workAreas: ReadonlyArray<Rect>,
  primary: Rect,
  defaults: WindowSize,
  least: WindowSize,
): WindowPlacement {
  const usable = workAreas.map(whole).filter(hasRoom)
  const home = hasRoom(whole(primary))
    ? whole(primary)
    : (usable[0] ?? whole({ x: 0, y: 0, ...defaults }))
  const target = saved ? largestOverlap(saved.bounds, usable) : null
  const area = target ?? home
  const fitted = {
    width: Math.min(least.width, area.width),
    height: Math.min(least.height, area.height),
  }
  const wanted = saved ? whole(saved.bounds) : { x: 0, y: 0, ...defaults }
  const size = {
    width: Math.max(wanted.width, fitted.width),
    height: Math.max(wanted.height, fitted.height),
  }
  const bounds = target
    ? fitInside({ ...wanted, ...size }, target)
    : fitInside(centred(size, home), home)
  return { bounds, maximized: saved?.maximized ?? false, least: fitted }
}

/** Whole screen points: Electron takes only integers for a window's place and sizes. */
function whole(rect: Rect): Rect {
  return {
    x: Math.round(rect.x),
    y: Math.round(rect.y),
    width: Math.round(rect.width),
    height: Math.round(rect.height),
  }
}

function hasRoom(area: Rect): boolean {
  return area.width >= 1 && area.height >= 1
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
