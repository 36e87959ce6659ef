// Sizes as operators read them, in the output of the operator commands.
import { plural } from '../../shared/wording'

/** 1536 → "1.5 KiB"; below 1 KiB, "512 bytes". */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? plural(bytes, 'byte') : `${value.toFixed(1)} ${units[unit]}`
}
