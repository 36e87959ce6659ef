// The OCR corpus, generated in code (nothing committed): text rendered by sharp/librsvg from SVG over
// photo-like backgrounds (gradients, soft blobs, grain), in the fonts Debian's fonts-dejavu-core,
// fonts-liberation and (for Chinese) fonts-wqy-microhei carry, at 12–72 px, in several colours, slightly rotated, one to four lines, with
// accented letters; and text-free photo-like images, on which a reader must find nothing. Each image
// comes with its ground truth. Seeded, so every run measures the same pictures.
//
//   bun scripts/ocr/corpus.ts [--out DIR]   writes the images and truth.json to DIR to look at
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { distance } from 'fastest-levenshtein'
import sharp from 'sharp'

export type CorpusImage = {
  name: string
  /** PNG bytes, 1024 px on the long side (the size the service prepares for the model). */
  png: Uint8Array
  /** The text shown, lines in reading order joined by "\n"; "" for a text-free image. */
  truth: string
}

const FONTS = ['DejaVu Sans', 'DejaVu Serif', 'DejaVu Sans Mono', 'Liberation Sans', 'Liberation Serif', 'Liberation Mono']

/** Lines a sign, a banner, a slide or a screenshot could carry; accents included. */
const TEXTS: string[][] = [
  ['Grand Opening Saturday'],
  ['Café Müller', 'Kaffee und Kuchen'],
  ['Señor Niño', 'Mañana a las 9'],
  ['Øresund Bridge', 'Copenhagen 16 km'],
  ['Quarterly revenue 2026', 'Up 14% on last year'],
  ['EXIT'],
  ['Welcome to the conference', 'Hall B, second floor', 'Registration opens at 8:30'],
  ['Crème brûlée', 'Tarte aux pommes', 'Mousse au chocolat', 'Île flottante'],
  ['Save 50% today only'],
  ['Über uns', 'Größe und Qualität'],
  ['Keep calm and read on'],
  ['Error 404: page not found'],
  ['São Paulo', 'Rua Augusta 1500'],
  ['Fjord tours from Bergen', 'Daily at 10:00 and 14:00'],
  ['Please do not feed the animals'],
  ['Jalapeño nachos 7.50'],
  ['Step 1: unplug the device', 'Step 2: wait ten seconds'],
  ['Smørrebrød', 'Frokost kl. 12'],
  ['Naïve café résumé'],
  ['Open Monday to Friday', '9 am to 5 pm'],
  ['Total: 1,284 users'],
  ['Zürich Hauptbahnhof'],
  ['Annual Report', 'Prepared for the board'],
  ['Library closed for renovation'],
  ['Peña Nieto Avenue'],
  ['The quick brown fox', 'jumps over the lazy dog'],
  ['Sale ends Sunday'],
  ['Garçon, l’addition!'],
  // Chinese, which the built-in model reads (WenQuanYi Micro Hei, Debian's fonts-wqy-microhei).
  ['欢迎光临', '营业时间 9:00-18:00'],
  ['出口'],
  ['北京南站', '二号线换乘'],
]

/** Han script: such a line is set in the CJK font, each character about one em wide. */
const HAN = /\p{Script=Han}/u
const CJK_FONT = 'WenQuanYi Micro Hei'

// Cycled over the texts; 72 falls on a short one (a long line is shrunk to fit the width).
const SIZES = [12, 14, 16, 20, 24, 72, 32, 40, 48, 56, 64, 28]
const TEXT_FREE = 8

/** A small seeded generator (mulberry32): the same corpus on every run and machine. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Rgb = [number, number, number]

/**
 * A photo-like background: a two-colour gradient, soft blobs of other colours, a few hard-edged shapes
 * (windows, poles) and grain. Its brightness stays in one half of the range (`dark` or light), so
 * text of the other half stays legible, as on a real sign or banner.
 */
async function background(width: number, height: number, rand: () => number, dark: boolean): Promise<Uint8Array> {
  const tone = (): Rgb => {
    const base = dark ? 10 : 150
    return [base + rand() * 95, base + rand() * 95, base + rand() * 95]
  }
  const [a, b] = [tone(), tone()]
  const blobs = Array.from({ length: 5 }, () => ({ x: rand() * width, y: rand() * height, r: (0.1 + rand() * 0.3) * width, colour: tone() }))
  const shapes = Array.from(
    { length: 3 },
    () =>
      `<rect x="${rand() * width}" y="${rand() * height}" width="${20 + rand() * 200}" height="${20 + rand() * 300}" fill="rgb(${tone().map(Math.round).join(',')})" opacity="0.5"/>`,
  )
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="${rand()}" y2="1">
      <stop offset="0" stop-color="rgb(${a.map(Math.round).join(',')})"/><stop offset="1" stop-color="rgb(${b.map(Math.round).join(',')})"/>
    </linearGradient><filter id="soft"><feGaussianBlur stdDeviation="${width / 20}"/></filter></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>
    <g filter="url(#soft)">${blobs.map((blob) => `<circle cx="${blob.x}" cy="${blob.y}" r="${blob.r}" fill="rgb(${blob.colour.map(Math.round).join(',')})" opacity="0.7"/>`).join('')}</g>
    ${shapes.join('')}
  </svg>`
  const { data } = await sharp(Buffer.from(svg)).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  // Grain: a photo's sensor noise, ±12 levels a channel.
  for (let i = 0; i < data.length; i++) data[i] = Math.max(0, Math.min(255, data[i]! + (rand() - 0.5) * 24))
  return new Uint8Array(data.buffer, data.byteOffset, data.length)
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** The text as an SVG layer: left-aligned lines, one font and colour, rotated by a few degrees about its middle. */
function textLayer(width: number, height: number, lines: string[], font: string, size: number, colour: string, degrees: number, rand: () => number): string {
  const lineHeight = Math.round(size * 1.35)
  const blockHeight = lineHeight * lines.length
  // Rough block width (average glyph ~0.6 em), to keep the block inside the picture.
  const blockWidth = Math.max(...lines.map((line) => line.length)) * size * 0.62
  const x = Math.max(16, rand() * Math.max(16, width - blockWidth - 32))
  const y = Math.max(16, rand() * Math.max(16, height - blockHeight - 32)) + size
  const tspans = lines.map((line, i) => `<text x="${x.toFixed(1)}" y="${(y + i * lineHeight).toFixed(1)}">${escapeXml(line)}</text>`).join('')
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <g transform="rotate(${degrees.toFixed(2)} ${width / 2} ${height / 2})" font-family="${font}" font-size="${size}" fill="${colour}">${tspans}</g>
  </svg>`
}

