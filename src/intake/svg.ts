// SVG in, safe SVG out: parsed by a strict XML parser (saxes) and rebuilt from an allow-list, so what
// the rasteriser (librsvg, inside sharp) sees can load nothing and run nothing. Refused outright: a
// DOCTYPE (entity declarations: XXE, billion laughs), more elements, nesting or <use> instances than
// any logo or diagram needs. Dropped with their content: <script>, <foreignObject>, <image>, <feImage>,
// animation elements (they can set an href), anything outside the SVG namespace. Dropped attributes:
// event handlers, every href that is not a fragment (#id) of this document, and any url(), @import or
// CSS escape that could point outside it. librsvg loads no network URL and, for a buffer, no file
// either; this makes that hold whatever librsvg's rules are in a later version.
import { SaxesParser, type SaxesTagNS } from 'saxes'
import { ImageFormatError } from './image-format-error.ts'

/** More than a logo, an icon set or a chart draws; a 10 MB file of tiny paths is refused by it. */
export const MAX_SVG_ELEMENTS = 5000
/** Real drawings nest groups a few dozen deep at most. */
export const MAX_SVG_DEPTH = 100
/** Elements drawn once <use> references are followed: bounds a chain of uses that multiply. */
export const MAX_SVG_DRAWN = 50_000
/**
 * The size of an SVG that states none (no width, height or viewBox): 300×150, what browsers give an
 * SVG image without one (CSS's default object size).
 */
export const DEFAULT_SVG_SIZE = { width: 300, height: 150 } as const

const SVG_NS = 'http://www.w3.org/2000/svg'
const XLINK_NS = 'http://www.w3.org/1999/xlink'

/** What is drawn; elements not listed are dropped with everything inside them. */
const ELEMENTS = new Set([
  'svg',
  'g',
  'defs',
  'symbol',
  'use',
  'switch',
  'a',
  'title',
  'desc',
  'style',
  'path',
  'rect',
  'circle',
  'ellipse',
  'line',
  'polyline',
  'polygon',
  'text',
  'tspan',
  'textPath',
  'linearGradient',
  'radialGradient',
  'stop',
  'clipPath',
  'mask',
  'pattern',
  'marker',
  'filter',
  'feBlend',
  'feColorMatrix',
  'feComponentTransfer',
  'feComposite',
  'feConvolveMatrix',
  'feDiffuseLighting',
  'feDisplacementMap',
  'feDistantLight',
  'feDropShadow',
  'feFlood',
  'feFuncA',
  'feFuncB',
  'feFuncG',
  'feFuncR',
  'feGaussianBlur',
  'feMerge',
  'feMergeNode',
  'feMorphology',
  'feOffset',
  'fePointLight',
  'feSpecularLighting',
  'feSpotLight',
  'feTile',
  'feTurbulence',
])
/** Elements whose text is kept (what text shows, titles, and style sheets once checked). */
const TEXT_ELEMENTS = new Set(['text', 'tspan', 'textPath', 'title', 'desc', 'style'])

export type SafeSvg = {
  /** The root's attributes, safe, without width and height (set for the raster by svgMarkup). */
  rootAttributes: string
  /** Everything inside the root, safe. */
  body: string
  /** The root's viewBox, when it has a valid one. */
  viewBox: string | null
  /** Intrinsic size in CSS pixels (from width/height, else the viewBox, else DEFAULT_SVG_SIZE), rounded up. */
  width: number
  height: number
}

const refuse = (message: string): ImageFormatError => new ImageFormatError('unsupported', message)
const corrupt = (detail: string): ImageFormatError => new ImageFormatError('corrupt', `the image is truncated or corrupt (${detail})`)

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

