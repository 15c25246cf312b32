#!/usr/bin/env node
// @ts-check
/**
 * `npm run icons`: renders every icon the installers and the window need from the one source
 * drawing, build/icon.svg, and writes them into build/ and resources/ (committed, so packaging
 * needs no renderer). Run it after changing the drawing; a test checks that the committed set
 * is complete, has the right sizes, and was made from the current drawing.
 *
 *   build/icon.png            1024 px: electron-builder's fallback, macOS dock in development
 *   build/icon.icns           macOS (dmg, app bundle): 16 … 1024 px, PNG entries
 *   build/icon.ico            Windows (NSIS, exe): 16 … 256 px; BMP below 256, PNG at 256
 *   build/icons/NxN.png       Linux (AppImage, deb): 16 … 512 px
 *   resources/icon.png        512 px: the window and About icon on Linux at run time
 *   build/icon-set.json       what was made, from which drawing (its SHA-256)
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** Linux's icon directory: one PNG per size, named `NxN.png`. */
export const LINUX_SIZES = [16, 24, 32, 48, 64, 128, 256, 512]
/** Sizes inside icon.ico (Windows' shell and NSIS pick from these). */
export const ICO_SIZES = [16, 24, 32, 48, 64, 128, 256]
/** Entries of icon.icns: type code and pixel size (ic10 to ic14 are the Retina twins, double size). */
export const ICNS_ENTRIES = /** @type {const} */ ([
  ['icp4', 16],
  ['icp5', 32],
  ['icp6', 64],
  ['ic07', 128],
  ['ic08', 256],
  ['ic09', 512],
  ['ic10', 1024],
  ['ic11', 32],
  ['ic12', 64],
  ['ic13', 256],
  ['ic14', 512],
])

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const SOURCE = 'build/icon.svg'

/**
 * @typedef {{ png(size: number): Buffer, rgba(size: number): Buffer }} Renderer
 * `rgba` is straight (not premultiplied) RGBA, row by row from the top.
 */

/** @returns {Promise<Renderer>} */
async function resvgRenderer(/** @type {Buffer} */ svg) {
  const { Resvg } = await import('@resvg/resvg-js')
  const render = (/** @type {number} */ size) =>
    new Resvg(svg, { fitTo: { mode: 'width', value: size }, background: 'rgba(0,0,0,0)' }).render()
  return {
    png: (size) => Buffer.from(render(size).asPng()),
    rgba: (size) => {
      // resvg hands out premultiplied pixels; BMP wants them straight.
      const pixels = Buffer.from(render(size).pixels)
      for (let i = 0; i < pixels.length; i += 4) {
        const alpha = pixels[i + 3] ?? 0
        if (alpha === 0 || alpha === 255) continue
        for (let c = 0; c < 3; c++) {
          pixels[i + c] = Math.min(255, Math.round(((pixels[i + c] ?? 0) * 255) / alpha))
        }
      }
      return pixels
    },
  }
}

/** An ICO file: PNG-compressed entries at 256 px, 32-bit BMP entries below (what NSIS reads). */
export function buildIco(/** @type {Renderer} */ renderer, sizes = ICO_SIZES) {
  const images = sizes.map((size) =>
    size >= 256 ? renderer.png(size) : bmpEntry(renderer.rgba(size), size),
  )
  const header = Buffer.alloc(6 + 16 * sizes.length)
  header.writeUInt16LE(0, 0)
  header.writeUInt16LE(1, 2) // 1 = icon
  header.writeUInt16LE(sizes.length, 4)
  let offset = header.length
  sizes.forEach((size, index) => {
    const entry = 6 + 16 * index
    header.writeUInt8(size >= 256 ? 0 : size, entry) // 0 means 256
    header.writeUInt8(size >= 256 ? 0 : size, entry + 1)
    header.writeUInt8(0, entry + 2) // no palette
    header.writeUInt8(0, entry + 3)
    header.writeUInt16LE(1, entry + 4) // colour planes
    header.writeUInt16LE(32, entry + 6) // bits per pixel
    header.writeUInt32LE(images[index]?.length ?? 0, entry + 8)
    header.writeUInt32LE(offset, entry + 12)
    offset += images[index]?.length ?? 0
  })
  return Buffer.concat([header, ...images])
}

/** A DIB as ICO stores it: BITMAPINFOHEADER, BGRA rows bottom-up, then an all-clear AND mask. */
function bmpEntry(/** @type {Buffer} */ rgba, /** @type {number} */ size) {
  const info = Buffer.alloc(40)
  info.writeUInt32LE(40, 0)
  info.writeInt32LE(size, 4)
  info.writeInt32LE(size * 2, 8) // colour image + mask
  info.writeUInt16LE(1, 12)
  info.writeUInt16LE(32, 14)
  info.writeUInt32LE(0, 16) // BI_RGB
  info.writeUInt32LE(size * size * 4, 20)
  const pixels = Buffer.alloc(size * size * 4)
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const from = (y * size + x) * 4
      const to = ((size - 1 - y) * size + x) * 4
      pixels[to] = rgba[from + 2] ?? 0
      pixels[to + 1] = rgba[from + 1] ?? 0
      pixels[to + 2] = rgba[from] ?? 0
      pixels[to + 3] = rgba[from + 3] ?? 0
    }
  }
  const maskRow = Math.ceil(size / 32) * 4
  return Buffer.concat([info, pixels, Buffer.alloc(maskRow * size)])
}

/** An ICNS file with a PNG in every entry. */
export function buildIcns(/** @type {Renderer} */ renderer) {
  const chunks = ICNS_ENTRIES.map(([type, size]) => {
    const png = renderer.png(size)
    const head = Buffer.alloc(8)
    head.write(type, 0, 'ascii')
    head.writeUInt32BE(png.length + 8, 4)
    return Buffer.concat([head, png])
  })
  const body = Buffer.concat(chunks)
  const head = Buffer.alloc(8)
  head.write('icns', 0, 'ascii')
  head.writeUInt32BE(body.length + 8, 4)
  return Buffer.concat([head, body])
}

async function main() {
  const svg = readFileSync(path.join(root, SOURCE))
  const renderer = await resvgRenderer(svg)
  /** @type {Array<[string, Buffer]>} */
  const outputs = [
    ['build/icon.png', renderer.png(1024)],
    ['build/icon.icns', buildIcns(renderer)],
    ['build/icon.ico', buildIco(renderer)],
    ...LINUX_SIZES.map(
      (size) =>
        /** @type {[string, Buffer]} */ ([`build/icons/${size}x${size}.png`, renderer.png(size)]),
    ),
    ['resources/icon.png', renderer.png(512)],
  ]
  mkdirSync(path.join(root, 'build/icons'), { recursive: true })
  for (const [file, data] of outputs) {
    writeFileSync(path.join(root, file), data)
    console.log(`wrote ${file} (${data.length} bytes)`)
  }
  const manifest = {
    source: SOURCE,
    sha256: createHash('sha256').update(svg).digest('hex'),
    files: outputs.map(([file]) => file),
  }
  writeFileSync(path.join(root, 'build/icon-set.json'), JSON.stringify(manifest, null, 2) + '\n')
  console.log('wrote build/icon-set.json')
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`Making the icons failed: ${error instanceof Error ? error.message : error}`)
    process.exitCode = 1
  })
}
