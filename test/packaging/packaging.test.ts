/**
 * The packaging configuration as electron-builder itself loads and validates it (no network:
 * nothing is built or downloaded), and the committed icon files it points at.
 */
import { FuseV1Options } from '@electron/fuses'
import { DebugLogger } from 'builder-util'
import type { Configuration } from 'app-builder-lib'
import { getConfig, validateConfiguration } from 'app-builder-lib/out/util/config/config.js'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'

const root = path.resolve(__dirname, '../..')
const read = (file: string) => readFileSync(path.join(root, file))
const packageJson = JSON.parse(read('package.json').toString('utf8')) as Record<string, unknown>

let config: Configuration
beforeAll(async () => {
  config = await getConfig(root, null, null)
})

/** Width and height of a PNG, from its IHDR chunk. */
function pngSize(data: Buffer): { width: number; height: number } {
  expect(data.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a')
  expect(data.subarray(12, 16).toString('ascii')).toBe('IHDR')
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) }
}

/** The images inside an .ico: the size its directory claims and the size of what is stored. */
function icoImages(data: Buffer) {
  expect(data.readUInt16LE(0)).toBe(0)
  expect(data.readUInt16LE(2)).toBe(1)
  const count = data.readUInt16LE(4)
  return Array.from({ length: count }, (_, index) => {
    const entry = 6 + 16 * index
    const claimed = data.readUInt8(entry) || 256
    const length = data.readUInt32LE(entry + 8)
    const offset = data.readUInt32LE(entry + 12)
    const image = data.subarray(offset, offset + length)
    expect(image.length).toBe(length)
    const isPng = image.subarray(1, 4).toString('ascii') === 'PNG'
    // A BMP entry stores its height doubled (colour rows and the mask).
    const stored = isPng
      ? pngSize(image)
      : { width: image.readInt32LE(4), height: image.readInt32LE(8) / 2 }
    if (!isPng) expect(image.readUInt16LE(14)).toBe(32)
    return { claimed, bitsPerPixel: data.readUInt16LE(entry + 6), ...stored, isPng }
  })
}

/** The entries of an .icns: type code and the pixel size of its PNG. */
function icnsEntries(data: Buffer) {
  expect(data.subarray(0, 4).toString('ascii')).toBe('icns')
  expect(data.readUInt32BE(4)).toBe(data.length)
  const entries: Array<{ type: string; width: number; height: number }> = []
  for (let offset = 8; offset < data.length;) {
    const type = data.subarray(offset, offset + 4).toString('ascii')
    const length = data.readUInt32BE(offset + 4)
    expect(length).toBeGreaterThan(8)
    entries.push({ type, ...pngSize(data.subarray(offset + 8, offset + length)) })
    offset += length
  }
  return entries
}

