// The bad input of the new formats, through the real service on both model backends: SVG bombs and an
// AVIF that lies about its size are each a 400 in the contract's shape, the model is never asked,
// nothing is charged, and the process's memory stays bounded.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { MAX_SVG_DEPTH, MAX_SVG_ELEMENTS } from '../../src/intake/svg'
import { makeAvif, truncate, withAvifSize } from '../support/images'
import { base64, type FormatEnv, startFormatEnvs, utf8 } from './formats-support'

let envs: FormatEnv[]
beforeAll(async () => {
  envs = await startFormatEnvs()
})
afterAll(() => Promise.all(envs.map((env) => env.stop())))
beforeEach(() => {
  for (const env of envs) env.reset()
})

const SVG = 'xmlns="http://www.w3.org/2000/svg"'
const laughs = (() => {
  let entities = '<!ENTITY l0 "ha">'
  for (let level = 1; level <= 9; level++) entities += `<!ENTITY l${level} "${`&l${level - 1};`.repeat(10)}">`
  return `<?xml version="1.0"?><!DOCTYPE svg [${entities}]><svg ${SVG}><text>&l9;</text></svg>`
})()
const useChain = (() => {
  let defs = '<rect id="u0" width="1" height="1"/>'
  for (let level = 1; level <= 8; level++) defs += `<g id="u${level}">${`<use href="#u${level - 1}"/>`.repeat(10)}</g>`
  return `<svg ${SVG} width="10" height="10"><defs>${defs}</defs><use href="#u8"/></svg>`
})()

/** Each bad file, and what its refusal says. */
async function badInputs(): Promise<[string, Uint8Array, RegExp][]> {
  const avif = await makeAvif(64, 48)
  return [
    [
      'an SVG 100000×100000 by width and height',
      utf8(`<svg ${SVG} width="100000" height="100000"><rect width="9" height="9"/></svg>`),
      /100000×100000 pixels, over the limit of/,
    ],
    [
      'an SVG 100000×100000 by its viewBox',
      utf8(`<svg ${SVG} viewBox="0 0 100000 100000"><rect width="9" height="9"/></svg>`),
      /100000×100000 pixels, over the limit of/,
    ],
    [
      'an SVG nested 10 000 levels deep',
      utf8(`<svg ${SVG}>${'<g>'.repeat(10_000)}${'</g>'.repeat(10_000)}</svg>`),
      new RegExp(`nested more than ${MAX_SVG_DEPTH} levels`),
    ],
    [
      'an SVG of 10 000 elements',
      utf8(`<svg ${SVG}>${'<rect width="1" height="1"/>'.repeat(10_000)}</svg>`),
      new RegExp(`more than ${MAX_SVG_ELEMENTS} elements`),
    ],
    ['an SVG of entities that expand a billion times', utf8(laughs), /SVG with a DOCTYPE/],
    ['an SVG whose <use> chain draws 10^8 rectangles', utf8(useChain), /draws more than \d+ elements through <use>/],
    ['an SVG that is not well-formed', utf8(`<svg ${SVG}><g></svg>`), /^the image is truncated or corrupt \(SVG is not well-formed XML/],
    ['an AVIF whose header says 100000×100000', withAvifSize(avif, 100_000, 100_000), /100000×100000 pixels, over the limit of/],
    ['an AVIF whose header says 640×480 for a 64×48 picture', withAvifSize(avif, 640, 480), /^the image is truncated or corrupt/],
    ['an AVIF whose header says 64×48 for a 4000×4000 picture', withAvifSize(await makeAvif(4000, 4000), 64, 48), /^the image is truncated or corrupt/],
    ['an AVIF cut in half', truncate(avif, 0.5), /^the image is truncated or corrupt/],
  ]
}

const each = (name: string, run: (env: FormatEnv) => Promise<void>) => {
  for (const index of [0, 1]) test(`${name} (${['Ollama', 'OpenAI-compatible'][index]})`, () => run(envs[index]!))
}

describe('error: SVG bombs and lying AVIFs', () => {
  each('each is a 400 (invalid_image uploaded, invalid_image_url fetched), the model never asked, nothing charged, memory bounded', async (env) => {
    const inputs = await badInputs()
    const before = await env.creditsUsed()
    const rssBefore = process.memoryUsage().rss
    let rssPeak = rssBefore
    for (const [name, bytes, message] of inputs) {
      const uploaded = await env.generate({ image_base64: base64(bytes) })
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
      expect({ name, status: uploaded.status, code: uploaded.body.error?.code }).toEqual({ name, status: 400, code: 'invalid_image' })
      expect(uploaded.body.error.message).toMatch(message)
      const fetched = await env.generate({ image_url: env.serve(bytes) })
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss)
      expect({ name, status: fetched.status, code: fetched.body.error?.code }).toEqual({ name, status: 400, code: 'invalid_image_url' })
      expect(fetched.body.error.message).toMatch(message)
    }
    expect(env.images()).toHaveLength(0)
    expect(await env.creditsUsed()).toBe(before)
    // A bomb that got as far as a decoder would take hundreds of megabytes (10^10 pixels; 10^8 shapes).
    expect(rssPeak - rssBefore).toBeLessThan(200 * 1024 * 1024)
  })
})