export type CorpusOptions = {
  /** Another seed: other backgrounds, colours, angles and places. */
  seed?: number
  /** Other texts (each a list of lines) instead of the corpus's own. */
  texts?: string[][]
  /** How many text-free images. */
  textFree?: number
}

/** Renders the corpus: one image per text (each with its font, size, colour, angle) and the text-free ones. */
export async function generateCorpus(options: CorpusOptions = {}): Promise<CorpusImage[]> {
  const rand = random(options.seed ?? 34)
  const images: CorpusImage[] = []
  for (const [i, lines] of (options.texts ?? TEXTS).entries()) {
    const landscape = i % 3 !== 2
    const [width, height] = landscape ? [1024, 768] : [768, 1024]
    const dark = rand() < 0.5
    const han = lines.some((line) => HAN.test(line))
    const font = han ? CJK_FONT : FONTS[i % FONTS.length]!
    // The size cycles through 12–72 px, but a long line must fit the width.
    const longest = Math.max(...lines.map((line) => line.length))
    const size = Math.min(SIZES[i % SIZES.length]!, Math.floor((width - 64) / (longest * (han ? 1 : 0.62))))
    const light = () => Math.round(215 + rand() * 40)
    const deep = () => Math.round(rand() * 60)
    // A tinted colour of the other half of the range: white, yellow, cyan on dark; black, navy, maroon on light.
    const colour = dark
      ? `rgb(${light()},${light()},${Math.round(rand() < 0.3 ? 40 + rand() * 60 : 215 + rand() * 40)})`
      : `rgb(${deep()},${deep()},${deep() + (rand() < 0.4 ? 80 : 0)})`
    const degrees = (rand() * 2 - 1) * 3
    const pixels = await background(width, height, rand, dark)
    const layer = textLayer(width, height, lines, font, size, colour, degrees, rand)
    const png = await sharp(pixels, { raw: { width, height, channels: 3 } })
      .composite([{ input: Buffer.from(layer) }])
      .png()
      .toBuffer()
    const slug =
      lines[0]!
        .toLowerCase()
        .normalize('NFD')
        .replace(/\p{M}/gu, '')
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, '') || 'han'
    images.push({ name: `${String(i + 1).padStart(2, '0')}-${slug}-${size}px`, png: new Uint8Array(png), truth: lines.join('\n') })
  }
  for (let i = 0; i < (options.textFree ?? TEXT_FREE); i++) {
    const [width, height] = i % 2 === 0 ? [1024, 768] : [768, 1024]
    const pixels = await background(width, height, rand, rand() < 0.5)
    const png = await sharp(pixels, { raw: { width, height, channels: 3 } })
      .png()
      .toBuffer()
    images.push({ name: `text-free-${i + 1}`, png: new Uint8Array(png), truth: '' })
  }
  return images
}

/** Text as the error rate compares it: Unicode NFC, any run of white space (line breaks too) one space. */
export const normaliseText = (text: string) => text.normalize('NFC').replace(/\s+/g, ' ').trim()

/** Character error rate: edits (Levenshtein) from the truth to what was read, over the truth's length. */
export function characterErrorRate(truth: string, read: string): number {
  const expected = normaliseText(truth)
  const got = normaliseText(read)
  if (expected.length === 0) return got.length === 0 ? 0 : 1
  return distance(expected, got) / expected.length
}

if (import.meta.main) {
  const at = process.argv.indexOf('--out')
  const out = at > 0 ? process.argv[at + 1] : undefined
  const corpus = await generateCorpus()
  if (out) {
    mkdirSync(out, { recursive: true })
    for (const image of corpus) writeFileSync(join(out, `${image.name}.png`), image.png)
    writeFileSync(join(out, 'truth.json'), JSON.stringify(Object.fromEntries(corpus.map((image) => [image.name, image.truth])), null, 2))
    console.log(`wrote ${corpus.length} images and truth.json to ${out}`)
  } else {
    for (const image of corpus) console.log(`${image.name}\t${JSON.stringify(image.truth)}`)
  }
}