describe('packaging (electron-builder.yml, as electron-builder reads it)', () => {
  it('is a configuration electron-builder accepts', async () => {
    await expect(validateConfiguration(config, new DebugLogger(false))).resolves.toBeUndefined()
  })

  it('names the app: id, product name, author with an address for the deb package', () => {
    expect(config.appId).toBe('app.cairn.desktop')
    expect(config.productName).toBe('Cairn')
    expect(packageJson['productName']).toBe('Cairn')
    expect(packageJson['author']).toEqual({
      name: expect.stringMatching(/\S/),
      email: expect.stringMatching(/^[^@\s]+@[^@\s]+$/),
    })
    expect(packageJson['description']).toEqual(expect.stringMatching(/\S.{20,}/))
    // The Windows taskbar identity the shell sets must be the same id.
    expect(read('src/main/index.ts').toString('utf8')).toContain(
      `app.setAppUserModelId('${config.appId}')`,
    )
  })

  it('sets the fuses that keep injected code from running as Cairn', () => {
    expect(config.electronFuses).toMatchObject({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      grantFileProtocolExtraPrivileges: false,
    })
    // Each is a fuse this Electron's fuse wire knows (electron-builder flips them with it).
    for (const name of [
      'RunAsNode',
      'EnableNodeOptionsEnvironmentVariable',
      'EnableNodeCliInspectArguments',
      'EnableEmbeddedAsarIntegrityValidation',
      'OnlyLoadAppFromAsar',
      'GrantFileProtocolExtraPrivileges',
    ]) {
      expect(FuseV1Options, name).toHaveProperty(name)
    }
    // The app is packed into app.asar (OnlyLoadAppFromAsar would refuse anything else).
    expect(config.asar).not.toBe(false)
  })

  it('builds AppImage and deb on Linux, dmg on macOS, NSIS on Windows', () => {
    expect(config.linux?.target).toEqual(['AppImage', 'deb'])
    expect(config.mac?.target).toBe('dmg')
    expect(config.win?.target).toBe('nsis')
    expect((packageJson['scripts'] as Record<string, string>)['dist']).toBe(
      'electron-vite build && electron-builder',
    )
  })

  it('uses a supported Electron (45 or later, never an older one by accident)', () => {
    const installed = JSON.parse(read('node_modules/electron/package.json').toString('utf8')) as {
      version: string
    }
    expect(Number(installed.version.split('.')[0])).toBeGreaterThanOrEqual(45)
    const wanted = (packageJson['devDependencies'] as Record<string, string>)['electron']
    expect(Number(wanted?.replace(/^\D*/, '').split('.')[0])).toBeGreaterThanOrEqual(45)
  })

  it('packs the built app and its run-time resources', () => {
    // electron-builder normalizes the list into file sets with filters.
    const patterns = ([config.files] as unknown[])
      .flat(3)
      .flatMap((entry) =>
        typeof entry === 'string' ? [entry] : ((entry as { filter?: string[] }).filter ?? []),
      )
    expect(patterns).toEqual(expect.arrayContaining(['out/**', 'resources/**', 'package.json']))
    expect(packageJson['main']).toBe('./out/main/index.js')
  })

  it('has the macOS icon in every size a dmg and the Dock need', () => {
    const file = config.mac?.icon as string
    const entries = icnsEntries(read(file))
    for (const entry of entries) expect(entry.width, entry.type).toBe(entry.height)
    expect(Object.fromEntries(entries.map((entry) => [entry.type, entry.width]))).toEqual({
      icp4: 16,
      icp5: 32,
      icp6: 64,
      ic07: 128,
      ic08: 256,
      ic09: 512,
      ic10: 1024,
      ic11: 32,
      ic12: 64,
      ic13: 256,
      ic14: 512,
    })
  })

  it('has the Windows icon with 16 to 256 px images, each as large as its directory says', () => {
    for (const file of [
      config.win?.icon,
      config.nsis?.installerIcon,
      config.nsis?.uninstallerIcon,
    ]) {
      expect(file).toBe('build/icon.ico')
    }
    const images = icoImages(read('build/icon.ico'))
    expect(images.map((image) => image.claimed)).toEqual([16, 24, 32, 48, 64, 128, 256])
    for (const image of images) {
      expect(image.width).toBe(image.claimed)
      expect(image.height).toBe(image.claimed)
      expect(image.bitsPerPixel).toBe(32)
      // NSIS reads classic BMP entries; only the 256 px one is PNG-compressed.
      expect(image.isPng).toBe(image.claimed === 256)
    }
  })

  it('has the Linux icon set, one PNG per size named by its size', () => {
    const dir = config.linux?.icon as string
    const files = readdirSync(path.join(root, dir)).sort()
    const sizes = [16, 24, 32, 48, 64, 128, 256, 512]
    expect(files).toEqual(sizes.map((size) => `${size}x${size}.png`).sort())
    for (const size of sizes) {
      expect(pngSize(read(`${dir}/${size}x${size}.png`))).toEqual({ width: size, height: size })
    }
    expect(pngSize(read('build/icon.png'))).toEqual({ width: 1024, height: 1024 })
    // The window's own icon on Linux, shipped unpacked in resources/.
    expect(pngSize(read('resources/icon.png'))).toEqual({ width: 512, height: 512 })
  })

  it('made every icon from the current build/icon.svg (else: npm run icons)', () => {
    const manifest = JSON.parse(read('build/icon-set.json').toString('utf8')) as {
      source: string
      sha256: string
      files: string[]
    }
    expect(manifest.source).toBe('build/icon.svg')
    expect(manifest.sha256).toBe(createHash('sha256').update(read('build/icon.svg')).digest('hex'))
    for (const file of manifest.files) expect(existsSync(path.join(root, file)), file).toBe(true)
    expect(manifest.files).toEqual(
      expect.arrayContaining([
        'build/icon.png',
        'build/icon.icns',
        'build/icon.ico',
        'resources/icon.png',
        'build/icons/16x16.png',
        'build/icons/512x512.png',
      ]),
    )
  })
})
