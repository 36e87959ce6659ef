// AVIF, SVG and animations through the intake (accept, then prepare), with real sharp: what the
// model is sent, pixel by pixel where it matters, and the refusals of files that lie.
import { afterAll, describe, expect, test } from 'bun:test'
import { blake3 } from '@napi-rs/blake-hash'
import { gridLayout, keyFrameIndices, MAX_ANIMATION_PIXELS, SEPARATOR_PIXELS } from '../../src/intake/animation.ts'
import { createImageIntake, type PreparedImage } from '../../src/intake/index.ts'
import { makeAvif, makeSolidAnimation, withAvifSize } from '../support/images.ts'
import { makeAnimatedWebp, PNG_MAGIC, pixelAt, startsWithBytes } from './fixtures.ts'

const intake = createImageIntake({ allowPrivateHosts: [] })
afterAll(() => intake.close())

const RED = [255, 0, 0] as const
const GREEN = [0, 255, 0] as const
const BLUE = [0, 0, 255] as const
const YELLOW = [255, 255, 0] as const

const received = (bytes: Uint8Array) => ({ bytes, contentHash: blake3(Buffer.from(bytes)).toString('hex') })
const accept = (bytes: Uint8Array) => intake.accept(received(bytes), AbortSignal.timeout(10_000))

const animatedGif = (width: number, height: number, colours: ReadonlyArray<readonly [number, number, number]>) =>
  makeSolidAnimation('gif', width, height, colours)

const near = (actual: number[], expected: readonly number[]): void => {
  for (const [i, channel] of actual.entries()) expect(Math.abs(channel - expected[i]!)).toBeLessThanOrEqual(8)
}

/** The centre of each cell of the grid the model was sent. */
async function cellColours(prepared: PreparedImage, count: number, width: number, height: number): Promise<number[][]> {
  const layout = gridLayout(count, width, height, 1024)
  expect({ width: prepared.width, height: prepared.height }).toEqual({ width: layout.width, height: layout.height })
  const colours: number[][] = []
  for (let cell = 0; cell < count; cell++) {
    const x = (cell % layout.columns) * (layout.tileWidth + SEPARATOR_PIXELS) + Math.floor(layout.tileWidth / 2)
    const y = Math.floor(cell / layout.columns) * (layout.tileHeight + SEPARATOR_PIXELS) + Math.floor(layout.tileHeight / 2)
    colours.push(await pixelAt(prepared.data, x, y))
  }
  return colours
}

describe('happy: animations become a grid of key frames', () => {
  test('four frames of a GIF in the four quadrants, in reading order, with a separator', async () => {
    const image = await accept(await animatedGif(40, 30, [RED, GREEN, BLUE, YELLOW]))
    expect(image.frames).toBe(4)
    const prepared = await intake.prepare(image)
    expect(prepared.keyFrames).toBe(4)
    expect(startsWithBytes(prepared.data, PNG_MAGIC)).toBe(true)
    const colours = await cellColours(prepared, 4, 40, 30)
    ;[RED, GREEN, BLUE, YELLOW].forEach((colour, i) => {
      near(colours[i]!, colour)
    })
    // The separator between the first two cells is grey.
    near(await pixelAt(prepared.data, 40 + 1, 10), [128, 128, 128])
  })

  test('an animated WebP the same way', async () => {
    const image = await accept(makeAnimatedWebp(30, 20, [BLUE, YELLOW, RED, GREEN]))
    const prepared = await intake.prepare(image)
    expect(prepared.keyFrames).toBe(4)
    const colours = await cellColours(prepared, 4, 30, 20)
    ;[BLUE, YELLOW, RED, GREEN].forEach((colour, i) => {
      near(colours[i]!, colour)
    })
  })

  test('two frames side by side', async () => {
    const prepared = await intake.prepare(await accept(await animatedGif(20, 20, [GREEN, BLUE])))
    expect(prepared.keyFrames).toBe(2)
    const colours = await cellColours(prepared, 2, 20, 20)
    near(colours[0]!, GREEN)
    near(colours[1]!, BLUE)
  })

  test('of ten frames, the first, the last and two evenly between', async () => {
    const colours = Array.from({ length: 10 }, (_, i) => [i * 25, 0, 255 - i * 25] as const)
    const prepared = await intake.prepare(await accept(await animatedGif(16, 16, colours)))
    const seen = await cellColours(prepared, 4, 16, 16)
    ;[0, 3, 6, 9].forEach((frame, i) => {
      near(seen[i]!, colours[frame]!)
    })
  })

  test('a large animation fits the model size', async () => {
    const prepared = await intake.prepare(await accept(await animatedGif(1600, 1200, [RED, GREEN, BLUE, YELLOW])))
    expect(Math.max(prepared.width, prepared.height)).toBeLessThanOrEqual(1024)
    expect(prepared.keyFrames).toBe(4)
  })

  test('a still GIF stays one frame', async () => {
    const image = await accept(await animatedGif(10, 10, [RED]))
    expect(image.frames).toBeUndefined()
    const still = await intake.prepare(image)
    expect(still.keyFrames).toBeUndefined()
    expect(still.width).toBe(10)
  })

  test('key frames: evenly spaced over what fits the decoding budget', () => {
    expect(keyFrameIndices(1, 10, 10)).toEqual([0])
    expect(keyFrameIndices(3, 10, 10)).toEqual([0, 1, 2])
    expect(keyFrameIndices(100, 10, 10)).toEqual([0, 33, 66, 99])
    // 1000 frames of 1000×1000: only the first 100 megapixels' worth are considered.
    expect(keyFrameIndices(1000, 1000, 1000)).toEqual([0, 33, 66, 99])
    expect(keyFrameIndices(5, MAX_ANIMATION_PIXELS, 1)).toEqual([0])
  })
})

