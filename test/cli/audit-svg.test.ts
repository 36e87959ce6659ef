// `alttext audit` on a page whose logo is an SVG file: the service used to refuse it (invalid_image,
// "found: svg"); now it is an image to describe like any other, and --fix writes its alt text.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { audit, readJson } from './audit-support'

const LOGO_ALT = 'The Harbour Kite Club logo: a red kite over blue waves.'
let env: AltTextEnv
let dir: string

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: { reply: LOGO_ALT } })
  dir = mkdtempSync(join(tmpdir(), 'alttext-audit-svg-'))
})
afterAll(async () => {
  await env.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('an SVG logo', () => {
  test('is described by the service and its alt text written; the model got a PNG', async () => {
    writeFileSync(
      join(dir, 'logo.svg'),
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40"><path d="M10 30 L30 5 L50 30 Z" fill="#c00"/><text x="60" y="28">HKC</text></svg>',
    )
    writeFileSync(join(dir, 'index.html'), '<html lang="en"><body><header><img src="logo.svg" width="120" height="40"></header></body></html>')
    const res = await audit(['index.html', '--fix', 'fixed', '--json', 'report.json'], { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }, dir)
    expect(res.code).toBe(0)
    expect(res.stdout).toContain('1 suggested (0 decorative), 0 failed')
    const [image] = readJson(join(dir, 'report.json')).pages[0].images
    expect(image.error).toBeNull()
    expect(image.suggestion.alt).toBe(LOGO_ALT)
    expect(readFileSync(join(dir, 'fixed', 'index.html'), 'utf8')).toContain(`<img alt="${LOGO_ALT}" src="logo.svg" width="120" height="40">`)
    expect(env.ollama.requests.flatMap((request) => request.images).map((sent) => sent.format)).toEqual(['png'])
  })
})
