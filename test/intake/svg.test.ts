// The SVG cleaner (src/intake/svg.ts) as a pure function: what it keeps, what it drops, what it
// refuses, and the size it reads. The raster itself is tested through the intake and the service.
import { describe, expect, test } from 'bun:test'
import { ImageFormatError } from '../../src/intake/image-format-error.ts'
import {
  DEFAULT_SVG_SIZE,
  isSelfContainedCss,
  MAX_SVG_DEPTH,
  MAX_SVG_DRAWN,
  MAX_SVG_ELEMENTS,
  sanitiseSvg,
  svgMarkup,
  svgRasterSize,
} from '../../src/intake/svg.ts'

const NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
const bytes = (markup: string): Uint8Array => new TextEncoder().encode(markup)
const clean = (markup: string): string => {
  const svg = sanitiseSvg(bytes(markup))
  return svgMarkup(svg, svg.width, svg.height)
}

function refusal(markup: string): ImageFormatError {
  try {
    sanitiseSvg(bytes(markup))
  } catch (error) {
    expect(error).toBeInstanceOf(ImageFormatError)
    return error as ImageFormatError
  }
  throw new Error('the SVG was accepted')
}

describe('happy: what is drawn stays', () => {
  test('shapes, gradients, text and local references are kept', () => {
    const markup = `<svg ${NS} width="40" height="20"><defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient></defs>
      <rect id="r" width="10" height="10" fill="url(#g)" style="stroke: url('#g')"/><use href="#r" x="12"/><use xlink:href="#r" x="24"/>
      <text x="1" y="18">Hello &amp; welcome</text><title>Logo</title></svg>`
    const out = clean(markup)
    expect(out).toContain('<linearGradient id="g">')
    expect(out).toContain('fill="url(#g)"')
    expect(out).toContain(`style="stroke: url('#g')"`)
    expect(out.match(/<use href="#r"/g)).toHaveLength(2)
    expect(out).toContain('Hello &amp; welcome')
    expect(out).toContain('<title>Logo</title>')
  })

  test.each([
    ['width and height', '<svg width="120" height="60"/>', { width: 120, height: 60 }],
    ['absolute units', '<svg width="1in" height="72pt"/>', { width: 96, height: 96 }],
    ['the viewBox alone', '<svg viewBox="0 0 640 480"/>', { width: 640, height: 480 }],
    ['a width and the viewBox ratio', '<svg width="100" viewBox="0,0,200,50"/>', { width: 100, height: 25 }],
    ['percentages fall back to the viewBox', '<svg width="100%" height="100%" viewBox="0 0 30 10"/>', { width: 30, height: 10 }],
    ['nothing at all: the default', '<svg/>', DEFAULT_SVG_SIZE],
  ])('intrinsic size from %s', (_, markup, size) => {
    const svg = sanitiseSvg(bytes(markup.replace('<svg', `<svg ${NS}`)))
    expect({ width: svg.width, height: svg.height }).toEqual(size)
  })

  test('the raster is the model size on its longest side, whatever the declared size; the markup says so', () => {
    const svg = sanitiseSvg(bytes(`<svg ${NS} width="16" height="8"><rect width="16" height="8"/></svg>`))
    expect(svgRasterSize(svg, 1024)).toEqual({ width: 1024, height: 512 })
    expect(svgMarkup(svg, 1024, 512)).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="1024" height="512" viewBox="0 0 16 8">/)
  })

  test('an SVG without the namespace declaration is taken as SVG', () => {
    expect(clean('<svg width="2" height="2"><circle r="1"/></svg>')).toContain('<circle r="1"/>')
  })
})