function escapeAttribute(value: string): string {
  return escapeText(value).replace(/"/g, '&quot;')
}

/**
 * CSS (a style sheet, a style attribute, or a presentation attribute's value) that refers to nothing
 * outside the document: every url() a #fragment, no @import or @font-face, and no backslash, since an
 * escape can spell `url(` or `@import` past any check of the plain text.
 */
export function isSelfContainedCss(css: string): boolean {
  if (css.includes('\\')) return false
  if (/@(?:import|font-face|namespace)/i.test(css)) return false
  if (/(?:image-set|cross-fade|element|image|src)\s*\(/i.test(css)) return false
  for (const match of css.matchAll(/url\s*\(\s*(['"]?)\s*([^)]*)/gi)) {
    if (!match[2]!.trimStart().startsWith('#')) return false
  }
  return true
}

/** A length in CSS pixels, for absolute units; null for none, a percentage, em and the like. */
function cssPixels(value: string | undefined): number | null {
  if (value === undefined) return null
  const match = /^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*(px|pt|pc|mm|cm|in)?\s*$/i.exec(value)
  if (!match) return null
  const unit = (match[2] ?? 'px').toLowerCase()
  const perUnit: Record<string, number> = { px: 1, pt: 4 / 3, pc: 16, mm: 96 / 25.4, cm: 96 / 2.54, in: 96 }
  const pixels = Number(match[1]) * perUnit[unit]!
  return Number.isFinite(pixels) && pixels > 0 ? pixels : null
}

function parseViewBox(value: string | undefined): { width: number; height: number } | null {
  if (value === undefined) return null
  const parts = value
    .trim()
    .split(/[\s,]+/)
    .map(Number)
  if (parts.length !== 4 || parts.some((part) => !Number.isFinite(part))) return null
  const [, , width, height] = parts as [number, number, number, number]
  return width > 0 && height > 0 ? { width, height } : null
}

/** Width and height as a browser sizes an SVG image: the attributes, the viewBox's ratio for a missing one, else the default. */
function intrinsicSize(width: number | null, height: number | null, viewBox: { width: number; height: number } | null): { width: number; height: number } {
  const ratio = viewBox ? viewBox.width / viewBox.height : null
  const w = width ?? (height !== null && ratio !== null ? height * ratio : (viewBox?.width ?? DEFAULT_SVG_SIZE.width))
  const h = height ?? (width !== null && ratio !== null ? width / ratio : (viewBox?.height ?? DEFAULT_SVG_SIZE.height))
  // Rounded up and clamped, so that a sliver still has a pixel and a huge size stays a finite number for the pixel cap.
  const clamp = (pixels: number): number => Math.min(Number.MAX_SAFE_INTEGER, Math.max(1, Math.ceil(pixels)))
  return { width: clamp(w), height: clamp(h) }
}

/** The attribute's value as it may be kept, or null to drop it. */
function safeAttribute(element: string, name: string, uri: string, value: string): string | null {
  // inkscape:*, sodipodi:*, xml:base and the like; of xlink, only href.
  if (uri !== '' && !(uri === XLINK_NS && name === 'href')) return null
  if (uri === '' && name.startsWith('xmlns')) return null // the root gets its own declarations
  if (/^on/i.test(name)) return null
  if (name === 'href') return value.trim().startsWith('#') && element !== 'a' ? value : null
  if (name === 'style' || /url\s*\(/i.test(value)) return isSelfContainedCss(value) ? value : null
  return value
}

type Node = { parent: number; id: string | null; use: string | null }

/** Elements drawn once every <use> is followed (each counts its target's subtree); throws on a cycle or past MAX_SVG_DRAWN. */
function drawnElements(nodes: Node[]): number {
  const children: number[][] = nodes.map(() => [])
  const byId = new Map<string, number>()
  nodes.forEach((node, index) => {
    if (node.parent >= 0) children[node.parent]!.push(index)
    if (node.id !== null && !byId.has(node.id)) byId.set(node.id, index)
  })
  const weight = new Map<number, number>()
  const visiting = new Set<number>()
  const measure = (index: number): number => {
    const known = weight.get(index)
    if (known !== undefined) return known
    if (visiting.has(index)) throw refuse('the image is an SVG whose <use> elements refer to themselves in a cycle')
    visiting.add(index)
    let total = 1
    for (const child of children[index]!) total += measure(child)
    const target = nodes[index]!.use
    const targetIndex = target === null ? undefined : byId.get(target)
    if (targetIndex !== undefined) total += measure(targetIndex)
    visiting.delete(index)
    if (total > MAX_SVG_DRAWN)
      throw refuse(`the image is an SVG that draws more than ${MAX_SVG_DRAWN} elements through <use> references, over the limit for SVG`)
    weight.set(index, total)
    return total
  }
  return nodes.length === 0 ? 0 : measure(0)
}

/** Parses, checks and cleans an SVG. Throws ImageFormatError for malformed XML and for every limit. */
export function sanitiseSvg(bytes: Uint8Array): SafeSvg {
  let source: string
  try {
    source = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw corrupt('SVG is not valid UTF-8')
  }
  const parser = new SaxesParser({ xmlns: true, position: true })
  let elements = 0
  let root: SaxesTagNS | null = null
  /** Per open element: whether it is kept (its output written) and, when kept, its index in `nodes`. */
  const open: { kept: boolean; node: number; text: boolean }[] = []
  const nodes: Node[] = []
  const body: string[] = []
  let styleText: string[] | null = null
  let failure: Error | null = null
  /** Stops the parse at the first refusal (thrown through saxes' write), so a 10 MB bomb costs only the part read. */
  const fail = (error: Error): never => {
    failure ??= error
    throw failure
  }

  parser.on('error', (error) => fail(corrupt(`SVG is not well-formed XML: ${error.message}`)))
  parser.on('doctype', () =>
    fail(refuse('the image is an SVG with a DOCTYPE, which is refused: its entity declarations could load files or expand without bound')),
  )
  parser.on('opentag', (tag) => {
    elements++
    if (elements > MAX_SVG_ELEMENTS) fail(refuse(`the image is an SVG of more than ${MAX_SVG_ELEMENTS} elements, over the limit for SVG`))
    if (open.length >= MAX_SVG_DEPTH) fail(refuse(`the image is an SVG nested more than ${MAX_SVG_DEPTH} levels deep, over the limit for SVG`))
    const inSvg = tag.uri === SVG_NS || tag.uri === ''
    if (root === null) {
      if (!inSvg || tag.local !== 'svg') fail(refuse(`the image is XML whose root is <${tag.name}>, not <svg>`))
      root = tag
      nodes.push({ parent: -1, id: tag.attributes.id?.value ?? null, use: null })
      open.push({ kept: true, node: 0, text: false })
      return
    }
    const parent = open[open.length - 1]!
    const kept = parent.kept && inSvg && ELEMENTS.has(tag.local)
    if (!kept) {
      open.push({ kept: false, node: -1, text: false })
      return
    }
    const attributes: string[] = []
    let use: string | null = null
    for (const attribute of Object.values(tag.attributes)) {
      const value = safeAttribute(tag.local, attribute.local, attribute.uri, attribute.value)
      if (value === null) continue
      // xlink:href is written as href (SVG 2), so one declaration fewer and one name to check.
      attributes.push(` ${attribute.local}="${escapeAttribute(value)}"`)
      if (tag.local === 'use' && attribute.local === 'href') use = value.trim().slice(1)
    }
    nodes.push({ parent: parent.node, id: tag.attributes.id?.value ?? null, use })
    open.push({ kept: true, node: nodes.length - 1, text: TEXT_ELEMENTS.has(tag.local) })
    body.push(`<${tag.local}${attributes.join('')}${tag.isSelfClosing ? '/>' : '>'}`)
    if (tag.local === 'style') styleText = []
  })
  const onText = (text: string): void => {
    const current = open[open.length - 1]
    if (!current?.kept || !current.text) return
    if (styleText !== null) styleText.push(text)
    else body.push(escapeText(text))
  }
  parser.on('text', onText)
  parser.on('cdata', onText)
  parser.on('closetag', (tag) => {
    const closed = open.pop()
    if (!closed?.kept || open.length === 0 || tag.isSelfClosing) return
    if (tag.local === 'style' && styleText !== null) {
      const css = styleText.join('')
      // A style sheet that could reach outside the document is dropped whole; the drawing stays.
      if (isSelfContainedCss(css)) body.push(escapeText(css))
      styleText = null
    }
    body.push(`</${tag.local}>`)
  })
  try {
    parser.write(source).close()
  } catch (error) {
    throw failure ?? corrupt(`SVG is not well-formed XML: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (root === null) throw corrupt('SVG has no root element')
  drawnElements(nodes)

  const rootTag: SaxesTagNS = root
  const attributes = rootTag.attributes
  const viewBoxValue = attributes.viewBox?.value
  const viewBox = parseViewBox(viewBoxValue)
  const size = intrinsicSize(cssPixels(attributes.width?.value), cssPixels(attributes.height?.value), viewBox)
  const rootAttributes: string[] = []
  for (const attribute of Object.values(attributes)) {
    if (attribute.uri === '' && ['width', 'height', 'viewBox', 'x', 'y'].includes(attribute.local)) continue
    const value = safeAttribute('svg', attribute.local, attribute.uri, attribute.value)
    if (value !== null) rootAttributes.push(` ${attribute.local}="${escapeAttribute(value)}"`)
  }
  return { rootAttributes: rootAttributes.join(''), body: body.join(''), viewBox: viewBox ? viewBoxValue!.trim() : null, ...size }
}

/**
 * The safe SVG as a document `width`×`height` pixels large: the drawing scaled to it (through the
 * viewBox, or one made of the intrinsic size), so the rasteriser makes exactly the raster wanted
 * whatever size the file claimed.
 */
export function svgMarkup(svg: SafeSvg, width: number, height: number): string {
  const viewBox = svg.viewBox ?? `0 0 ${svg.width} ${svg.height}`
  return `<svg xmlns="${SVG_NS}"${svg.rootAttributes} width="${width}" height="${height}" viewBox="${escapeAttribute(viewBox)}">${svg.body}</svg>`
}

/** The raster for the model: the intrinsic size scaled (up or down: a drawing has no resolution of its own) to a longest side of maxSide. */
export function svgRasterSize(svg: Pick<SafeSvg, 'width' | 'height'>, maxSide: number): { width: number; height: number } {
  const scale = maxSide / Math.max(svg.width, svg.height)
  return { width: Math.max(1, Math.round(svg.width * scale)), height: Math.max(1, Math.round(svg.height * scale)) }
}
