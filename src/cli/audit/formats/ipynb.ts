// Jupyter notebooks (.ipynb, nbformat 4): JSON whose Markdown cells are scanned as Markdown files are
// (markdown.ts), with `attachment:name.png` images read from the cell's own `attachments` (never a
// file), and whose HTML outputs (`outputs[].data["text/html"]`) are scanned as HTML pages are. Each
// image is located at its line and column in the .ipynb file itself: jsonc-parser gives each string's
// offset in the file, and the escapes of that JSON string map a cell-source offset back to the file.
// --fix rewrites only the alt text inside the JSON string of the cell's source, JSON-escaped; every
// other byte stays. Outputs are reported but not rewritten (running the cell writes them again), and
// image outputs (image/png…) are not read: Jupyter shows them without alt, and nbformat has no place
// for one (docs/audit.md, "MDX and Jupyter notebooks").
import { type Node as JsonNode, type ParseError, parseTree, printParseErrorCode } from 'jsonc-parser'
import { linkTarget, resolveImage, type ImageTarget, type Unresolved } from '../pages'
import { type FoundImage, type PageScan, scanHtml } from '../scan'
import { applyEdits, type Edit } from '../tag'
import { byteOffsets, type MarkdownImageSource, markdownAltEdits, scanMarkdown } from './markdown'
import { type DocumentFormat, locate, matchChanges, type ScannedDocument } from './types'

export const IPYNB_FILE = /\.ipynb$/iu

/** One JSON string of a cell's source (or an output's HTML): where it is in the file's text, and its value. */
type Piece = { node: JsonNode; value: string }

/** A cell source (or output HTML) as one text, made of the JSON strings it is written in. */
type Joined = { pieces: Piece[]; starts: number[]; text: string }

/** Where image `index` of the notebook's scan came from, for `resolve` and `apply`. */
type Origin =
  | {
      kind: 'markdown'
      cell: number
      joined: Joined
      bytes: Uint8Array
      document: ReturnType<typeof scanMarkdown>
      index: number
      attachments: Map<string, JsonNode>
    }
  | { kind: 'output'; cell: number }

type NotebookDocument = ScannedDocument & { origins: Origin[] }

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const encoder = new TextEncoder()

/** The value of `key` in a JSON object node (the last one, as JSON.parse reads duplicates). */
function member(node: JsonNode | undefined, key: string): JsonNode | undefined {
  if (node?.type !== 'object') return undefined
  let found: JsonNode | undefined
  for (const property of node.children ?? []) if (property.children?.[0]?.value === key) found = property.children[1]
  return found
}

/** A string, or a list of strings, as its pieces; null when it is neither. */
function joinStrings(node: JsonNode | undefined): Joined | null {
  if (node === undefined) return { pieces: [], starts: [], text: '' }
  const nodes = node.type === 'string' ? [node] : node.type === 'array' ? (node.children ?? []) : null
  if (nodes === null || nodes.some((piece) => piece.type !== 'string')) return null
  const pieces = nodes.map((piece) => ({ node: piece, value: piece.value as string }))
  const starts: number[] = []
  let at = 0
  for (const piece of pieces) {
    starts.push(at)
    at += piece.value.length
  }
  return { pieces, starts, text: pieces.map((piece) => piece.value).join('') }
}

/**
 * For each UTF-16 unit of a JSON string's value, where it is written in the file's text (an escape
 * like `\n` or `\u00e9` stands for one unit); the last entry is the closing quote.
 */
function rawOffsets(fileText: string, piece: Piece): Int32Array {
  const out = new Int32Array(piece.value.length + 1)
  const end = piece.node.offset + piece.node.length - 1
  let unit = 0
  for (let i = piece.node.offset + 1; i < end; unit++) {
    out[unit] = i
    i += fileText.charCodeAt(i) !== 0x5c ? 1 : fileText[i + 1] === 'u' ? 6 : 2
  }
  if (unit !== piece.value.length) throw new Error('a JSON string could not be mapped back to the file')
  out[unit] = end
  return out
}

