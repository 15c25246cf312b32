/**
 * Issue 2's shell, the unkind way: the core's events reach the one window's page and no other
 * web contents (a stray one that appears, or the window's own after its page is gone), and
 * a request from another web contents is refused without reaching the core.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { eventChannel } from '../../src/shared/channels'
import { builtFile, root } from './built'
import {
  createElectronStandIn,
  fakeEvent,
  type ElectronStandIn,
  type FakeWebContents,
} from './electron-stand-in'

const bundle = path.join(root, 'out/main/index.js')

const current = vi.hoisted(() => ({ standIn: null as { module: object } | null }))
// Each export forwards to the stand-in of the start that runs (`forwardingElectron`).
vi.mock('electron', async () => (await import('./electron-stand-in')).forwardingElectron(current))

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!()
  current.standIn = null
  vi.restoreAllMocks()
})

async function startApp(): Promise<{ standIn: ElectronStandIn; userData: string }> {
  await builtFile('out/main/index.js', ['src/main', 'src/shared'])
  const userData = await mkdtemp(path.join(os.tmpdir(), 'cairn-shell-events-'))
  cleanups.push(() => rm(userData, { recursive: true, force: true, maxRetries: 10 }))
  const standIn = createElectronStandIn({ userData })
  current.standIn = standIn
  const saved = process.env['CAIRN_DATA_DIR']
  delete process.env['CAIRN_DATA_DIR']
  cleanups.push(async () => {
    if (saved !== undefined) process.env['CAIRN_DATA_DIR'] = saved
  })
  vi.resetModules()
  await import(/* @vite-ignore */ pathToFileURL(bundle).href)
  cleanups.push(async () => {
    if (standIn.callsOf('app.quit').length > 0 || standIn.callsOf('app.exit').length > 0) return
    standIn.app.quit()
    await standIn.waitFor('app.quit')
  })
  await standIn.waitFor('window.loaded')
  await standIn.waitUntil(
    'webContents.send',
    (call) => (call.args[1] as { name?: string } | undefined)?.name === 'app:ready',
  )
  return { standIn, userData }
}

function invoke(standIn: ElectronStandIn, channel: string, frame: unknown, payload?: unknown) {
  const handler = standIn.handlers.get(channel)
  if (!handler) throw new Error(`no handler for ${channel}`)
  return handler({ senderFrame: frame }, payload) as Promise<{ ok: boolean }>
}

/** What the stand-in's web contents has beyond its exported type: its send, and its end. */
interface Page {
  send(channel: string, payload: unknown): void
  destroyed: boolean
}
const page = (contents: FakeWebContents) => contents as unknown as Page

/** The names of the events sent to one web contents, recorded from now on. */
function eventsTo(contents: FakeWebContents): string[] {
  const names: string[] = []
  const target = page(contents)
  const send = target.send.bind(target)
  target.send = (channel, payload) => {
    if (channel === eventChannel) names.push((payload as { name: string }).name)
    send(channel, payload)
  }
  return names
}

describe('the shell’s events and requests, against the built main bundle', () => {
  it('sends the core’s events to its window’s page only, never to another web contents', async () => {
    const { standIn, userData } = await startApp()
    const window = standIn.windows[0]!
    const other = new standIn.FakeWebContents()
    standIn.app.emit('web-contents-created', fakeEvent(), other)
    other.mainFrame.url = window.webContents.mainFrame.url
    const toWindow = eventsTo(window.webContents)
    const toOther = eventsTo(other)

    const written = await invoke(standIn, 'memory:write', window.webContents.mainFrame, {
      path: '/memories/notes.md',
      content: 'hello\n',
    })
    expect(written.ok).toBe(true)
    expect(toWindow).toContain('history:commit')
    expect(toOther).toEqual([])

    // The other web contents shows our page's address, but its frame is not our window's:
    // its request is refused and changes nothing.
    const refused = await invoke(standIn, 'memory:write', other.mainFrame, {
      path: '/memories/stray.md',
      content: 'x',
    })
    expect(refused).toEqual({
      ok: false,
      error: { code: 'forbidden', message: 'Request refused.' },
    })
    expect(existsSync(path.join(userData, 'memories', 'stray.md'))).toBe(false)
    expect(toOther).toEqual([])
  })

  it('sends nothing to a window whose page is gone', async () => {
    const { standIn } = await startApp()
    const window = standIn.windows[0]!
    const sent = eventsTo(window.webContents)
    const frame = { ...window.webContents.mainFrame }
    const before = await invoke(standIn, 'memory:write', frame, {
      path: '/memories/a.md',
      content: 'a\n',
    })
    expect(before.ok).toBe(true)
    expect(sent).toContain('history:commit')
    sent.length = 0
    // The page's process is gone, the window not yet: a commit made meanwhile goes nowhere.
    page(window.webContents).destroyed = true
    const during = await invoke(standIn, 'memory:write', frame, {
      path: '/memories/b.md',
      content: 'b\n',
    })
    expect(during.ok).toBe(true)
    expect(sent).toEqual([])
  })
})
