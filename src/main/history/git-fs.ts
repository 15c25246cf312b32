/**
 * The file system isomorphic-git reads packs and refs through: the disk seam, in the shape of
 * `fs.promises` that isomorphic-git expects.
 */

import { disk, readPlainFile } from '../lib/disk'
import { OWN_FILE_CAP } from '../lib/own-file-caps'

type Encoding = { encoding?: string } | string | undefined

const wantsText = (options: Encoding) =>
  options === 'utf8' || (typeof options === 'object' && options?.encoding === 'utf8')

const promises = {
  async readFile(file: string, options?: Encoding): Promise<Buffer | string> {
    // Never through a link, never from a fifo or a device (refused: isomorphic-git takes
    // any failed read as no such file).
    const bytes = readPlainFile(file, OWN_FILE_CAP.OBJECTS)
    return wantsText(options) ? bytes.toString('utf8') : bytes
  },
  async writeFile(file: string, data: string | Uint8Array, options?: { mode?: number }) {
    disk.writeFileSync(file, data, { mode: options?.mode })
  },
  async unlink(file: string) {
    disk.unlinkSync(file)
  },
  async readdir(dir: string): Promise<string[]> {
    return disk.readdirSync(dir).map((dirent) => dirent.name)
  },
  async mkdir(dir: string, options?: { mode?: number } | number) {
    disk.mkdirSync(dir, typeof options === 'number' ? options : options?.mode)
  },
  async rmdir(dir: string) {
    disk.rmdirSync(dir)
  },
  async stat(file: string) {
    return disk.statSync(file)
  },
  async lstat(file: string) {
    return disk.lstatSync(file)
  },
  async readlink(file: string) {
    return disk.promises.readlink(file)
  },
  async symlink(target: string, file: string) {
    await disk.promises.symlink(target, file)
  },
  async chmod(file: string, mode: number) {
    disk.chmodSync(file, mode)
  },
}

/** Pass as `fs` to isomorphic-git. */
export const gitFs = { promises }
