// `alttext describe` and secrets and hostile inputs: the API key never shows in any output, a URL with
// credentials is refused without echoing them, a symbolic link loop in a folder does not trap the walk,
// and a hostile alt text (quotes, commas, line breaks) keeps its CSV row intact.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { CSV_COLUMNS, parseCsv } from '../../src/cli/describe/output'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { corruptImage, describeCommand, fixtureDir, uniqueImage } from './describe-support'

let env: AltTextEnv
const HOSTILE = 'A sign reading "Open, 24/7"\nand =HYPERLINK("x")'

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: { reply: HOSTILE } })
})
afterAll(async () => {
  await env?.stop()
})

describe('describe: security', () => {
  test('the API key appears in no output: stdout, stderr or the output file, on success or failure', async () => {
    const dir = fixtureDir({ 'a.png': uniqueImage(), 'bad.png': corruptImage() })
    const result = await describeCommand(['.', '-o', 'alt.jsonl'], { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }, dir)
    expect(result.code).toBe(1)
    const secret = env.key.slice(12)
    for (const text of [result.stdout, result.stderr, readFileSync(join(dir, 'alt.jsonl'), 'utf8')]) expect(text).not.toContain(secret)
  })

  test('a refused key is not echoed', async () => {
    const wrong = `alt_${'ab'.repeat(32)}`
    const result = await describeCommand(['.'], { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: wrong }, fixtureDir({ 'a.png': uniqueImage() }))
    expect(result.code).toBe(2)
    expect(result.stdout + result.stderr).not.toContain(wrong.slice(12))
  })

  test('a service URL with a password is refused without echoing it', async () => {
    const result = await describeCommand(
      ['--url', 'http://admin:hunter2@127.0.0.1:9', '.'],
      { ALTTEXT_API_KEY: env.key },
      fixtureDir({ 'a.png': uniqueImage() }),
    )
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--url')
    expect(result.stderr).not.toContain('hunter2')
  })

  test('a symbolic link to a parent folder does not trap the walk', async () => {
    const dir = fixtureDir({ 'photos/a.png': uniqueImage() })
    symlinkSync(dir, join(dir, 'photos', 'loop'))
    const result = await describeCommand(['photos'], { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }, dir)
    expect(result.code).toBe(0)
    expect(result.stdout.trim().split('\n')).toHaveLength(1)
  })

  test('an alt text with quotes, commas, a line break and a formula keeps its one CSV row', async () => {
    const dir = fixtureDir({ 'a.png': uniqueImage(), 'b, "quoted".png': uniqueImage() })
    const result = await describeCommand(['.', '-o', 'alt.csv'], { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }, dir)
    expect(result.code).toBe(0)
    const rows = parseCsv(readFileSync(join(dir, 'alt.csv'), 'utf8'))
    expect(rows).toHaveLength(3)
    for (const row of rows) expect(row).toHaveLength(CSV_COLUMNS.length)
    const byName = Object.fromEntries(rows.slice(1).map((row) => [row[0], row[1]]))
    expect(Object.keys(byName).sort()).toEqual(['a.png', 'b, "quoted".png'])
    // Whatever the service made of the model's text, the CSV gives it back unchanged.
    const served = await env.generate({ image_base64: Buffer.from(readFileSync(join(dir, 'a.png'))).toString('base64') })
    expect(byName['a.png']).toBe(served.body.alt_text)
  })

  test('a file name that a spreadsheet would run as a formula is guarded in the CSV too; a second run still resumes', async () => {
    const names = ['=HYPERLINK("x").png', '+cmd.png', '-2+3.png', '@SUM(A1).png', '\ttab.png', "'quote.png"]
    const dir = fixtureDir(Object.fromEntries(names.map((name) => [name, uniqueImage()])))
    const vars = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }
    const first = await describeCommand(['.', '-o', 'alt.csv'], vars, dir)
    expect(first.code).toBe(0)
    const text = readFileSync(join(dir, 'alt.csv'), 'utf8')
    // No row's first cell starts with = + - @ tab or CR, quoted or not.
    for (const line of text.split('\r\n').slice(1, -1)) expect(line).not.toMatch(/^"?[=+\-@\t\r]/)
    const sources = parseCsv(text)
      .slice(1)
      .map((row) => row[0])
      .sort()
    expect(sources).toEqual(["'\ttab.png", "''quote.png", "'+cmd.png", "'-2+3.png", '\'=HYPERLINK("x").png', "'@SUM(A1).png"])
    // Resume reads the guarded names back as the files they name: nothing is asked twice.
    const second = await describeCommand(['.', '-o', 'alt.csv'], vars, dir)
    expect(second.code).toBe(0)
    expect(second.stderr).toContain('already have a result')
    expect(readFileSync(join(dir, 'alt.csv'), 'utf8')).toBe(text)
  })

  test('a formula after a ";" or "," in a cell is guarded for spreadsheets that split on ";"; a second run still resumes', async () => {
    const names = ['Company logo;=cmd.png', 'a,+1.png', 'x;@SUM(A1).png']
    const dir = fixtureDir(Object.fromEntries(names.map((name) => [name, uniqueImage()])))
    const vars = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }
    const first = await describeCommand(['.', '-o', 'alt.csv'], vars, dir)
    expect(first.code).toBe(0)
    const text = readFileSync(join(dir, 'alt.csv'), 'utf8')
    const cells = text.split(/[\r\n]+/u).flatMap((line) => line.split(/[;,]/u).map((cell) => cell.replace(/^"+/u, '')))
    expect(cells.filter((cell) => /^[=+\-@\t\r]/u.test(cell))).toEqual([])
    const second = await describeCommand(['.', '-o', 'alt.csv'], vars, dir)
    expect(second.code).toBe(0)
    expect(second.stderr).toContain('already have a result')
    expect(readFileSync(join(dir, 'alt.csv'), 'utf8')).toBe(text)
  })
})