/** UTF-16 offsets in the text whose UTF-8 is `bytes`, for byte `offsets` that start characters. */
function unitOffsets(bytes: Uint8Array, offsets: number[]): Map<number, number> {
  const sorted = [...new Set(offsets)].sort((a, b) => a - b)
  const out = new Map<number, number>()
  let units = 0
  let at = 0
  for (const offset of sorted) {
    for (; at < offset; at++) {
      const byte = bytes[at]!
      if ((byte & 0xc0) !== 0x80) units += byte >= 0xf0 ? 2 : 1
    }
    out.set(offset, units)
  }
  return out
}

/**
 * Maps offsets into a joined text to offsets into the file's text. A range must lie within one of its
 * JSON strings (an edit across a line break of a cell's source list is refused).
 */
function fileMapper(fileText: string, joined: Joined) {
  const maps = new Map<number, Int32Array>()
  const pieceAt = (offset: number) => {
    let low = 0
    let high = joined.pieces.length - 1
    while (low < high) {
      const middle = (low + high + 1) >> 1
      if (joined.starts[middle]! <= offset) low = middle
      else high = middle - 1
    }
    return low
  }
  const rawOf = (piece: number, local: number) => {
    let map = maps.get(piece)
    if (map === undefined) {
      map = rawOffsets(fileText, joined.pieces[piece]!)
      maps.set(piece, map)
    }
    return map[local]!
  }
  return {
    at: (offset: number) => {
      const piece = pieceAt(offset)
      return rawOf(piece, offset - joined.starts[piece]!)
    },
    range: (start: number, end: number): { start: number; end: number } | null => {
      const piece = pieceAt(start)
      const local = start - joined.starts[piece]!
      const length = joined.pieces[piece]!.value.length
      if (end - joined.starts[piece]! > length) return null
      return { start: rawOf(piece, local), end: rawOf(piece, end - joined.starts[piece]!) }
    },
  }
}

/** Why `text` is not JSON, with the line and column jsonc-parser stopped at. */
function notJson(text: string, errors: ParseError[], fallback: string): Error {
  const first = errors[0]
  if (!first) return new Error(`not JSON: ${fallback}`)
  const before = text.slice(0, first.offset)
  const line = before.split('\n').length
  const column = first.offset - before.lastIndexOf('\n')
  return new Error(`not JSON: line ${line}, column ${column}: ${printParseErrorCode(first.error)}`)
}

/** A notebook's cells, checked to be nbformat 4's shape where the audit reads it. */
function readNotebook(bytes: Uint8Array): { fileText: string; bom: number; cells: JsonNode[] } {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
  let fileText: string
  try {
    fileText = utf8.decode(bytes.subarray(bom))
  } catch {
    throw new Error('not valid UTF-8')
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(fileText)
  } catch (error) {
    const errors: ParseError[] = []
    parseTree(fileText, errors, { disallowComments: true, allowTrailingComma: false })
    throw notJson(fileText, errors, (error as Error).message)
  }
  const nbformat = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>).nbformat : undefined
  if (nbformat !== 4) {
    throw new Error(`not a Jupyter notebook in nbformat 4 (${nbformat === undefined ? 'no "nbformat"' : `"nbformat": ${JSON.stringify(nbformat)}`})`)
  }
  const root = parseTree(fileText, [], { disallowComments: true, allowTrailingComma: false })
  const cells = member(root, 'cells')
  if (cells?.type !== 'array') throw new Error('not a Jupyter notebook in nbformat 4: "cells" is not a list')
  return { fileText, bom, cells: cells.children ?? [] }
}

/** The image types an attachment may hold, in the order one is picked. */
const ATTACHMENT_TYPE = /^image\//u

