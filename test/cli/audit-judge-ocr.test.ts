// `alttext audit --judge` with the OCR (an in-process stand-in): an alt text that passes the lint but
// leaves out the text of an image mostly of text is a finding, with the service's reason and a
// suggestion that carries the text, though the model judged it ok.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { reading, standInReader, uniqueImage } from '../alt-text/image-text-support'
import { type AltTextEnv, startAltTextEnv } from '../support/alt-text-env'
import { structuredJudge } from '../support/verdict-reply'
import { audit, readJson } from './audit-support'

let env: AltTextEnv
let dir: string
const reader = standInReader()

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: { structured: structuredJudge }, overrides: { textReader: reader } })
  dir = mkdtempSync(join(tmpdir(), 'alttext-judge-ocr-test-'))
  mkdirSync(join(dir, 'site'))
  const poster = uniqueImage()
  reader.set(poster.width, reading(['Keep calm', 'and carry on'], 0.5))
  const sign = uniqueImage()
  reader.set(sign.width, reading(['Keep calm', 'and carry on'], 0.5))
  writeFileSync(join(dir, 'site', 'poster.png'), poster.png)
  writeFileSync(join(dir, 'site', 'sign.png'), sign.png)
  writeFileSync(
    join(dir, 'site', 'page.html'),
    `<!doctype html>
<html lang="en"><body>
<h1>Posters</h1>
<img src="poster.png" alt="A red poster with a crown at the top.">
<img src="sign.png" alt="A red poster reading &quot;Keep calm and carry on&quot;.">
</body></html>
`,
  )
}, 60_000)
afterAll(async () => {
  await env.stop()
  rmSync(dir, { recursive: true, force: true })
})

test('alt text leaving out the text the image shows is a finding with the reason and a suggestion that has the text', async () => {
  const res = await audit(['site', '--judge', '--json', 'report.json'], { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }, dir)
  expect(res.stderr).not.toContain('judge: upstream')
  const report = readJson(join(dir, 'report.json')) as {
    pages: { images: { status: string; issues: string[]; suggestion: { alt: string } | null; verdict?: { verdict: string } }[] }[]
  }
  const [poster, sign] = report.pages[0]!.images
  expect(poster!.status).toBe('poor')
  expect(poster!.issues).toEqual(['judge: needs_fix (leaves out text the image shows (see text_in_image))'])
  expect(poster!.suggestion!.alt).toBe('A red poster with a crown at the top: "Keep calm and carry on".')
  // The one that has the text stays ok.
  expect(sign!.verdict!.verdict).toBe('ok')
  expect(sign!.status).toBe('ok')
})
