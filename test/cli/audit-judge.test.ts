// `alttext audit --judge` against the real service and the fake model judging like a
// model would (see verdict-reply.ts): alt texts that pass the lint are sent to POST /api/alt-text/review
// with their page context; verdicts other than ok become findings with reasons and a suggestion, which
// --fix writes; a second run gets cached verdicts for free.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Ajv from 'ajv-draft-04'
import addFormats from 'ajv-formats'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { REPO_ROOT } from '../support/process'
import { judgedAltText, structuredJudge } from '../support/verdict-reply'
import { audit, FIXTURE_SITE, MODEL, readJson } from './audit-support'

let env: AltTextEnv
let client: Record<string, string>
let dir: string

const PAGE = `<!doctype html>
<html lang="en"><body>
<h1>Harbour Kite Club</h1>
<p>Our spring outing on the north beach.</p>
<img src="img/kite.jpg" alt="boat">
<img src="img/team.jpg" alt="The club's twelve members line up with their kites.">
<img src="img/logo.png" alt="kite, kites, kite club, beach, cheap kites">
<img src="img/kite.jpg" alt="IMG_2041.JPG">
</body></html>
`

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: { ...MODEL, structured: structuredJudge } })
  client = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }
  dir = mkdtempSync(join(tmpdir(), 'alttext-judge-test-'))
  mkdirSync(join(dir, 'site'))
  cpSync(join(FIXTURE_SITE, 'img'), join(dir, 'site', 'img'), { recursive: true })
  writeFileSync(join(dir, 'site', 'page.html'), PAGE)
}, 60_000)
afterAll(async () => {
  await env.stop()
  rmSync(dir, { recursive: true, force: true })
})
beforeEach(() => env.ollama.reset())

const reviews = () => env.ollama.chatRequests().filter((body) => judgedAltText({ prompt: String(body.messages?.at(-1)?.content ?? '') }) !== null)
const byLine = (report: any) => Object.fromEntries(report.pages[0].images.map((image: any) => [image.line, image]))

describe('--judge', () => {
  test('judges each alt text that passes the lint, with its context; verdicts other than ok are findings, and --fix writes them', async () => {
    const res = await audit(['site', '--judge', '--fix', 'fixed', '--json', 'report.json', '-o', 'report.html'], client, dir)
    expect(res.stderr).not.toContain('judge: upstream')
    expect(res.code).toBe(0)
    // Three alt texts pass the lint; the file name does not (it gets a new alt from /api/alt-text instead).
    const judged = reviews()
    expect(judged.map((body) => judgedAltText({ prompt: String(body.messages!.at(-1)!.content) })).sort()).toEqual([
      "The club's twelve members line up with their kites.",
      'boat',
      'kite, kites, kite club, beach, cheap kites',
    ])
    expect(String(judged[0]!.messages!.at(-1)!.content)).toContain('<page_context>')
    expect(String(judged[0]!.messages!.at(-1)!.content)).toContain('north beach')

    const lines = byLine(readJson(join(dir, 'report.json')))
    expect(lines[5]).toMatchObject({
      status: 'poor',
      issues: ['judge: needs_fix (too vague for this image)'],
      verdict: {
        verdict: 'needs_fix',
        reasons: 'too vague for this image',
        suggested_alt_text: 'Sailing boats moored in a small harbour at sunset.',
        cached: false,
      },
      suggestion: { alt: 'Sailing boats moored in a small harbour at sunset.' },
      written: true,
    })
    expect(lines[6]).toMatchObject({ status: 'ok', verdict: { verdict: 'ok', suggested_alt_text: null }, suggestion: null })
    expect(lines[7]).toMatchObject({ status: 'poor', verdict: { verdict: 'keyword_stuffed' }, suggestion: { alt: 'Sailing boats in a small harbour.' } })
    expect(lines[8]).toMatchObject({ status: 'poor', issues: ['looks like a file name'] })
    expect(lines[8].verdict).toBeUndefined()

    const fixed = readFileSync(join(dir, 'fixed', 'page.html'), 'utf8')
    expect(fixed).toContain('<img src="img/kite.jpg" alt="Sailing boats moored in a small harbour at sunset.">')
    expect(fixed).toContain('<img src="img/logo.png" alt="Sailing boats in a small harbour.">')
    expect(fixed).toContain(`<img src="img/team.jpg" alt="The club's twelve members line up with their kites.">`)
    const html = readFileSync(join(dir, 'report.html'), 'utf8')
    expect(html).toContain('judge: needs_fix (too vague for this image)')
  }, 60_000)

  test('a second run gets the same verdicts from the cache: no model call for them, no credit', async () => {
    const before = (await env.service.api.get('/api/usage', env.key)).body.credits.used
    const res = await audit(['site', '--judge', '--json', 'again.json', '-o', 'again.html'], client, dir)
    expect(res.code).toBe(0)
    expect(reviews()).toHaveLength(0)
    expect((await env.service.api.get('/api/usage', env.key)).body.credits.used).toBe(before)
    expect(byLine(readJson(join(dir, 'again.json')))[5].verdict).toMatchObject({ verdict: 'needs_fix', cached: true })
  }, 60_000)

  test('verdicts reach SARIF (a rule per verdict, valid 2.1.0) and the review CSV', async () => {
    const res = await audit(['site', '--judge', '--sarif', 'judged.sarif', '--review', 'judged.csv'], client, dir)
    expect(res.code).toBe(0)
    const sarif = readJson(join(dir, 'judged.sarif'))
    const ajv = new Ajv({ allErrors: true, strict: false })
    addFormats(ajv)
    const validate = ajv.compile(readJson(join(REPO_ROOT, 'test', 'fixtures', 'sarif', 'sarif-schema-2.1.0.json')))
    expect(validate(sarif), JSON.stringify(validate.errors)).toBe(true)
    const byRule = Object.fromEntries(sarif.runs[0].results.map((result: any) => [result.ruleId, result.locations[0].physicalLocation.region.startLine]))
    expect(byRule).toEqual({ 'alt-judged-needs-fix': 5, 'alt-judged-keyword-stuffed': 7, 'alt-poor': 8 })
    const csv = readFileSync(join(dir, 'judged.csv'), 'utf8')
    expect(csv).toContain(',judged needs_fix,')
    expect(csv).toContain(',judged keyword_stuffed,')
  }, 60_000)

  test('--check refuses --judge: a fresh verdict costs a credit and the gate spends none', async () => {
    const res = await audit(['site', '--check', '--judge'], {}, dir)
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('--judge')
    expect(env.ollama.chatRequests()).toHaveLength(0)
  })

  test('--judge with --dry-run is a usage error (exit 2), nothing sent', async () => {
    const res = await audit(['site', '--judge', '--dry-run'], {}, dir)
    expect(res.code).toBe(2)
    expect(res.stderr).toContain('--judge')
    expect(env.ollama.chatRequests()).toHaveLength(0)
  })
})
