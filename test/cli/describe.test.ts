// `alttext describe` against the real service with the fake model: folders walked, progress lines, the
// three output formats, Ctrl-C, resume after a kill -9 without a credit spent twice. The command runs
// in-process; a kill -9 and a real SIGINT need the binary (spawnDescribe).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseCsv } from '../../src/cli/describe/output'
import { plural } from '../../src/shared/wording'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { manualInterrupts, runCli } from '../support/process'
import { waitUntil } from '../support/service'
import { corruptImage, creditsUsed, describeCommand, fixtureDir, imageDir, jsonLines, spawnDescribe, uniqueImage } from './describe-support'

let env: AltTextEnv

beforeAll(async () => {
  // A request for German gets a German answer: an English one would be sent back for a translation.
  const german = 'Zwei Kinder lassen am windigen Strand einen roten Drachen steigen.'
  const english = 'Two children flying a red kite on a windy beach.'
  env = await startAltTextEnv({
    env: { ALTTEXT_FREE_CREDITS: '1000', ALTTEXT_MODEL_CONCURRENCY: '4' },
    ollama: { reply: ({ messages }) => (messages[0]?.content.includes('German') ? german : english) },
  })
})
afterAll(async () => {
  await env?.stop()
})

/** A fresh account (its own credits) and the environment the CLI reads. */
async function account() {
  const { apiKey } = await env.service.api.register()
  return { key: apiKey, vars: { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: apiKey } }
}

