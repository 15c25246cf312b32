import { describe, expect, it } from 'vitest'
import { debuggingRefusal, debuggingSwitches } from './debug-switches'

describe('debuggingSwitches', () => {
  it('finds each debugging switch in every spelling Chromium or Node reads', () => {
    expect(
      debuggingSwitches(
        [
          '--remote-debugging-port=9222',
          '--remote-debugging-pipe',
          '-inspect',
          '--inspect-brk=0.0.0.0:9229',
          '--INSPECT-PORT=1',
          '--inspect_brk_node',
          '--inspect-wait',
          '--inspect-publish-uid=http',
          '--debug-port=9230',
        ],
        'linux',
      ),
    ).toEqual([
      'remote-debugging-port',
      'remote-debugging-pipe',
      'inspect',
      'inspect-brk',
      'INSPECT-PORT',
      'inspect_brk_node',
      'inspect-wait',
      'inspect-publish-uid',
      'debug-port',
    ])
    expect(debuggingSwitches(['/remote-debugging-port=9222'], 'win32')).toEqual([
      'remote-debugging-port',
    ])
  })

  it('leaves other switches, file arguments and anything after a bare --', () => {
    expect(
      debuggingSwitches(
        [
          '--no-sandbox-please',
          '--inspector',
          'remote-debugging-port',
          '/remote-debugging-port=1',
          '--',
          '--inspect',
        ],
        'linux',
      ),
    ).toEqual([])
  })

  it('says what was refused and what to do, naming each switch once as given', () => {
    const refusal = debuggingRefusal(['remote-debugging-port', 'inspect'])
    expect(refusal.title).toBe('Cairn will not start with a debugger attached')
    expect(refusal.content).toContain('--remote-debugging-port, --inspect')
    expect(refusal.content).toContain('Start Cairn without them')
  })
})