function scanNotebook(page: { name: string; bytes: Uint8Array }, token: string, context: boolean): Omit<NotebookDocument, 'resolve' | 'linkTarget'> {
  const { bytes } = page
  const { fileText, bom, cells } = readNotebook(bytes)
  const images: FoundImage[] = []
  const origins: Origin[] = []
  /** Per image, its offset in the file's text (UTF-16), turned into bytes at the end. */
  const textOffsets: number[] = []
  const textParts: string[] = []
  let textLength = 0
  let title = ''
  let language: string | null = null
  let ignored = 0
  for (const [index, cell] of cells.entries()) {
    const number = index + 1
    if (cell.type !== 'object') throw new Error(`cell ${number}: not an object`)
    const type = member(cell, 'cell_type')?.value
    if (type === 'markdown') {
      const joined = joinStrings(member(cell, 'source'))
      if (joined === null) throw new Error(`cell ${number}: "source" is neither a string nor a list of strings`)
      const attachments = new Map<string, JsonNode>()
      const attached = member(cell, 'attachments')
      if (attached !== undefined && attached.type !== 'object') throw new Error(`cell ${number}: "attachments" is not an object`)
      for (const property of attached?.children ?? []) {
        const name = property.children?.[0]?.value
        if (typeof name === 'string' && property.children?.[1]) attachments.set(name, property.children[1])
      }
      const cellBytes = encoder.encode(joined.text)
      let document: ReturnType<typeof scanMarkdown>
      try {
        document = scanMarkdown({ name: page.name, bytes: cellBytes }, token)
      } catch (error) {
        throw new Error(`cell ${number}: ${(error as Error).message}`)
      }
      ignored += document.scan.ignored
      title ||= document.scan.title
      language ??= document.language
      // The cell's text follows the cells before it: its images' places and ranges move with it.
      const shift = textLength
      const ranges = new Set<NonNullable<FoundImage['heading']>>()
      for (const image of document.scan.images) {
        if (image.heading) ranges.add(image.heading)
        if (image.caption) ranges.add(image.caption)
      }
      for (const range of ranges) {
        range.start += shift
        if (range.end !== null) range.end += shift
      }
      const units = unitOffsets(
        cellBytes,
        document.scan.images.map((image) => image.offset),
      )
      const map = fileMapper(fileText, joined)
      for (const [imageIndex, image] of document.scan.images.entries()) {
        images.push({ ...image, at: image.at + shift })
        textOffsets.push(map.at(units.get(image.offset)!))
        origins.push({ kind: 'markdown', cell: number, joined, bytes: cellBytes, document, index: imageIndex, attachments })
      }
      if (context) {
        textParts.push(document.scan.text, ' ')
        textLength += document.scan.text.length + 1
      }
      continue
    }
    if (type !== 'code') continue
    const outputs = member(cell, 'outputs')
    if (outputs === undefined) continue
    if (outputs.type !== 'array') throw new Error(`cell ${number}: "outputs" is not a list`)
    for (const output of outputs.children ?? []) {
      const html = member(member(output, 'data'), 'text/html')
      if (html === undefined) continue
      const joined = joinStrings(html)
      if (joined === null) throw new Error(`cell ${number}: an output's "text/html" is neither a string nor a list of strings`)
      const htmlBytes = encoder.encode(joined.text)
      const found = scanHtml(htmlBytes, token, { context: false })
      const units = unitOffsets(
        htmlBytes,
        found.images.map((image) => image.offset),
      )
      const map = fileMapper(fileText, joined)
      for (const image of found.images) {
        images.push({ ...image, caption: null, heading: null, at: textLength })
        textOffsets.push(map.at(units.get(image.offset)!))
        origins.push({ kind: 'output', cell: number })
      }
    }
  }
  const fileBytes = byteOffsets(fileText, textOffsets, bom)
  for (const [index, image] of images.entries()) image.offset = fileBytes.get(textOffsets[index]!)!
  const locations = locate(
    bytes,
    images.map((image) => image.offset),
    page.name,
  )
  for (const [index, image] of images.entries()) {
    image.line = locations[index]!.line
    image.column = locations[index]!.column
  }
  const scan: PageScan = { images, links: [], lang: language, base: null, utf8: true, title, text: textParts.join(''), bytes, ignored }
  return { name: page.name, scan, locations, language, origins }
}

/** The bytes of attachment `name` of a Markdown cell: its first image type, base64-decoded. */
function attachment(attachments: Map<string, JsonNode>, src: string, cell: number): ImageTarget | Unresolved {
  let name = src.slice('attachment:'.length)
  if (!attachments.has(name)) {
    try {
      name = decodeURIComponent(name)
    } catch {
      // Kept as written.
    }
  }
  const bundle = attachments.get(name)
  if (bundle === undefined) return { error: `cell ${cell} has no attachment named ${JSON.stringify(name)}` }
  for (const property of bundle.children ?? []) {
    const type = property.children?.[0]?.value
    const value = property.children?.[1]
    if (typeof type !== 'string' || !ATTACHMENT_TYPE.test(type)) continue
    const data = value?.type === 'string' ? (value.value as string) : value?.type === 'array' ? joinStrings(value)?.text : undefined
    if (typeof data !== 'string') break
    return { data: new Uint8Array(Buffer.from(data.replace(/\s+/gu, ''), 'base64')), type }
  }
  return { error: `attachment ${JSON.stringify(name)} of cell ${cell} holds no image` }
}

