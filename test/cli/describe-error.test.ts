// `alttext describe` when things go wrong: usage errors (exit 2, nothing sent), a refused key or a
// service that is not there (exit 2), images that fail (exit 1), credits running out (the run stops),
// and waiting out 429 and 503 answers as their Retry-After says.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { creditsUsed, describeCommand, fixtureDir, imageDir, jsonLines, uniqueImage } from './describe-support'

let env: AltTextEnv

beforeAll(async () => {
  env = await startAltTextEnv({ env: { ALTTEXT_FREE_CREDITS: '3' } })
})
afterAll(async () => {
  await env?.stop()
})

const vars = (key: string, url = env.service.url) => ({ ALTTEXT_URL: url, ALTTEXT_API_KEY: key })

describe('describe: usage errors exit 2 and send nothing', () => {
  const cases: [string, string[], string][] = [
    ['no inputs', [], 'give at least one image file, directory or URL'],
    ['an unknown option', ['--colour', 'red', '.'], "unknown option '--colour'"],
    ['a max length out of range', ['--max-length', '5', '.'], '--max-length must be at least 20'],
    ['a language that is no BCP 47 tag', ['--language', 'xx', '.'], '--language unknown language "xx"'],
    ['a language with "_"', ['--language', 'pt_BR', '.'], 'use pt-BR'],
    ['a style that does not exist', ['--style', 'poetic', '.'], '--style must be "descriptive" or "concise"'],
    ['eleven keywords', ['--keywords', 'a,b,c,d,e,f,g,h,i,j,k', '.'], '--keywords must have at most 10 entries'],
    ['a concurrency of 0', ['--concurrency', '0', '.'], '--concurrency must be between 1 and 64'],
    ['an unknown format', ['--format', 'xml', '.'], '--format must be jsonl, csv, json'],
    ['a path that does not exist', ['missing.png'], 'no such file or directory: missing.png'],
    ['a folder without images', ['empty'], 'no JPEG, PNG, GIF, WebP, AVIF or SVG images found in empty'],
    ['--restart without --output', ['--restart', '.'], '--restart needs --output'],
  ]
  for (const [what, args, message] of cases) {
    test(what, async () => {
      const dir = fixtureDir({ 'a.png': uniqueImage(), 'empty/readme.txt': 'no images here' })
      const before = env.ollama.chatRequests().length
      const result = await describeCommand(args, vars(env.key), dir)
      expect(result.code).toBe(2)
      expect(result.stderr).toContain(message)
      expect(result.stderr).toContain('alttext describe --help')
      expect(result.stdout).toBe('')
      expect(env.ollama.chatRequests().length).toBe(before)
    })
  }

  test('no API key at all names the variable', async () => {
    const result = await describeCommand(['.'], { ALTTEXT_URL: env.service.url }, fixtureDir({ 'a.png': uniqueImage() }))
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('ALTTEXT_API_KEY')
  })

  test('an output file that is not describe output is not overwritten', async () => {
    const dir = fixtureDir({ 'a.png': uniqueImage(), 'notes.csv': 'name,age\r\nx,1\r\n' })
    const result = await describeCommand(['.', '-o', 'notes.csv'], vars(env.key), dir)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--restart overwrites it')
    expect(readFileSync(join(dir, 'notes.csv'), 'utf8')).toBe('name,age\r\nx,1\r\n')
  })
})

describe('describe: the service refuses or is not there', () => {
  test('a refused key: exit 2 before any image is sent', async () => {
    const before = env.ollama.chatRequests().length
    const result = await describeCommand(
      ['.'],
      vars('alt_0000000000000000000000000000000000000000000000000000000000000000'),
      fixtureDir({ 'a.png': uniqueImage() }),
    )
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('answered 401')
    expect(result.stderr).toContain('Nothing was sent')
    expect(env.ollama.chatRequests().length).toBe(before)
  })

  test('nothing listening: exit 2 naming the URL', async () => {
    const closed = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
    const url = `http://127.0.0.1:${closed.port}`
    closed.stop(true)
    const result = await describeCommand(['.'], vars(env.key, url), fixtureDir({ 'a.png': uniqueImage() }))
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`cannot reach ${url}`)
  })
})

