import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { placeWindow, readWindowState, saveWindowStateSync, type Rect } from './window-state'

const laptop: Rect = { x: 0, y: 0, width: 1440, height: 860 }
const monitor: Rect = { x: 1440, y: -200, width: 2560, height: 1400 }
const size = { width: 1280, height: 820 }
const least = { width: 880, height: 560 }

describe('placeWindow', () => {
  it('centres the default size on the primary display when nothing was saved', () => {
    expect(placeWindow(null, [laptop], laptop, size, least)).toEqual({
      bounds: { x: 80, y: 20, width: 1280, height: 820 },
      maximized: false,
      least,
    })
  })

  it('shrinks the default size to a small screen', () => {
    const small = { x: 0, y: 0, width: 1024, height: 600 }
    expect(placeWindow(null, [small], small, size, least).bounds).toEqual(small)
  })

  it('keeps a saved window that is fully visible where it was', () => {
    const bounds = { x: 1600, y: 0, width: 1500, height: 900 }
    expect(
      placeWindow({ bounds, maximized: false }, [laptop, monitor], laptop, size, least),
    ).toEqual({
      bounds,
      maximized: false,
      least,
    })
  })

  it('pulls a window hanging off an edge fully onto the display it mostly covers', () => {
    const bounds = { x: 3500, y: 900, width: 1200, height: 800 }
    expect(
      placeWindow({ bounds, maximized: true }, [laptop, monitor], laptop, size, least),
    ).toEqual({
      bounds: { x: 2800, y: 400, width: 1200, height: 800 },
      maximized: true,
      least,
    })
  })

  it('centres the saved size on the primary display when its display is gone', () => {
    const bounds = { x: 2000, y: 100, width: 1000, height: 700 }
    expect(placeWindow({ bounds, maximized: false }, [laptop], laptop, size, least).bounds).toEqual(
      {
        x: 220,
        y: 80,
        width: 1000,
        height: 700,
      },
    )
  })

  it('fits a saved size larger than the display', () => {
    const bounds = { x: 0, y: 0, width: 3000, height: 2000 }
    expect(placeWindow({ bounds, maximized: false }, [laptop], laptop, size, least).bounds).toEqual(
      laptop,
    )
  })

  it('grows a window saved on a smaller screen back to its least size on a larger one', () => {
    // Saved at 780×400 on a 1366×768 screen at 175 %; now only the laptop is there.
    const bounds = { x: 0, y: 0, width: 780, height: 400 }
    expect(placeWindow({ bounds, maximized: false }, [laptop], laptop, size, least)).toEqual({
      bounds: { x: 0, y: 0, width: 880, height: 560 },
      maximized: false,
      least,
    })
    // Where it was, on a display still there, grown from its corner and kept inside.
    const corner = { x: 3600, y: 900, width: 300, height: 200 }
    expect(
      placeWindow({ bounds: corner, maximized: false }, [laptop, monitor], laptop, size, least),
    ).toEqual({ bounds: { x: 3120, y: 640, width: 880, height: 560 }, maximized: false, least })
  })

  it('lets the least size shrink only to the display the window is on', () => {
    const small = { x: 1440, y: 0, width: 780, height: 400 }
    const bounds = { x: 1500, y: 10, width: 700, height: 300 }
    expect(placeWindow({ bounds, maximized: false }, [laptop, small], laptop, size, least)).toEqual(
      {
        bounds: { x: 1440, y: 0, width: 780, height: 400 },
        maximized: false,
        least: { width: 780, height: 400 },
      },
    )
  })

  it('passes over a display with no room, and places the window in whole points', () => {
    const none = { x: 0, y: 0, width: 0, height: 0 }
    const negative = { x: 0, y: 0, width: -1440, height: 860 }
    for (const primary of [none, negative]) {
      expect(placeWindow(null, [primary, monitor], primary, size, least)).toEqual({
        bounds: { x: 2080, y: 90, width: 1280, height: 820 },
        maximized: false,
        least,
      })
      // No display with room at all: placed as on a screen of the default size.
      const alone = placeWindow(null, [primary], primary, size, least)
      expect(alone).toEqual({ bounds: { x: 0, y: 0, ...size }, maximized: false, least })
    }
    const fractions = { x: 10.4, y: 20.6, width: 1000.5, height: 700.2 }
    expect(
      placeWindow({ bounds: fractions, maximized: false }, [laptop], laptop, size, least).bounds,
    ).toEqual({ x: 10, y: 21, width: 1001, height: 700 })
  })
})

describe('the saved window state', () => {
  let dir = ''
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true, maxRetries: 10 })
  })

  it('round-trips through the file and ignores anything malformed', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'cairn-window-'))
    const file = path.join(dir, 'window-state.json')
    expect(await readWindowState(file)).toBeNull()
    const state = { bounds: { x: -10, y: 20, width: 900, height: 700 }, maximized: true }
    saveWindowStateSync(file, state)
    expect(await readWindowState(file)).toEqual(state)
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(state)
    for (const bad of [
      '{',
      'null',
      '{"bounds":{"x":0,"y":0,"width":"900","height":700}}',
      '{"bounds":{"x":0,"y":0,"width":0,"height":700}}',
      '{"bounds":{"x":1e999,"y":0,"width":10,"height":10}}',
      '[]',
    ]) {
      await writeFile(file, bad)
      expect(await readWindowState(file), bad).toBeNull()
    }
  })
})