describe('happy: AVIF and SVG', () => {
  test('an AVIF is decoded and sent as PNG', async () => {
    const image = await accept(await makeAvif(64, 48, BLUE))
    expect(image).toMatchObject({ format: 'avif', width: 64, height: 48 })
    const prepared = await intake.prepare(image)
    expect(prepared).toMatchObject({ mime: 'image/png', width: 64, height: 48 })
    near(await pixelAt(prepared.data, 32, 24), BLUE)
  })

  test('an SVG is rasterised at the model size and drawn', async () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 20 10"><rect width="10" height="10" fill="#f00"/><rect x="10" width="10" height="10" fill="#00f"/></svg>'
    const image = await accept(new TextEncoder().encode(svg))
    expect(image).toMatchObject({ format: 'svg', width: 20, height: 10 })
    const prepared = await intake.prepare(image)
    expect(prepared).toMatchObject({ mime: 'image/png', width: 1024, height: 512 })
    near(await pixelAt(prepared.data, 256, 256), RED)
    near(await pixelAt(prepared.data, 768, 256), BLUE)
  })
})

describe('error: files that lie about their size', () => {
  test('an AVIF whose header says 100000×100000 is refused by the pixel cap before decoding', async () => {
    await expect(accept(withAvifSize(await makeAvif(64, 48), 100_000, 100_000))).rejects.toMatchObject({
      code: 'invalid_image',
      message: 'the image is 100000×100000 pixels, over the limit of 50000000 pixels',
    })
  })

  test.each([
    [8, 8],
    [640, 480],
  ])('an AVIF whose header says %i×%i but whose picture is 64×48 is refused as corrupt', async (width, height) => {
    const image = await accept(withAvifSize(await makeAvif(64, 48), width, height))
    await expect(intake.prepare(image)).rejects.toMatchObject({ code: 'invalid_image', message: expect.stringMatching(/^the image is truncated or corrupt/) })
  })

  test('an AVIF whose header says 64×48 but whose picture is 4000×4000 is refused before that is decoded', async () => {
    const image = await accept(withAvifSize(await makeAvif(4000, 4000), 64, 48))
    // libheif's limit follows the declared size: the 64-megabyte picture is never allocated.
    await expect(intake.prepare(image)).rejects.toMatchObject({ code: 'invalid_image', message: expect.stringMatching(/^the image is truncated or corrupt/) })
  })

  test('an SVG declaring 100000×100000 is refused by the pixel cap', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"><rect width="1" height="1"/></svg>'
    await expect(accept(new TextEncoder().encode(svg))).rejects.toMatchObject({
      code: 'invalid_image',
      message: expect.stringMatching(/100000×100000 pixels, over the limit/),
    })
  })
})
