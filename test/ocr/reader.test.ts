// The OCR reader with its real engine (PaddleOCR on ONNX Runtime, in its worker) on images generated
// here: what it reads, in which order, what it says of text-free photos and of bytes that are no image,
// and how it waits, aborts and closes.
import { afterAll, describe, expect, test } from 'bun:test'
import sharp from 'sharp'
import { characterErrorRate, generateCorpus } from '../../scripts/ocr/corpus.ts'
import { createTextReader, ocrAvailable, TextReadError } from '../../src/ocr/index.ts'

const reader = createTextReader()
afterAll(() => reader.close())

const live = () => new AbortController().signal

/** Dark text at given places on a plain light picture. */
async function plainImage(texts: { text: string; x: number; y: number; size?: number }[], width = 1024, height = 768): Promise<Uint8Array> {
  const body = texts.map(({ text, x, y, size }) => `<text x="${x}" y="${y}" font-size="${size ?? 32}">${text}</text>`).join('')
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#f4f1ea"/><g font-family="DejaVu Sans" fill="#1a1a1a">${body}</g></svg>`
  return new Uint8Array(await sharp(Buffer.from(svg)).png().toBuffer())
}

describe('reading text', () => {
  test('generated photo-like images: a character error rate within 0.05', async () => {
    const images = await generateCorpus({
      seed: 7,
      textFree: 0,
      texts: [['Spring sale this weekend'], ['Platform 4', 'Trains to Leeds'], ['Meeting room booked'], ['Open daily 10 to 6'], ['Turn left for parking']],
    })
    const rates: number[] = []
    for (const image of images) {
      const read = await reader.read(image.png, live())
      rates.push(characterErrorRate(image.truth, read?.text ?? ''))
    }
    expect(rates.reduce((sum, rate) => sum + rate, 0) / rates.length).toBeLessThanOrEqual(0.05)
  })

  test('lines come top to bottom, and words on one row left to right', async () => {
    const image = await plainImage([
      { text: 'Second line below', x: 80, y: 400 },
      { text: 'First line on top', x: 80, y: 200 },
      { text: 'RIGHT', x: 700, y: 600 },
      { text: 'LEFT', x: 80, y: 600 },
    ])
    const read = await reader.read(image, live())
    expect(read?.text).toBe('First line on top\nSecond line below\nLEFT RIGHT')
    expect(read?.lines.map((line) => line.text)).toEqual(['First line on top', 'Second line below', 'LEFT', 'RIGHT'])
  })

  test('each line has its confidence and its box inside the image; coverage is the boxes’ share', async () => {
    const image = await plainImage([{ text: 'Annual general meeting', x: 100, y: 300, size: 48 }])
    const read = await reader.read(image, live())
    expect(read?.lines).toHaveLength(1)
    const line = read!.lines[0]!
    expect(line.confidence).toBeGreaterThan(0.8)
    expect(line.confidence).toBeLessThanOrEqual(1)
    // The text's own extent: from x=100, baseline y=300, about 48 px high.
    expect(line.box.x).toBeGreaterThanOrEqual(80)
    expect(line.box.x).toBeLessThanOrEqual(110)
    expect(line.box.y).toBeGreaterThanOrEqual(245)
    expect(line.box.y + line.box.height).toBeLessThanOrEqual(325)
    expect(line.box.x + line.box.width).toBeLessThanOrEqual(1024)
    expect(read!.coverage).toBeGreaterThan(0)
    expect(read!.coverage).toBeLessThan(0.1)
  })

  test('Chinese signs on photo-like backgrounds, read exactly (the built-in model is Chinese and English)', async () => {
    const images = await generateCorpus({ seed: 7, texts: [['欢迎光临', '营业时间 9:00-18:00'], ['北京南站']], textFree: 0 })
    for (const image of images) expect((await reader.read(image.png, live()))?.text).toBe(image.truth)
  })

  // The built-in model's dictionary has é, è, à, ä, ü, É, Ü but not ñ, ø, ß, ç (docs/ocr.md).
  test('accented letters are read', async () => {
    const read = await reader.read(await plainImage([{ text: 'Café résumé Qualität', x: 80, y: 300, size: 40 }]), live())
    expect(read?.text).toBe('Café résumé Qualität')
  })

  test('text-free photo-like images give null', async () => {
    for (const image of await generateCorpus({ seed: 11, texts: [], textFree: 3 })) expect(await reader.read(image.png, live())).toBeNull()
  })
})

describe('bad input, aborts and closing', () => {
  test('bytes that are no image are a TextReadError, and the reader reads on', async () => {
    const error = await reader.read(new TextEncoder().encode('this is not an image'), live()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TextReadError)
    expect((error as TextReadError).reason).toBe('undecodable')
    expect((error as TextReadError).message).toContain('could not be decoded')
    const read = await reader.read(await plainImage([{ text: 'Still reading', x: 80, y: 300 }]), live())
    expect(read?.text).toBe('Still reading')
  })

  test('an aborted signal is refused at once; one aborted while waiting stops waiting', async () => {
    const image = await plainImage([{ text: 'Waiting in line', x: 80, y: 300 }])
    const gone = new AbortController()
    gone.abort(new Error('the request ended'))
    expect(reader.read(image, gone.signal)).rejects.toThrow('the request ended')

    const first = reader.read(image, live())
    const waiting = new AbortController()
    const second = reader.read(image, waiting.signal)
    waiting.abort()
    expect((await second.catch((e: unknown) => e)) as DOMException).toHaveProperty('name', 'AbortError')
    expect((await first)?.text).toBe('Waiting in line')
  })

  test('a closed reader refuses reads; reads under way end with it', async () => {
    const own = createTextReader()
    const image = await plainImage([{ text: 'Closing time', x: 80, y: 300 }])
    const underWay = own.read(image, live())
    await own.close()
    expect(underWay).rejects.toThrow('closed')
    expect(own.read(image, live())).rejects.toThrow('closed')
  })
})

describe('platforms', () => {
  test('OCR where onnxruntime-node has a build, and only there', () => {
    for (const [platform, arch] of [
      ['linux', 'x64'],
      ['linux', 'arm64'],
      ['darwin', 'arm64'],
      ['win32', 'x64'],
    ] as const)
      expect(ocrAvailable(platform, arch)).toBe(true)
    expect(ocrAvailable('darwin', 'x64')).toBe(false)
    expect(ocrAvailable('freebsd', 'x64')).toBe(false)
  })
})
