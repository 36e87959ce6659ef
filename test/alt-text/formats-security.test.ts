// An SVG can name other resources (images, style sheets, other SVGs, entities, files): none is ever
// loaded. A loopback server that every such reference points at counts its hits, which stay at zero,
// through the real service on both model backends.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { base64, type FormatEnv, startFormatEnvs, utf8 } from './formats-support'

let envs: FormatEnv[]
let watched: ReturnType<typeof Bun.serve>
const hits: string[] = []

beforeAll(async () => {
  // Plain HTTP on loopback, the kind of address an SVG would aim at to reach inside the network.
  watched = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      hits.push(new URL(request.url).pathname)
      return new Response('<svg xmlns="http://www.w3.org/2000/svg"/>', { headers: { 'content-type': 'image/svg+xml' } })
    },
  })
  envs = await startFormatEnvs()
})
afterAll(async () => {
  await Promise.all(envs.map((env) => env.stop()))
  await watched.stop(true)
})
beforeEach(() => {
  for (const env of envs) env.reset()
  hits.length = 0
})

const each = (name: string, run: (env: FormatEnv) => Promise<void>) => {
  for (const index of [0, 1]) test(`${name} (${['Ollama', 'OpenAI-compatible'][index]})`, () => run(envs[index]!))
}

/** An SVG that reaches for `base` in every way SVG and CSS have, around a drawing of its own. */
function reachingSvg(base: string): Uint8Array<ArrayBuffer> {
  return utf8(`<?xml version="1.0"?>
<?xml-stylesheet type="text/css" href="${base}/pi.css"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="64" height="64">
  <style>@import url(${base}/import.css); @import "${base}/import2.css"; rect.b { fill: url(${base}/css-url.svg#g) }</style>
  <image href="${base}/image-href.png" width="64" height="64"/>
  <image xlink:href="${base}/image-xlink.png" width="64" height="64"/>
  <use href="${base}/use.svg#a"/><use xlink:href="${base}/use-xlink.svg#a"/>
  <filter id="f"><feImage href="${base}/feimage.png"/></filter>
  <rect class="b" width="10" height="10" fill="url(${base}/fill.svg#g)" style="stroke: url('${base}/style.svg#s')" filter="url(#f)"/>
  <foreignObject width="64" height="64"><img xmlns="http://www.w3.org/1999/xhtml" src="${base}/foreign.png"/></foreignObject>
  <script href="${base}/script.js"/><script>fetch('${base}/inline-script')</script>
  <a href="${base}/link"><circle cx="32" cy="32" r="20" fill="#c00"/></a>
  <set attributeName="href" to="${base}/set"/>
</svg>`)
}

describe('security: an SVG loads nothing', () => {
  test('the watched server counts what reaches it (the control)', async () => {
    await fetch(`${watched.url}control`)
    expect(hits).toEqual(['/control'])
  })

  each('references to a loopback server by <image>, xlink:href, <use>, CSS url() and @import: 200, zero hits', async (env) => {
    const svg = reachingSvg(`http://127.0.0.1:${watched.port}`)
    for (const res of [await env.generate({ image_base64: base64(svg) }), await env.generate({ image_url: env.serve(svg, 'image/svg+xml') })]) {
      expect(res.status).toBe(200)
      expect(res.body.image.format).toBe('svg')
    }
    expect(hits).toEqual([])
    expect(env.images()[0]?.format).toBe('png')
  })

  each('relative and file: references to /etc/passwd: 200, a PNG of the drawing and nothing of the file', async (env) => {
    const svg = utf8(`<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32">
      <image href="file:///etc/passwd" width="32" height="32"/><image href="/etc/passwd" width="32" height="32"/>
      <use href="../../../../etc/passwd#x"/><rect width="8" height="8" fill="url(file:///etc/passwd#g)"/>
      <text x="0" y="20">logo</text></svg>`)
    const res = await env.generate({ image_base64: base64(svg) })
    expect(res.status).toBe(200)
    const sent = env.images()
    expect(sent).toHaveLength(1)
    expect(sent[0]!.format).toBe('png')
    expect(env.prompts()).not.toContain('root:')
    expect(Buffer.from(sent[0]!.bytes).includes('root:')).toBe(false)
  })

  each('an external entity (XXE) for /etc/passwd or the loopback server: 400 invalid_image, nothing loaded or charged', async (env) => {
    const before = await env.creditsUsed()
    for (const target of ['file:///etc/passwd', `http://127.0.0.1:${watched.port}/xxe`]) {
      const svg = utf8(`<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "${target}">]><svg xmlns="http://www.w3.org/2000/svg"><text>&x;</text></svg>`)
      const res = await env.generate({ image_base64: base64(svg) })
      expect(res.status).toBe(400)
      expect(res.body.error).toMatchObject({ code: 'invalid_image', message: expect.stringMatching(/SVG with a DOCTYPE/) })
      expect(res.text).not.toContain('root:')
    }
    expect(hits).toEqual([])
    expect(env.images()).toHaveLength(0)
    expect(await env.creditsUsed()).toBe(before)
  })

  each('a script in an SVG never runs: the drawing is described, the script dropped', async (env) => {
    const svg = utf8(
      `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" onload="fetch('http://127.0.0.1:${watched.port}/onload')"><script>fetch('http://127.0.0.1:${watched.port}/script')</script><rect width="16" height="16"/></svg>`,
    )
    expect((await env.generate({ image_base64: base64(svg) })).status).toBe(200)
    expect(hits).toEqual([])
  })
})
