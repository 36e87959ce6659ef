// `alttext audit --fix --long-description` on HTML, against the real service with the fake model: a
// complex image gets its long description in a hidden element right after its tag, which the image
// points to with aria-describedby (kept beside ids it pointed to before); a simple image gets nothing;
// every other byte of the page is unchanged; the description is escaped plain text, also in a page
// that is not UTF-8; a page fixed before is not given a second one.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startAltTextEnv, type AltTextEnv } from '../support/alt-text-env'
import { LONG_DESCRIPTION } from '../support/fake-ollama'
import { attr, audit, MODEL, REPLIES, readJson, siteCopy } from './audit-support'

let env: AltTextEnv
let client: Record<string, string>
/** kite.jpg (320 px) is the "chart" here; logo.png (64 px) is simple. */
const COMPLEX_WIDTH = 320

beforeAll(async () => {
  env = await startAltTextEnv({ ollama: { ...MODEL, complex: (image) => image.width === COMPLEX_WIDTH } })
  client = { ALTTEXT_URL: env.service.url, ALTTEXT_API_KEY: env.key }
}, 60_000)
afterAll(() => env.stop())

const PAGE = [
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sales</title></head><body>',
  '<figure><IMG SRC="img/kite.jpg" class=chart /><figcaption>Sales in 2024</figcaption></figure>',
  '<p>Our logo <img src=\'img/logo.png\' aria-describedby="note"> here.</p><p id="note">Since 1990.</p>',
  '</body></html>',
  '',
].join('\n')

/** The page as --fix should write it: the alt attributes, one aria-describedby and one hidden span, nothing else. */
function expected(longDescription: string): string {
  return PAGE.replace(
    '<IMG SRC="img/kite.jpg" class=chart />',
    `<IMG alt=${attr(REPLIES[320]!)} aria-describedby="alttext-long-description-1" SRC="img/kite.jpg" class=chart /><span id="alttext-long-description-1" hidden>${longDescription}</span>`,
  ).replace(`<img src='img/logo.png' aria-describedby="note">`, `<img alt=${attr(REPLIES[64]!)} src='img/logo.png' aria-describedby="note">`)
}

describe('audit --fix --long-description', () => {
  test('a complex image points at its long description; a simple one gets none; every other byte as it was', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(join(copy.site, 'sales.html'), PAGE)
      const res = await audit(['site/sales.html', '--long-description', '--fix', 'fixed', '--json', 'r.json', '-o', 'r.html'], client, copy.dir)
      expect(res.code).toBe(0)
      expect(readFileSync(join(copy.dir, 'fixed', 'sales.html'), 'utf8')).toBe(expected(LONG_DESCRIPTION))
      const images = readJson(join(copy.dir, 'r.json')).pages[0].images
      expect(images[0].suggestion.long_description).toBe(LONG_DESCRIPTION)
      expect(images[1].suggestion.long_description).toBeUndefined()
      // Fixing the fixed copy again (beside its images) adds no second description.
      cpSync(join(copy.site, 'img'), join(copy.dir, 'fixed', 'img'), { recursive: true })
      env.ollama.behave({ reply: 'A bar chart of club sales in 2024, doubling by June.' })
      const again = await audit(
        ['fixed/sales.html', '--long-description', '--overwrite', '--style', 'concise', '--fix', 'fixed2', '-o', 'r2.html'],
        client,
        copy.dir,
      )
      expect(again.code).toBe(0)
      const twice = readFileSync(join(copy.dir, 'fixed2', 'sales.html'), 'utf8')
      expect(twice).toContain('alt="A bar chart of club sales in 2024, doubling by June."')
      expect(twice.match(/alttext-long-description-/g)).toHaveLength(2)
    } finally {
      env.ollama.behave({ reply: MODEL.reply })
      copy.cleanup()
    }
  })

  test('an image that already points elsewhere keeps that id beside the new one', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(join(copy.site, 'p.html'), '<p><img src="img/kite.jpg" aria-describedby="credit"></p><p id="credit">Photo: club</p>\n')
      const res = await audit(['site/p.html', '--long-description', '--fix', 'fixed', '-o', 'r.html'], client, copy.dir)
      expect(res.code).toBe(0)
      expect(readFileSync(join(copy.dir, 'fixed', 'p.html'), 'utf8')).toContain(
        `<img alt=${attr(REPLIES[320]!)} src="img/kite.jpg" aria-describedby="credit alttext-long-description-1"><span id="alttext-long-description-1" hidden>`,
      )
    } finally {
      copy.cleanup()
    }
  })

  test('without --long-description nothing is asked and nothing but alt is written', async () => {
    const copy = siteCopy()
    try {
      writeFileSync(join(copy.site, 'sales.html'), PAGE)
      const res = await audit(['site/sales.html', '--fix', 'fixed', '-o', 'r.html'], client, copy.dir)
      expect(res.code).toBe(0)
      const fixed = readFileSync(join(copy.dir, 'fixed', 'sales.html'), 'utf8')
      expect(fixed).not.toContain('alttext-long-description')
      expect(fixed).toContain(`<IMG alt=${attr(REPLIES[320]!)} SRC="img/kite.jpg" class=chart />`)
    } finally {
      copy.cleanup()
    }
  })
})

