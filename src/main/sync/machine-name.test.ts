/**
 * The machine's name as the settings save it (review11 N6): what names are written with and
 * hides nothing (a joiner inside an emoji, the direction marks of right-to-left text) saves,
 * as it did before D13; what reorders or hides text does not. A real data folder through the
 * dispatcher, as the window calls it.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { startMachine, type Machine } from './test-support'

const open: Machine[] = []
afterEach(async () => {
  for (const machine of open.splice(0)) await machine.close()
})

describe('the machine name', () => {
  it('saves a name written with an emoji sequence or right-to-left marks', async () => {
    const laptop = await startMachine('laptop')
    open.push(laptop)
    for (const name of ['👩‍💻 Work', '👨🏽‍🔬 Lab', 'שולחן\u200F עבודה', 'حاسوب\u061C المكتب']) {
      const saved = await laptop.call('sync:configure', { url: '', machineName: name })
      expect(saved.config.machineName).toBe(name)
    }
  })

  it('refuses a name that reorders or hides text, changing nothing', async () => {
    const laptop = await startMachine('laptop')
    open.push(laptop)
    await laptop.call('sync:configure', { url: '', machineName: 'Desk' })
    for (const name of ['desk\u202Egnp.exe', 'desk\u200Btop', 'a\u200Db', 'desk\u2066x']) {
      expect(await laptop.refused('sync:configure', { url: '', machineName: name })).toBe(
        'invalid-payload',
      )
    }
    expect((await laptop.call('sync:status')).config.machineName).toBe('Desk')
  })
})