export const ipynb: DocumentFormat = {
  name: 'ipynb',
  scan(page, options) {
    if (page.bytes === null) return []
    const document = scanNotebook({ name: page.name, bytes: page.bytes }, options.token, options.context)
    const { images } = document.scan
    const originOf = new Map(images.map((image, index) => [image, document.origins[index]!]))
    const resolve = (src: string | null, image?: FoundImage): ImageTarget | Unresolved => {
      if (src === null || !/^attachment:/iu.test(src)) return resolveImage(page, null, src)
      // The cell an attachment belongs to: the image's own, else the only cell with that address.
      const own = image && originOf.get(image)
      const candidates = (own ? [own] : document.origins.filter((_, at) => images[at]!.src === src)).filter((origin) => origin.kind === 'markdown')
      const cells = new Set(candidates.map((origin) => origin.cell))
      if (cells.size !== 1)
        return { error: cells.size === 0 ? `${src}: an attachment of no Markdown cell` : `${src} is in several cells: which one is not known` }
      const origin = candidates[0]!
      return origin.kind === 'markdown' ? attachment(origin.attachments, src, origin.cell) : { error: `${src}: an attachment of no Markdown cell` }
    }
    return [{ ...document, resolve, linkTarget: (href) => linkTarget(page, null, href) } satisfies NotebookDocument]
  },
  apply(page, changes, options) {
    const bytes = page.bytes ?? new Uint8Array()
    const documents = options.documents ?? this.scan(page, options)
    const { matched, refused } = matchChanges(documents, changes)
    // The text the scan read (it was valid UTF-8 then: `documents` are of these bytes).
    const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
    const fileText = utf8.decode(bytes.subarray(bom))
    const wanted: { change: (typeof changes)[number]; ranges: { start: number; end: number; text: string }[] }[] = []
    for (const { change, document, index } of matched) {
      const origin = (document as NotebookDocument).origins[index]!
      if (origin.kind === 'output') {
        refused.push({ change, reason: `in an output of cell ${origin.cell}: running the cell writes it again; fix the code that makes it` })
        continue
      }
      const source = origin.document.sources[origin.index] as MarkdownImageSource
      const edits = markdownAltEdits(origin.bytes, origin.document, source, origin.index, change.alt)
      if (edits === null) {
        refused.push({ change, reason: 'the tag could not be read' })
        continue
      }
      const units = unitOffsets(
        origin.bytes,
        edits.flatMap((edit) => [edit.start, edit.end]),
      )
      const map = fileMapper(fileText, origin.joined)
      const ranges: { start: number; end: number; text: string }[] = []
      for (const edit of edits) {
        const range = map.range(units.get(edit.start)!, units.get(edit.end)!)
        if (range === null) break
        // The new text inside a JSON string: quotes, backslashes and control characters escaped.
        ranges.push({ ...range, text: JSON.stringify(edit.text).slice(1, -1) })
      }
      if (ranges.length !== edits.length) {
        refused.push({ change, reason: 'the alt text runs over a line break of the cell’s source; edit it in Jupyter' })
        continue
      }
      wanted.push({ change, ranges })
    }
    const offsets = byteOffsets(
      fileText,
      wanted.flatMap(({ ranges }) => ranges.flatMap((range) => [range.start, range.end])),
      bom,
    )
    const edits: Edit[] = wanted.flatMap(({ ranges }) =>
      ranges.map((range) => ({ start: offsets.get(range.start)!, end: offsets.get(range.end)!, text: range.text })),
    )
    const out = edits.length > 0 ? applyEdits(bytes, edits) : bytes
    // Each edit is inside one JSON string and escaped for it; a copy that would not parse is never written.
    if (edits.length > 0) JSON.parse(utf8.decode(out.subarray(bom)))
    return { bytes: out, applied: wanted.map(({ change }) => change), refused }
  },
}