describe('describe: partial failure', () => {
  test('credits running out stop the run: exit 1, the rest not started, nothing charged past the quota', async () => {
    const { apiKey } = await env.service.api.register()
    const dir = imageDir(5)
    const result = await describeCommand(['.', '-o', 'alt.jsonl', '--concurrency', '1'], vars(apiKey), dir)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('5 images to do and 3 credits left')
    expect(result.stderr).toMatch(/failed img-003\.png: quota_exceeded: /)
    expect(result.stderr).toContain('stopping: no credit left this period')
    expect(result.stderr).toMatch(/^3 done, 1 failed, 1 not started in \d+s$/m)
    const records = jsonLines(readFileSync(join(dir, 'alt.jsonl'), 'utf8'))
    expect(records.filter((r) => r.alt_text !== undefined)).toHaveLength(3)
    expect(records.filter((r) => r.error?.code === 'quota_exceeded')).toHaveLength(1)
    expect(await creditsUsed(env.service.api, apiKey)).toBe(3)
  })
})

describe('describe: waiting', () => {
  test('429 rate_limited with Retry-After: the run waits, then every image succeeds', async () => {
    // The service's own limit is 60 a minute (a fixed fact), too slow for a test; a loopback proxy in
    // front of the real service answers the first upload as the limiter does, and passes the rest on.
    const { apiKey } = await env.service.api.register()
    const sent: number[] = []
    const proxy = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(request) {
        const url = new URL(request.url)
        if (url.pathname === '/api/alt-text') {
          sent.push(Date.now())
          if (sent.length === 1) {
            return Response.json(
              { error: { code: 'rate_limited', message: 'rate limit of 60 requests per 60 seconds exceeded; retry in 1 s', docs: 'x' } },
              { status: 429, headers: { 'retry-after': '1', 'ratelimit-limit': '60', 'ratelimit-remaining': '0', 'ratelimit-reset': '1' } },
            )
          }
        }
        return fetch(env.service.url + url.pathname + url.search, { method: request.method, headers: request.headers, body: await request.arrayBuffer() })
      },
    })
    try {
      const dir = imageDir(2)
      const result = await describeCommand(['.', '--concurrency', '1'], vars(apiKey, `http://127.0.0.1:${proxy.port}`), dir)
      expect(result.stderr).toContain('waiting 1 s (rate_limited) before sending again')
      expect(result.code).toBe(0)
      expect(jsonLines(result.stdout)).toHaveLength(2)
      expect(sent).toHaveLength(3)
      expect(sent[1]! - sent[0]!).toBeGreaterThanOrEqual(1000)
      expect(await creditsUsed(env.service.api, apiKey)).toBe(2)
    } finally {
      proxy.stop(true)
    }
  })
})

describe('describe: waiting for a busy model', () => {
  let busy: AltTextEnv
  beforeAll(async () => {
    // One model slot, a short deadline: of four uploads at once, those the queue cannot reach in time
    // get the service's own 503 overloaded with Retry-After.
    busy = await startAltTextEnv({ env: { ALTTEXT_MODEL_CONCURRENCY: '1' }, overrides: { generationDeadlineMs: 1500 }, ollama: { delayMs: 400 } })
  })
  afterAll(async () => {
    await busy?.stop()
  })

  test('503 overloaded is waited out as Retry-After says; every image ends with a result', async () => {
    const result = await describeCommand(['.', '--concurrency', '4'], { ALTTEXT_URL: busy.service.url, ALTTEXT_API_KEY: busy.key }, imageDir(4))
    expect(result.stderr).toMatch(/waiting \d+ s \(overloaded\) before sending again/)
    expect(result.code).toBe(0)
    expect(jsonLines(result.stdout)).toHaveLength(4)
  })
})
