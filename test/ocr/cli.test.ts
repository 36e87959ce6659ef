// `alttext ocr FILE` in this process: the text, --json, an operator's model folder (ALTTEXT_OCR_MODELS),
// and what it says of a missing file, bytes that are no image and a folder without a model.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import sharp from 'sharp'
import { REPO_ROOT, runCli } from '../support/process'

let dir: string
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'alttext-ocr-cli-'))
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="400"><rect width="100%" height="100%" fill="#fff"/><g font-family="DejaVu Sans" font-size="40" fill="#000"><text x="40" y="120">Fire exit</text><text x="40" y="240">Keep clear</text></g></svg>`
  await sharp(Buffer.from(svg)).png().toFile(join(dir, 'sign.png'))
  await sharp({ create: { width: 640, height: 480, channels: 3, background: '#7a9cc6' } })
    .png()
    .toFile(join(dir, 'sky.png'))
  writeFileSync(join(dir, 'noise.png'), 'not a picture at all')
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('alttext ocr', () => {
  test('prints the text, a line per line; nothing for an image without text', async () => {
    expect(await runCli(['ocr', join(dir, 'sign.png')])).toEqual({ code: 0, stdout: 'Fire exit\nKeep clear\n', stderr: '' })
    expect(await runCli(['ocr', join(dir, 'sky.png')])).toEqual({ code: 0, stdout: '', stderr: '' })
  })

  test('--json prints a line per file: the lines with confidence and box, or null, and the time', async () => {
    const result = await runCli(['ocr', '--json', 'sign.png', 'sky.png'], {}, { cwd: dir })
    expect(result.code).toBe(0)
    const [sign, sky] = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(sign).toMatchObject({ file: 'sign.png', ms: expect.any(Number), read: { text: 'Fire exit\nKeep clear', coverage: expect.any(Number) } })
    expect(sign.read.lines).toHaveLength(2)
    expect(sign.read.lines[0]).toMatchObject({ text: 'Fire exit', confidence: expect.any(Number), box: { x: expect.any(Number), y: expect.any(Number) } })
    expect(sky).toEqual({ file: 'sky.png', ms: expect.any(Number), read: null })
  })

  test('several files: each after its name', async () => {
    expect(await runCli(['ocr', 'sign.png', 'sky.png'], {}, { cwd: dir })).toEqual({
      code: 0,
      stdout: '==> sign.png <==\nFire exit\nKeep clear\n==> sky.png <==\n',
      stderr: '',
    })
  })

  test('reads with an operator’s model folder (ALTTEXT_OCR_MODELS)', async () => {
    const models = join(dir, 'models')
    const assets = join(REPO_ROOT, 'node_modules', '@gutenye', 'ocr-models', 'assets')
    rmSync(models, { recursive: true, force: true })
    mkdirSync(models)
    copyFileSync(join(assets, 'ch_PP-OCRv4_rec_infer.onnx'), join(models, 'rec.onnx'))
    // The same model with F and K swapped in its dictionary: what is printed shows the folder's was read.
    const swapped = readFileSync(join(assets, 'ppocr_keys_v1.txt'), 'utf8')
      .split('\n')
      .map((character) => (character === 'F' ? 'K' : character === 'K' ? 'F' : character))
    writeFileSync(join(models, 'dict.txt'), swapped.join('\n'))
    expect(await runCli(['ocr', join(dir, 'sign.png')], { ALTTEXT_OCR_MODELS: models })).toEqual({ code: 0, stdout: 'Kire exit\nFeep clear\n', stderr: '' })
  })

  test('a missing file, bytes that are no image (the others still read), a folder without a model, no file at all', async () => {
    const missing = await runCli(['ocr', join(dir, 'gone.png')])
    expect(missing).toMatchObject({ code: 1, stdout: '' })
    expect(missing.stderr).toContain('ENOENT')
    const noise = await runCli(['ocr', '--json', 'noise.png', 'sign.png'], {}, { cwd: dir })
    expect(noise.code).toBe(1)
    const [bad, good] = noise.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(bad).toMatchObject({ file: 'noise.png', read: null, error: expect.stringContaining('could not be decoded') })
    expect(good.read.text).toBe('Fire exit\nKeep clear')
    expect(noise.stderr).toContain('noise.png: the image could not be decoded')
    const folder = await runCli(['ocr', join(dir, 'sign.png')], { ALTTEXT_OCR_MODELS: dir })
    expect(folder).toMatchObject({ code: 2, stdout: '' })
    expect(folder.stderr).toContain('ALTTEXT_OCR_MODELS')
    expect(folder.stderr).toContain('rec.onnx')
    expect(await runCli(['ocr'])).toMatchObject({ code: 2, stdout: '' })
  })
})
