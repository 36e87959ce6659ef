// `alttext describe --long-description`: the option reaches the service (upload and URL), the long
// description is its own CSV column and JSON field (null for a simple image), a CSV written before the
// column existed is resumed, and a long description with line breaks, quotes or a formula stays one cell.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CSV_COLUMNS, parseCsv } from '../../src/cli/describe/output'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { LONG_DESCRIPTION } from '../support/fake-ollama'
import { makePng } from '../support/images'
import { creditsUsed, describeCommand, fixtureDir, jsonLines, uniqueImage } from './describe-support'

let env: AltTextEnv
/** The fake model finds images of this width complex. */
const CHART_WIDTH = 211

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: { complex: (image) => image.width === CHART_WIDTH } })
}, 60_000)
afterAll(() => env?.stop())

let height = 50
const chart = () => makePng(CHART_WIDTH, ++height)

async function account() {
  const { apiKey } = await env.service.api.register()
  return { key: apiKey, vars: { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: apiKey } }
}

describe('describe --long-description', () => {
  test("csv: the long_description column holds a chart's long description, empty for a photo; one credit each", async () => {
    const { key, vars } = await account()
    const dir = fixtureDir({ 'chart.png': chart(), 'photo.png': uniqueImage() })
    const result = await describeCommand(['--long-description', '.', '-o', 'alt.csv'], vars, dir)
    expect(result.code).toBe(0)
    expect(result.stderr).toMatch(/ok chart\.png.*long description/)
    const rows = parseCsv(readFileSync(join(dir, 'alt.csv'), 'utf8'))
    expect(rows[0]).toEqual([...CSV_COLUMNS])
    expect(rows[0]?.at(-1)).toBe('long_description')
    const bySource = Object.fromEntries(rows.slice(1).map((row) => [row[0], row.at(-1)]))
    expect(bySource).toEqual({ 'chart.png': LONG_DESCRIPTION, 'photo.png': '' })
    expect(await creditsUsed(env.service.api, key)).toBe(2)
  })

  test('jsonl: long_description in every record; a URL gets the option too', async () => {
    const { vars } = await account()
    const dir = fixtureDir({ 'chart.png': chart() })
    const url = env.serve(chart())
    const result = await describeCommand(['--long-description', 'chart.png', url], vars, dir)
    expect(result.code).toBe(0)
    const records = jsonLines(result.stdout)
    expect(records).toHaveLength(2)
    for (const record of records) expect(record.long_description).toBe(LONG_DESCRIPTION)
  })

  test('without the flag: the model is not asked, the column is empty', async () => {
    const { vars } = await account()
    const dir = fixtureDir({ 'chart.png': chart() })
    const before = env.ollama.chatRequests().length
    const result = await describeCommand(['.'], vars, dir)
    expect(result.code).toBe(0)
    expect(jsonLines(result.stdout)[0]?.long_description).toBeNull()
    expect(JSON.stringify(env.ollama.chatRequests().slice(before))).not.toContain('long_description')
  })

  test('a CSV of the version before the column is resumed: its rows kept with an empty cell, the header made current', async () => {
    const { vars } = await account()
    const dir = fixtureDir({ 'old.png': uniqueImage(), 'new.png': chart() })
    const earlier = CSV_COLUMNS.slice(0, -1)
    writeFileSync(join(dir, 'alt.csv'), `${earlier.join(',')}\r\nold.png,A kite.,false,,true,,en,false,,,\r\n`)
    const result = await describeCommand(['--long-description', '.', '-o', 'alt.csv'], vars, dir)
    expect(result.code).toBe(0)
    const rows = parseCsv(readFileSync(join(dir, 'alt.csv'), 'utf8'))
    expect(rows[0]).toEqual([...CSV_COLUMNS])
    expect(rows[1]).toEqual(['old.png', 'A kite.', 'false', '', 'true', '', 'en', 'false', '', '', '', ''])
    expect(rows[2]?.[0]).toBe('new.png')
    expect(rows[2]?.at(-1)).toBe(LONG_DESCRIPTION)
  })
})

describe('describe --long-description: security', () => {
  test('a long description starting with a formula is guarded in its CSV cell', async () => {
    env.ollama.behave({ longDescription: '=HYPERLINK("https://evil.example/","click") A chart of sales by month, rising.' })
    try {
      const { vars } = await account()
      const dir = fixtureDir({ 'chart.png': chart() })
      const result = await describeCommand(['--long-description', '.', '-f', 'csv'], vars, dir)
      expect(result.code).toBe(0)
      const cell = parseCsv(result.stdout)[1]?.at(-1) ?? ''
      expect(cell.startsWith('=')).toBe(false)
      expect(cell).toContain('A chart of sales by month')
    } finally {
      env.ollama.behave({ longDescription: LONG_DESCRIPTION })
    }
  })
})