describe('describe: happy', () => {
  test('a folder is walked for images (by extension or first bytes); jsonl on stdout, progress lines on stderr, exit 0', async () => {
    const { key, vars } = await account()
    const dir = fixtureDir({
      'a.png': uniqueImage(),
      'sub/b.JPG': uniqueImage('jpeg'),
      'sub/deeper/no-extension': uniqueImage(),
      'notes.txt': 'not an image',
      '.hidden/c.png': uniqueImage(),
    })
    const result = await describeCommand(['.'], vars, dir)
    expect(result.stderr).toContain('3 images to do')
    expect(result.code).toBe(0)
    const records = jsonLines(result.stdout)
    expect(records.map((r) => r.source).sort()).toEqual(['a.png', 'sub/b.JPG', 'sub/deeper/no-extension'])
    for (const record of records) {
      expect(record).toMatchObject({ alt_text: 'Two children flying a red kite on a windy beach.', wcag_compliant: true, cached: false, language: 'en' })
    }
    // Plain lines (not a terminal): one per image, then the summary.
    expect(result.stderr).toMatch(/^\[1\/3\] ok /m)
    expect(result.stderr).toMatch(/^\[3\/3\] ok /m)
    expect(result.stderr).toMatch(/^3 done, 0 failed in \d+s$/m)
    expect(result.stderr).not.toContain('\x1b[')
    expect(await creditsUsed(env.service.api, key)).toBe(3)
  })

  test('the options reach the service; csv with --output; a second run over the same file spends nothing', async () => {
    const { key, vars } = await account()
    const dir = fixtureDir({ 'x.png': uniqueImage(), 'y.png': uniqueImage() })
    const before = env.ollama.chatRequests().length
    const args = [
      '--language',
      'de',
      '--style',
      'concise',
      '--max-length',
      '80',
      '--context',
      'Harbour festival',
      '--keywords',
      'kite,beach',
      '--detect-decorative',
      '.',
      '-o',
      'alt.csv',
    ]
    const first = await describeCommand(args, vars, dir)
    expect(first.code).toBe(0)
    expect(first.stdout).toBe('')
    const prompts = env.ollama
      .chatRequests()
      .slice(before)
      .map((body) => JSON.stringify(body))
    expect(prompts).toHaveLength(2)
    for (const prompt of prompts) {
      expect(prompt).toContain('Harbour festival')
      expect(prompt).toContain('kite')
    }
    const rows = parseCsv(readFileSync(join(dir, 'alt.csv'), 'utf8'))
    expect(rows[0]).toEqual([
      'source',
      'alt_text',
      'decorative',
      'decorative_reason',
      'wcag_compliant',
      'wcag_issues',
      'language',
      'cached',
      'error_code',
      'error_message',
      'text_in_image',
      'long_description',
    ])
    // Rows come in the order the answers arrived.
    expect(
      rows
        .slice(1)
        .map((row) => [row[0], row[6], row[8]])
        .sort(),
    ).toEqual([
      ['x.png', 'de', ''],
      ['y.png', 'de', ''],
    ])

    const second = await describeCommand(args, vars, dir)
    expect(second.code).toBe(0)
    expect(second.stderr).toContain('all 2 images already have a result')
    expect(env.ollama.chatRequests().length - before).toBe(2)
    expect(await creditsUsed(env.service.api, key)).toBe(2)
    expect(parseCsv(readFileSync(join(dir, 'alt.csv'), 'utf8'))).toEqual(rows)
  })

  test('json: one array at the end, the partial file gone; a file argument and a directory naming it count once', async () => {
    const { vars } = await account()
    const dir = fixtureDir({ 'p/one.png': uniqueImage(), 'p/two.webp': uniqueImage() })
    const result = await describeCommand(['p/one.png', 'p', '--output', 'out.json', '--quiet'], vars, dir)
    expect(result.code).toBe(0)
    expect(result.stderr).toMatch(/^2 done, 0 failed in \d+s\n$/)
    const records = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8'))
    expect(records.map((r: { source: string }) => r.source).sort()).toEqual(['p/one.png', 'p/two.webp'])
    expect(existsSync(join(dir, 'out.json.partial.jsonl'))).toBe(false)
  })

  test('resume after a kill -9 mid-run: the done images are skipped and each image is charged once', async () => {
    const { key, vars } = await account()
    const dir = imageDir(12)
    env.ollama.behave({ delayMs: 250 })
    try {
      const proc = spawnDescribe(['.', '-o', 'alt.jsonl', '--concurrency', '2'], vars, dir)
      const output = join(dir, 'alt.jsonl')
      await waitUntil(() => existsSync(output) && jsonLines(readFileSync(output, 'utf8')).length >= 4, 'four results written', 15_000)
      proc.kill('SIGKILL')
      await proc.exited
      const written = jsonLines(readFileSync(output, 'utf8'))
      expect(written.length).toBeGreaterThanOrEqual(4)
      expect(written.length).toBeLessThan(12)

      const before = env.ollama.chatRequests().length
      const resumed = await describeCommand(['.', '-o', 'alt.jsonl', '--concurrency', '2'], vars, dir)
      expect(resumed.code).toBe(0)
      expect(resumed.stderr).toContain(`${plural(12 - written.length, 'image')} to do, ${written.length} already done (skipped)`)
      const all = jsonLines(readFileSync(output, 'utf8'))
      expect(all.map((r) => r.source).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `img-${String(i).padStart(3, '0')}.png`))
      // Only the images without a result were asked for again (those killed in flight may have been
      // answered and charged already: they come back from the cache, free). The service may still be
      // finishing the killed run's two requests (--concurrency 2) when the count starts: they may add a call each.
      expect(env.ollama.chatRequests().length - before).toBeLessThanOrEqual(12 - written.length + 2)
      expect(await creditsUsed(env.service.api, key)).toBe(12)
    } finally {
      env.ollama.behave({ delayMs: 0 })
    }
  })

  test('Ctrl-C (SIGINT to the binary): nothing new is started, the requests in flight are written, exit 130', async () => {
    const { vars } = await account()
    const dir = imageDir(12)
    env.ollama.behave({ delayMs: 250 })
    try {
      const proc = spawnDescribe(['.', '-o', 'alt.jsonl', '--concurrency', '2'], vars, dir)
      const output = join(dir, 'alt.jsonl')
      await waitUntil(() => existsSync(output) && jsonLines(readFileSync(output, 'utf8')).length >= 2, 'two results written', 15_000)
      proc.kill('SIGINT')
      expect(await proc.exited).toBe(130)
      const stderr = await new Response(proc.stderr).text()
      expect(stderr).toContain('interrupted: finishing the requests in flight')
      const written = jsonLines(readFileSync(output, 'utf8'))
      expect(written.length).toBeLessThan(12)
      // The requests in flight were finished and written, not cut off.
      expect(written.every((r) => typeof r.alt_text === 'string')).toBe(true)
    } finally {
      env.ollama.behave({ delayMs: 0 })
    }
  })

  test('an interrupt handed to the command in-process stops it the same way', async () => {
    const { vars } = await account()
    const dir = imageDir(8)
    const interrupts = manualInterrupts()
    env.ollama.behave({ delayMs: 100 })
    try {
      const output = join(dir, 'alt.jsonl')
      const running = runCli(['describe', '.', '-o', 'alt.jsonl', '--concurrency', '2'], vars, { cwd: dir, interrupts })
      await waitUntil(() => existsSync(output) && jsonLines(readFileSync(output, 'utf8')).length >= 2, 'two results written', 15_000)
      interrupts.fire()
      const result = await running
      expect(result.code).toBe(130)
      expect(result.stderr).toContain('interrupted: finishing the requests in flight')
      expect(jsonLines(readFileSync(output, 'utf8')).length).toBeLessThan(8)
    } finally {
      env.ollama.behave({ delayMs: 0 })
    }
  })

  test('resume tries failed images again and drops their failure records', async () => {
    const { key, vars } = await account()
    const dir = fixtureDir({ 'good.png': uniqueImage(), 'bad.png': corruptImage() })
    const first = await describeCommand(['.', '-o', 'alt.jsonl'], vars, dir)
    expect(first.code).toBe(1)
    expect(first.stderr).toMatch(/^\[\d\/2\] failed bad\.png: invalid_image: /m)
    const failed = jsonLines(readFileSync(join(dir, 'alt.jsonl'), 'utf8')).find((r) => r.source === 'bad.png')
    expect(failed).toMatchObject({ error: { status: 400, code: 'invalid_image' } })

    writeFileSync(join(dir, 'bad.png'), uniqueImage())
    const second = await describeCommand(['.', '-o', 'alt.jsonl'], vars, dir)
    expect(second.code).toBe(0)
    expect(second.stderr).toContain('1 image to do, 1 already done (skipped)')
    const records = jsonLines(readFileSync(join(dir, 'alt.jsonl'), 'utf8'))
    expect(records.map((r) => r.source)).toEqual(['good.png', 'bad.png'])
    expect(records.every((r) => typeof r.alt_text === 'string')).toBe(true)
    expect(await creditsUsed(env.service.api, key)).toBe(2)
  })

  test('a cut-off last line (a kill in the middle of a write) is dropped and its image done again', async () => {
    const { vars } = await account()
    const dir = fixtureDir({ 'a.png': uniqueImage(), 'b.png': uniqueImage() })
    const first = await describeCommand(['.', '-o', 'alt.jsonl', '-c', '1'], vars, dir)
    expect(first.code).toBe(0)
    const text = readFileSync(join(dir, 'alt.jsonl'), 'utf8')
    writeFileSync(join(dir, 'alt.jsonl'), text.slice(0, text.length - 20))
    const second = await describeCommand(['.', '-o', 'alt.jsonl'], vars, dir)
    expect(second.code).toBe(0)
    expect(second.stderr).toContain('1 image to do, 1 already done')
    expect(jsonLines(readFileSync(join(dir, 'alt.jsonl'), 'utf8')).map((r) => r.source)).toEqual(['a.png', 'b.png'])
  })
})
