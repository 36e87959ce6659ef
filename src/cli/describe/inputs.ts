// What `alttext describe` works on: its arguments turned into images. A URL is passed on as it is; a
// file is taken as given (the service says whether it is an image); a directory is walked in name
// order, hidden entries and symbolic links to directories skipped, for JPEG, PNG, GIF, WebP, AVIF and
// SVG files by extension or, for other names, by their first bytes (as the service tells them).
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs'
import { isAbsolute, join, relative, resolve } from 'node:path'
import { sniffFormat } from '../../intake/image-format'
import { UsageError } from '../shared/args'
import type { ImageInput } from '../shared/client'

/** One image of the run: `source` names it in the output (a path as written, or the URL). */
export type Item = { source: string; input: ImageInput }

const IMAGE_EXTENSION = /\.(jpe?g|png|gif|webp|avif|svg)$/i
const URL_PATTERN = /^https?:\/\//i
/** Enough for any magic number, and for an SVG's root element after its prolog. */
const SNIFF_BYTES = 64 * 1024

function sniff(path: string): boolean {
  let fd: number | undefined
  try {
    fd = openSync(path, 'r')
    const head = new Uint8Array(SNIFF_BYTES)
    const read = readSync(fd, head, 0, SNIFF_BYTES, 0)
    return sniffFormat(head.subarray(0, read)) !== null
  } catch {
    return false
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/**
 * How a file is named in the output, and matched on resume: relative to the working directory when
 * inside it, else absolute. The same file is so named the same whichever argument led to it.
 */
export function sourceOf(path: string, cwd: string): string {
  const absolute = resolve(cwd, path)
  const inside = relative(cwd, absolute)
  return inside !== '' && !inside.startsWith('..') && !isAbsolute(inside) ? inside : absolute
}

/** The key an output record's `source` is matched by. */
export function sourceKey(source: string, cwd: string): string {
  return URL_PATTERN.test(source) ? source : sourceOf(source, cwd)
}

function walk(directory: string, found: string[]): void {
  const entries = readdirSync(directory, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue
    const path = join(directory, entry.name)
    if (entry.isDirectory()) walk(path, found)
    else if (entry.isFile() || (entry.isSymbolicLink() && statSafe(path)?.isFile())) {
      if (IMAGE_EXTENSION.test(entry.name) || sniff(path)) found.push(path)
    }
  }
}

function statSafe(path: string) {
  try {
    return statSync(path)
  } catch {
    return undefined
  }
}

/** The run's images in argument order, each once; a missing path is a UsageError. */
export function collectItems(args: string[], cwd: string): Item[] {
  const items: Item[] = []
  const seen = new Set<string>()
  const add = (item: Item) => {
    if (seen.has(item.source)) return
    seen.add(item.source)
    items.push(item)
  }
  for (const arg of args) {
    if (URL_PATTERN.test(arg)) {
      add({ source: arg, input: { url: arg } })
      continue
    }
    const absolute = resolve(cwd, arg)
    const stat = statSafe(absolute)
    if (stat === undefined) throw new UsageError(`no such file or directory: ${arg}`)
    if (stat.isDirectory()) {
      const found: string[] = []
      walk(absolute, found)
      for (const path of found) add({ source: sourceOf(path, cwd), input: { file: path } })
    } else {
      add({ source: sourceOf(absolute, cwd), input: { file: absolute } })
    }
  }
  return items
}