describe('security: nothing that loads or runs survives', () => {
  const loads = [
    ['<script>', '<script>alert(1)</script><script href="https://x.test/a.js"/>', /script|alert/],
    ['<foreignObject>', '<foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="https://x.test/"/></foreignObject>', /foreignObject|iframe|x\.test/],
    ['<image> over http', '<image href="http://127.0.0.1:9/a.png" width="9" height="9"/>', /image|127\.0\.0\.1/],
    ['<image> of a file', '<image xlink:href="file:///etc/passwd"/>', /image|passwd/],
    ['<feImage>', '<filter id="f"><feImage href="/etc/hostname"/></filter>', /feImage|hostname/],
    ['an external <use>', '<use href="other.svg#a"/><use xlink:href="https://x.test/s.svg#b"/>', /other\.svg|x\.test/],
    ['a relative path', '<use href="../secret.svg#x"/>', /secret/],
    ['an external url() in an attribute', '<rect fill="url(https://x.test/p.svg#g)" mask="url(file:///etc/passwd)"/>', /x\.test|passwd/],
    ['an external url() in a style attribute', `<rect style="fill: url('http://x.test/a.svg#g')"/>`, /x\.test/],
    ['@import in a style sheet', '<style>@import url(https://x.test/a.css); rect { fill: red }</style>', /x\.test|@import/],
    ['a url() in a style sheet', '<style><![CDATA[rect { fill: url(/etc/passwd) }]]></style>', /passwd/],
    ['a CSS escape that spells url(', '<style>rect { fill: u\\72l(https://x.test/) }</style>', /x\.test/],
    ['event handlers', '<rect onload="alert(1)" onclick="x()"/>', /onload|onclick|alert/],
    ['an animation that sets an href', '<a><set attributeName="href" to="https://x.test/"/></a>', /set|x\.test/],
    ['a link', '<a href="https://x.test/"><rect width="1" height="1"/></a>', /x\.test/],
    ['xml:base and foreign attributes', '<g xml:base="https://x.test/" inkscape:label="l" xmlns:inkscape="urn:i"/>', /x\.test|inkscape/],
  ] as const

  test.each(loads)('%s is dropped', (_, inner, forbidden) => {
    const out = clean(`<svg ${NS} width="10" height="10">${inner}<rect width="1" height="1"/></svg>`)
    expect(out).not.toMatch(forbidden)
    expect(out).toContain('<rect width="1" height="1"/>')
  })

  test('a processing instruction that would load a style sheet is dropped', () => {
    expect(clean(`<?xml-stylesheet href="https://x.test/a.css"?><svg ${NS}/>`)).not.toContain('x.test')
  })

  test.each([
    ['XXE (an external entity)', `<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg ${NS}><text>&x;</text></svg>`],
    [
      'billion laughs',
      `<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><svg ${NS}><text>&c;</text></svg>`,
    ],
    ['a DOCTYPE without entities', `<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg ${NS}/>`],
  ])('%s is refused', (_, markup) => {
    const error = refusal(markup)
    expect(error.message).toMatch(/DOCTYPE/)
  })

  test('an entity never declared is malformed XML', () => {
    expect(refusal(`<svg ${NS}><text>&nbsp;</text></svg>`).message).toMatch(/^the image is truncated or corrupt \(SVG is not well-formed XML/)
  })

  test('the CSS check', () => {
    expect(isSelfContainedCss('fill: url(#a); stroke: url( "#b" )')).toBe(true)
    expect(isSelfContainedCss('fill: url(a.svg#a)')).toBe(false)
    expect(isSelfContainedCss('@IMPORT "x.css"')).toBe(false)
    expect(isSelfContainedCss('background: image-set("a.png" 1x)')).toBe(false)
    expect(isSelfContainedCss('fill: \\75rl(x)')).toBe(false)
  })
})

describe('error: bombs and broken files are refused with a reason', () => {
  test(`more than ${MAX_SVG_ELEMENTS} elements`, () => {
    const markup = `<svg ${NS}>${'<rect/>'.repeat(10_000)}</svg>`
    expect(refusal(markup).message).toBe(`the image is an SVG of more than ${MAX_SVG_ELEMENTS} elements, over the limit for SVG`)
  })

  test('10 000 levels of nesting', () => {
    const markup = `<svg ${NS}>${'<g>'.repeat(10_000)}${'</g>'.repeat(10_000)}</svg>`
    expect(refusal(markup).message).toBe(`the image is an SVG nested more than ${MAX_SVG_DEPTH} levels deep, over the limit for SVG`)
  })

  test('<use> chains that multiply', () => {
    // Each level draws the one before ten times: 10^6 elements from 60.
    let defs = '<rect id="l0" width="1" height="1"/>'
    for (let level = 1; level <= 6; level++) defs += `<g id="l${level}">${`<use href="#l${level - 1}"/>`.repeat(10)}</g>`
    const error = refusal(`<svg ${NS}><defs>${defs}</defs><use href="#l6"/></svg>`)
    expect(error.message).toBe(`the image is an SVG that draws more than ${MAX_SVG_DRAWN} elements through <use> references, over the limit for SVG`)
  })

  test('a <use> cycle', () => {
    expect(refusal(`<svg ${NS}><g id="a"><use href="#b"/></g><g id="b"><use href="#a"/></g></svg>`).message).toMatch(/cycle/)
  })

  test.each([
    ['unclosed', `<svg ${NS}><g>`],
    ['two roots', `<svg ${NS}/><svg ${NS}/>`],
    ['not UTF-8', '<svg>\xff\xfe</svg>'],
  ])('%s is corrupt', (_, markup) => {
    const data = markup === '<svg>\xff\xfe</svg>' ? new Uint8Array([...bytes('<svg>'), 0xff, 0xfe, ...bytes('</svg>')]) : bytes(markup)
    try {
      sanitiseSvg(data)
      throw new Error('accepted')
    } catch (error) {
      expect((error as ImageFormatError).reason).toBe('corrupt')
    }
  })

  test('a root other than <svg> is refused', () => {
    expect(refusal('<html xmlns="http://www.w3.org/1999/xhtml"/>').message).toMatch(/root is <html>/)
  })
})