describe('audit --fix --long-description: security', () => {
  test('markup the service left as text (& < > ") is escaped: no element or attribute is injected', async () => {
    // The service makes the long description plain text; what is left of markup-like characters stays text.
    env.ollama.behave({ longDescription: 'Sales rose by 5 < 7 & "x" > y in 2024, then </span><script>alert(1)</script> fell.' })
    const copy = siteCopy()
    try {
      writeFileSync(join(copy.site, 'sales.html'), PAGE)
      const res = await audit(['site/sales.html', '--long-description', '--fix', 'fixed', '--json', 'r.json', '-o', 'r.html'], client, copy.dir)
      expect(res.code).toBe(0)
      const fixed = readFileSync(join(copy.dir, 'fixed', 'sales.html'), 'utf8')
      const text = readJson(join(copy.dir, 'r.json')).pages[0].images[0].suggestion.long_description as string
      expect(text).not.toContain('<script')
      expect(fixed).toBe(expected(text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')))
      expect(fixed).not.toContain('<script')
      expect(fixed.match(/<\/span>/g)).toHaveLength(1)
    } finally {
      env.ollama.behave({ longDescription: LONG_DESCRIPTION })
      copy.cleanup()
    }
  })

  test('a page that is not UTF-8: non-ASCII in the description as character references', async () => {
    env.ollama.behave({ longDescription: 'Umsätze 2024 in Euro: Januar 12, Februar 15; danach stiegen sie.' })
    const copy = siteCopy()
    try {
      const page = '<html><head><meta charset="windows-1252"></head><body><p>Gr\u00fc\u00dfe <img src="img/kite.jpg"></p></body></html>\n'
      writeFileSync(join(copy.site, 'latin.html'), Buffer.from(page, 'latin1'))
      const res = await audit(['site/latin.html', '--long-description', '--fix', 'fixed', '-o', 'r.html'], client, copy.dir)
      expect(res.code).toBe(0)
      const fixed = readFileSync(join(copy.dir, 'fixed', 'latin.html'))
      expect(fixed.toString('latin1')).toContain('hidden>Ums&#228;tze 2024 in Euro: Januar 12, Februar 15; danach stiegen sie.</span>')
      // The page's own bytes (ü, ß in windows-1252) are as they were.
      expect(fixed.includes(Buffer.from('Gr\u00fc\u00dfe', 'latin1'))).toBe(true)
    } finally {
      env.ollama.behave({ longDescription: LONG_DESCRIPTION })
      copy.cleanup()
    }
  })
})
