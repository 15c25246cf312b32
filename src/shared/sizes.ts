/**
 * A size of 1,024 bytes or more in `units` (kilo first, then each 1,024 times larger), with one
 * decimal: a size that rounds to 1024.0 of a unit is shown as 1.0 of the next (`1.0M`, never
 * `1024.0K`). The Memory tool's listing (`1.5K`) and the Memory tab (`1.5 KB`) both use it.
 */
export function scaledSize(bytes: number, units: ReadonlyArray<string>, space = ''): string {
  let size = bytes / 1024
  let unit = 0
  while (Number(size.toFixed(1)) >= 1024 && unit < units.length - 1) {
    size /= 1024
    unit++
  }
  return `${size.toFixed(1)}${space}${units[unit]}`
}
